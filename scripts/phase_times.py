#!/usr/bin/env python3
"""Where a run's time went, from its logs: the seconds of each phase zoobench's model logs name
(`zoobench info: phase 'performance: inductor prepare' took 31.20 s`) and of each stage the
exporter's output names (`took: building the model 3.1s, making eval.pt 4.0s, ...`), summed
per phase and per model, largest first.

Written because the device time is the scarce thing: a HuggingFace model took 3.5 GPU-minutes
over the side-by-side table's six backends and an export with its package 54-153 s even for a
2 MB model (2026-12-02), and only the totals were known.

    scripts/phase_times.py PATH [PATH ...] [--top N]

PATH: a model log, an exporter log, or a folder searched for *.log below it (a results folder's
logs/, gpu-logs/). A model log is named <model>.<mode>.<backend>.<device>.log; an exporter log's
model is the name in its progress line. Prints markdown tables; exit status 0, 1 when no phase
or stage line was found, 2 on a usage error.
"""

import argparse
import collections
import os
import re
import sys
from typing import Dict, Iterable, List, Tuple

PHASE = re.compile(r"zoobench info: phase '(?P<phase>.+)' took (?P<seconds>[0-9.]+) s$")
EXPORTED = re.compile(r"^\[\d+/\d+\] (?P<suite>[^/\s]+)/(?P<model>\S+): exported in ")
TOOK = re.compile(r"^\s+took: (?P<stages>.+)$")
STAGE = re.compile(r"(?P<stage>[^,]+?) (?P<seconds>[0-9.]+)s(?:,|$)")


def log_files(paths: Iterable[str]) -> List[str]:
    found = []
    for path in paths:
        if os.path.isdir(path):
            for folder, _, files in os.walk(path):
                found += [os.path.join(folder, f) for f in sorted(files) if f.endswith(".log")]
        elif os.path.isfile(path):
            found.append(path)
        else:
            print(f"phase_times: no such file or folder: {path}", file=sys.stderr)
    return found


def model_log_subject(path: str) -> Tuple[str, str]:
    """(model, backend) of <model>.<mode>.<backend>.<device>.log; ("", "") for another name."""
    parts = os.path.basename(path)[: -len(".log")].split(".")
    if len(parts) >= 4 and parts[-3] in ("inference", "training"):
        return ".".join(parts[:-3]), parts[-2]
    return "", ""


def read(path: str) -> List[Tuple[str, str, str, float]]:
    """(kind, model, phase, seconds) of every timed line in one log; kind is "run" for a model
    log's phases ("<backend>: <phase>") and "export" for an exporter's stages."""
    model, backend = model_log_subject(path)
    found = []
    exported = ""
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            match = PHASE.search(line)
            if match and model:
                found.append(("run", model, f"{backend}: {match['phase']}", float(match["seconds"])))
                continue
            match = EXPORTED.match(line)
            if match:
                exported = match["model"]
                continue
            match = TOOK.match(line)
            if match and exported:
                for stage in STAGE.finditer(match["stages"]):
                    found.append(("export", exported, stage["stage"].strip(), float(stage["seconds"])))
                exported = ""
    return found


def table(title: str, totals: Dict[str, float], count: Dict[str, int], top: int) -> List[str]:
    everything = sum(totals.values())
    lines = [f"### {title} ({everything:.1f} s in all)", "",
             "| | seconds | share | lines |", "|---|---:|---:|---:|"]
    for key, seconds in sorted(totals.items(), key=lambda kv: -kv[1])[:top]:
        share = seconds / everything if everything else 0.0
        lines.append(f"| {key} | {seconds:.1f} | {share:.0%} | {count[key]} |")
    return lines + [""]


def main(argv) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="+", help="model or exporter logs, or folders of them")
    parser.add_argument("--top", type=int, default=15, help="rows per table (default 15)")
    args = parser.parse_args(argv)
    if args.top <= 0:
        parser.error("--top must be positive")
    by_phase = {"run": collections.Counter(), "export": collections.Counter()}
    by_model = {"run": collections.Counter(), "export": collections.Counter()}
    lines_of = {"run": collections.Counter(), "export": collections.Counter()}
    models_of = {"run": collections.Counter(), "export": collections.Counter()}
    for path in log_files(args.paths):
        for kind, model, phase, seconds in read(path):
            by_phase[kind][phase] += seconds
            lines_of[kind][phase] += 1
            by_model[kind][model] += seconds
            models_of[kind][model] += 1
    if not any(by_phase.values()):
        print("no phase or stage lines found (zoobench logs them from 2026-12-02, the exporter "
              "from 2026-12-02d)", file=sys.stderr)
        return 1
    out = []
    for kind, what in (("run", "zoobench's phases"), ("export", "the exporter's stages")):
        if by_phase[kind]:
            out += table(f"{what}, by phase", by_phase[kind], lines_of[kind], args.top)
            out += table(f"{what}, by model", by_model[kind], models_of[kind], args.top)
    print("\n".join(out).rstrip())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
