#!/usr/bin/env python3
"""The same models' timings from several zoobench runs, side by side.

  eager_check.py RUN_DIR...

Each RUN_DIR is a `zoobench run --performance` output folder (gpu-check's eager-check stage
makes one per way of running the models). Prints a markdown table per model: each run's eager
and compiled latency (ms), speedup, the eager side's kernel time (ms) and the models its timed
section paused, so a run whose eager side is slower for the same kernels stands out; and what
a small op cost the host where the timing began (rows made since 2026-12-07), which tells a
slower machine from a slower way of running.
"""
import glob
import json
import os
import sys


def rows(folder):
    out = {}
    for path in glob.glob(os.path.join(folder, "*_performance.json")):
        with open(path, encoding="utf-8") as f:
            for record in json.load(f).get("records", []):
                cells, detail = record.get("cells", {}), record.get("detail", {})
                out[cells.get("name")] = (cells, detail)
    return out


def cell(cells, detail):
    if cells.get("status") != "pass":
        return f"{cells.get('status')}"
    section = detail.get("timed_section", {})
    paused = len(section.get("paused", []))
    launch = section.get("op_launch_us")
    return (f"{float(cells['eager_latency']):.3f} / {float(cells['abs_latency']):.3f} = "
            f"{float(cells['speedup']):.2f}x (kernels {float(cells.get('eager_op_ms') or 0):.3f}"
            f"{f', op {launch:.1f} us' if launch is not None else ''}"
            f"{', paused ' + str(paused) if paused else ''})")


def main(folders):
    runs = [(os.path.basename(os.path.normpath(f)), rows(f)) for f in folders]
    names = sorted({name for _, found in runs for name in found})
    print("| model | " + " | ".join(label for label, _ in runs) + " |")
    print("|---|" + "---|" * len(runs))
    for name in names:
        cells = [cell(*found[name]) if name in found else "-" for _, found in runs]
        print(f"| {name} | " + " | ".join(cells) + " |")
    print("\neach cell: eager ms / compiled ms = speedup (the eager side's kernel time, ms; a small "
          "op's cost to the host, us; the other pipelines paused)")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
