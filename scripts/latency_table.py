#!/usr/bin/env python3
"""Tabulates gpu-check's latency stage: zoobench's eager latency vs a Python CUDA-event loop.

  latency_table.py RESULTS_DIR

Reads RESULTS_DIR/latency-python-<zoo>-<model>-<mode>[-run<N>].json (bench/python_latency.py)
and the zoobench runs RESULTS_DIR/latency-<zoo>-<model>-<mode>-run<N>/*_performance.json, and
prints a markdown row per (zoo, model, mode): Python's medians (one per run, and their spread),
zoobench's (CUDA events, the same clock as Python's; and end-to-end, host clock + sync), their
spread, the ratio of the medians of the runs (zoobench / Python), and the kernel time. Variant runs go in the last column, where present:
...-<mode>-settle0/ (`--settle-iterations 0`: every sample starts right after the other side's
model ran, the protocol before 2026-11-30's second run) and ...-<mode>-ipr5/ (samples of 5
iterations, that run's test of the same question).
"""
import glob
import json
import os
import re
import statistics
import sys


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def zoobench_runs(results, zoo, model, mode, variant="run*"):
    runs = []
    for folder in sorted(glob.glob(os.path.join(results, f"latency-{zoo}-{model}-{mode}-{variant}"))):
        for path in glob.glob(os.path.join(folder, "*_performance.json")):
            for record in load(path).get("records", []):
                cells, detail = record.get("cells", record), record.get("detail", {})
                if cells.get("status") != "pass":
                    runs.append({"status": cells.get("status"), "reason": cells.get("reason", "")})
                    continue
                runs.append({"status": "pass", "e2e": float(cells["eager_latency"]),
                             "event": detail.get("eager_event_ms"),
                             "op": float(cells["eager_op_ms"]) if cells.get("eager_op_ms") else None,
                             "batch": cells.get("batch_size")})
    return runs


def spread(values):
    return (max(values) - min(values)) / statistics.median(values) * 100 if values else float("nan")


def main(results):
    print("| zoo | model | mode | batch | Python events ms (runs) | Python spread | "
          "zoobench events ms (runs) | zoobench spread | zoobench / Python | zoobench E2E ms | "
          "kernel ms | variants: events ms (/ Python) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    pattern = re.compile(r"latency-python-(.+)-([^-]+)-(inference|training)(?:-run\d+)?\.json$")
    pythons = {}
    for path in sorted(glob.glob(os.path.join(results, "latency-python-*.json"))):
        match = pattern.search(os.path.basename(path))
        if match:
            pythons.setdefault(match.groups(), []).append(load(path)["median_ms"])
    for (zoo, model, mode), python_runs in sorted(pythons.items()):
        python = statistics.median(python_runs)
        python_text = ", ".join(f"{v:.3f}" for v in python_runs)
        runs = zoobench_runs(results, zoo, model, mode)
        passed = [r for r in runs if r["status"] == "pass"]
        if not passed:
            why = "; ".join(f"{r['status']}: {r['reason'][:80]}" for r in runs) or "no rows"
            print(f"| {zoo} | {model} | {mode} | | {python_text} | {spread(python_runs):.1f}% | {why} | | | | | |")
            continue
        events = [r["event"] for r in passed if r["event"] is not None]
        e2e = [r["e2e"] for r in passed]
        ops = [r["op"] for r in passed if r["op"] is not None]
        ours = statistics.median(events) if events else float("nan")
        variants = []
        for variant in ("settle0", "ipr5"):
            found = [r["event"] for r in zoobench_runs(results, zoo, model, mode, variant)
                     if r["status"] == "pass" and r["event"] is not None]
            if found:
                variants.append(f"{variant} {found[0]:.3f} ({found[0] / python:.3f})")
        variants_text = "; ".join(variants) or "-"
        print(f"| {zoo} | {model} | {mode} | {passed[0]['batch']} | {python_text} | "
              f"{spread(python_runs):.1f}% | {', '.join(f'{v:.3f}' for v in events)} | "
              f"{spread(events):.1f}% | {ours / python:.3f} | {statistics.median(e2e):.3f} | "
              f"{statistics.median(ops) if ops else float('nan'):.3f} | {variants_text} |")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
