#!/usr/bin/env python3
"""Which models of a list a resumable run still has to do: the names given, less those with an
accuracy row for every backend named in the result CSVs in a folder or below it, less those
whose export failed in one of the zoos' indexes (their reason is there; exporting again would
fail again), and less those an inference run skips without a row (only_training,
skip.test.inference in the suite yaml: tts_angular and yolov3 were exported and run for nothing
on 2026-12-02d, and would have been again in every call). Used by scripts/gpu-lists.sh's `stream`
part between device calls.

    lists_todo.py --suite SUITE --backends jit,aot_inductor --results DIR [--results DIR ...]
                  [--zoo DIR ...] [--suites-dir DIR] NAME...

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


def rows_by_backend(results, suite):
    """{backend: {names with an accuracy row}} from SUITE_*_accuracy.csv in RESULTS or any
    folder below it (the stream's pipelines write a folder each)."""
    done = {}
    for path in glob.glob(os.path.join(results, "**", f"{suite}_*_accuracy.csv"), recursive=True):
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
    parser.add_argument("--zoo", action="append", default=[], help="a zoo whose index.json records failed exports")
    parser.add_argument("--suites-dir", default=os.path.join(ROOT, "suites"),
                        help="where the suite yaml is (default: the repository's suites/)")
    parser.add_argument("names", nargs="*")
    args = parser.parse_args(argv)
    backends = [b for b in args.backends.split(",") if b]
    if not backends:
        parser.error("--backends names no backend")
    done = {}
    for results in args.results:
        for backend, names in rows_by_backend(results, args.suite).items():
            done.setdefault(backend, set()).update(names)
    failed = failed_exports(args.zoo, args.suite)
    config = SuiteConfig.load(args.suites_dir, args.suite, require=False)
    for name in args.names:
        if name in failed or all(name in done.get(b, ()) for b in backends):
            continue
        if config.inference_run_skip(name):
            continue
        print(name)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
