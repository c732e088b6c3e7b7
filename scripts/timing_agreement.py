#!/usr/bin/env python3
"""Two zoobench runs of the same models, one against the other: whether each model's verdicts
are the same and whether its speedups agree within their intervals. Made for the check that
parallel pipelines time honestly: the same models with the default pipelines and with
`--jobs 1` (gpu-check's turnaround stage with TURN_JOBS="default 1" makes both).

  timing_agreement.py RUN_DIR BASELINE_DIR [--target 0.03]

Each folder is a `zoobench run` output folder (its *_accuracy.json and *_performance.json).
Prints the rows whose statuses differ, then a markdown table of each model both timed: the two
speedups with their 95% intervals, their ratio, and why it is an exception (the intervals are
apart, or a side is unstable); then the median |ratio - 1| against the target. Exits 1 when a
status differs or the median misses the target, 2 when a folder has no rows.
"""
import argparse
import glob
import json
import os
import statistics
import sys


def read_rows(folder):
    """{(kind, name, dev, mode, backend, dtype, input_layout): cells} of a run's JSON files."""
    rows = {}
    for path in sorted(glob.glob(os.path.join(folder, "*.json"))):
        with open(path, encoding="utf-8") as f:
            results = json.load(f)
        kind = results.get("kind")
        if kind not in ("accuracy", "performance"):
            continue
        for record in results.get("records", []):
            c = record.get("cells", {})
            key = (kind, c.get("name"), c.get("dev"), c.get("mode"), c.get("backend"),
                   c.get("dtype"), c.get("input_layout", "contiguous"))
            rows[key] = c
    return rows


def status(kind, cells):
    return cells.get("accuracy" if kind == "accuracy" else "status")


def speedup(cells):
    """(speedup, low, high, unstable) of a timed row; None when it was not timed."""
    try:
        value = float(cells["speedup"])
        low = float(cells.get("speedup_ci_low") or value)
        high = float(cells.get("speedup_ci_high") or value)
    except (KeyError, TypeError, ValueError):
        return None
    return value, low, high, str(cells.get("unstable", "")).lower() in ("1", "true", "yes")


def label(key):
    kind, name, dev, mode, backend, _, layout = key
    extra = "" if layout == "contiguous" else f" {layout}"
    return f"{name} ({backend}, {mode}, {dev}{extra}, {kind})"


def status_differences(run, baseline):
    """The rows both runs have whose statuses differ, and the rows only one of them has."""
    differ = [f"{label(k)}: {status(k[0], run[k])} against {status(k[0], baseline[k])}"
              for k in sorted(run.keys() & baseline.keys())
              if status(k[0], run[k]) != status(k[0], baseline[k])]
    only = [f"{label(k)}: only in {which}" for which, a, b in (("the run", run, baseline),
                                                               ("the baseline", baseline, run))
            for k in sorted(a.keys() - b.keys())]
    return differ, only


def compared_speedups(run, baseline):
    """(key, run's, baseline's, ratio, exception) for each performance row both timed."""
    out = []
    for key in sorted(k for k in run.keys() & baseline.keys() if k[0] == "performance"):
        mine, theirs = speedup(run[key]), speedup(baseline[key])
        if mine is None or theirs is None or theirs[0] <= 0:
            continue
        ratio = mine[0] / theirs[0]
        why = []
        if mine[2] < theirs[1] or theirs[2] < mine[1]:
            why.append("intervals apart")
        if mine[3] or theirs[3]:
            why.append("unstable: " + " and ".join(
                side for side, s in (("run", mine), ("baseline", theirs)) if s[3]))
        out.append((key, mine, theirs, ratio, "; ".join(why)))
    return out


def interval(s):
    return f"{s[0]:.3f}x [{s[1]:.3f}, {s[2]:.3f}]{'†' if s[3] else ''}"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run")
    parser.add_argument("baseline")
    parser.add_argument("--target", type=float, default=0.03,
                        help="the most the median |ratio - 1| may be (default 0.03)")
    args = parser.parse_args(argv)
    run, baseline = read_rows(args.run), read_rows(args.baseline)
    for folder, rows in ((args.run, run), (args.baseline, baseline)):
        if not rows:
            print(f"no zoobench result rows (*.json) in {folder}", file=sys.stderr)
            return 2
    differ, only = status_differences(run, baseline)
    both = len(run.keys() & baseline.keys())
    print(f"statuses: {both - len(differ)} of the {both} rows both runs have are the same")
    for line in differ + only:
        print(f"- {line}")
    speedups = compared_speedups(run, baseline)
    print(f"\n| model | {os.path.basename(os.path.normpath(args.run))} | "
          f"{os.path.basename(os.path.normpath(args.baseline))} | ratio | exception |")
    print("|---|---|---|---:|---|")
    for key, mine, theirs, ratio, why in speedups:
        print(f"| {key[1]} | {interval(mine)} | {interval(theirs)} | {ratio:.3f} | {why} |")
    met = True
    if speedups:
        median = statistics.median(abs(ratio - 1) for *_, ratio, _ in speedups)
        met = median <= args.target
        print(f"\nmedian |ratio - 1| {100 * median:.1f}% over {len(speedups)} models "
              f"(target {100 * args.target:g}%: {'met' if met else 'NOT met'}); "
              f"{sum(1 for *_, why in speedups if why)} exception(s)")
    else:
        print("\nno model was timed in both runs")
    return 0 if met and not differ else 1


if __name__ == "__main__":
    sys.exit(main())
