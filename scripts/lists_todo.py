#!/usr/bin/env python3
"""Which models of a list a resumable run still has to do: the names given, less those with an
accuracy row (with --experiments, a row of each experiment named: the side-by-side table needs
its timings too) for every backend named in the result CSVs in a folder or below it, less those
whose export failed in one of the zoos' indexes (their reason is there; exporting again would
fail again), and less those an inference run skips without a row (only_training,
skip.test.inference in the suite yaml: tts_angular and yolov3 were exported and run for nothing
on 2026-12-02d, and would have been again in every call), and with --device less those the
exporter skips on that device (skip.all, skip.device.DEVICE: the side-by-side table has no zoo
index to read them from). Used by scripts/gpu-lists.sh's `stream` part between device calls, and
by scripts/gpu-check.sh's HF_TABLE_NEXT for the side-by-side table's next models.

    lists_todo.py --suite SUITE --backends jit,aot_inductor --results DIR [--results DIR ...]
                  [--experiments accuracy,performance] [--zoo DIR ...] [--device DEVICE]
                  [--suites-dir DIR] NAME...

Prints the names left, one a line, in the order given. Exit status 0; 2 on a usage error.
"""

import argparse
import csv
import glob
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
from zoo_export.manifest import load_index  # noqa: E402  (the exporter's own readers)
from zoo_export.suite_config import SuiteConfig  # noqa: E402


def rows_by_backend(results, suite, experiment="accuracy"):
    """{backend: {names with a row}} from SUITE_*_EXPERIMENT.csv in RESULTS or any folder below
    it (the stream's pipelines write a folder each)."""
    done = {}
    for path in glob.glob(os.path.join(results, "**", f"{suite}_*_{experiment}.csv"), recursive=True):
        with open(path, newline="", encoding="utf-8") as f:
            for row in csv.DictReader(f):
                if row.get("suite", suite) == suite and row.get("name"):
                    done.setdefault(row.get("backend", ""), set()).add(row["name"])
    return done


def failed_exports(zoos, suite):
    return {entry.get("name") for zoo in zoos for entry in load_index(zoo)["models"]
            if entry.get("suite") == suite and entry.get("status") == "failed"}


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suite", required=True)
    parser.add_argument("--backends", required=True, help="comma-separated; a model is done with a row for each")
    parser.add_argument("--results", required=True, action="append",
                        help="folder of zoobench's result CSVs (repeatable: rows in any count)")
    parser.add_argument("--experiments", default="accuracy",
                        help="comma-separated, of accuracy and performance: a model is done with a row of each "
                             "(default: accuracy)")
    parser.add_argument("--zoo", action="append", default=[], help="a zoo whose index.json records failed exports")
    parser.add_argument("--device", help="take off the models the exporter skips on this device (cuda, cpu)")
    parser.add_argument("--suites-dir", default=os.path.join(ROOT, "suites"),
                        help="where the suite yaml is (default: the repository's suites/)")
    parser.add_argument("names", nargs="*")
    args = parser.parse_args(argv)
    backends = [b for b in args.backends.split(",") if b]
    if not backends:
        parser.error("--backends names no backend")
    experiments = [e for e in args.experiments.split(",") if e]
    unknown = set(experiments) - {"accuracy", "performance"}
    if unknown or not experiments:
        parser.error(f"--experiments takes accuracy and performance, not {args.experiments!r}")
    done = {}  # {(experiment, backend): names}
    for experiment in experiments:
        for results in args.results:
            for backend, names in rows_by_backend(results, args.suite, experiment).items():
                done.setdefault((experiment, backend), set()).update(names)
    failed = failed_exports(args.zoo, args.suite)
    config = SuiteConfig.load(args.suites_dir, args.suite, require=False)
    for name in args.names:
        if name in failed or all(name in done.get((e, b), ()) for e in experiments for b in backends):
            continue
        if config.inference_run_skip(name) or (args.device and config.skip_reason(name, args.device)):
            continue
        print(name)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
