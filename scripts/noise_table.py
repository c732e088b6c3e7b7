#!/usr/bin/env python3
"""Summarises gpu-check's noise stage: the host's speed for fixed CPU work, per process.

  noise_table.py LOGS_DIR

Reads LOGS_DIR/noise-<placement>.jsonl (one bench/host_noise.cpp line per process) and
LOGS_DIR/noise-{python,zoobench}-trivial-<placement>.jsonl (a one-op model's per-iteration
time, the launch path alone: bench/python_latency.py --trivial and bench_harness_overhead's
eager CUDA case), and prints per workload and placement the
per-process medians and their spread ((max - min) / median): over all processes, and over each
run of 3 consecutive processes (range of those triples' spreads), the latency stage's 3-run
measure.
"""
import glob
import json
import os
import statistics
import sys

from latency_table import spread  # the latency stage's 3-run measure, so the two tables agree


def triples_text(values):
    triples = [spread(values[i:i + 3]) for i in range(len(values) - 2)]
    return f"{min(triples):.1f}-{max(triples):.1f}%" if triples else "-"


def main(logs):
    print("| workload | placement | processes | per-process medians (ms) | spread | "
          "spread of 3 consecutive | median in-process CoV |")
    print("|---|---|---|---|---|---|---|")
    for path in sorted(glob.glob(os.path.join(logs, "noise-*.jsonl"))):
        name = os.path.basename(path)[len("noise-"):-len(".jsonl")]
        lines = [json.loads(line) for line in open(path, encoding="utf-8") if line.startswith("{")]
        if not lines:
            continue
        harness, _, placement = name.partition("-trivial-")
        if placement:
            workloads = {f"{harness} launch loop, one-op model": ("median_ms", None)}
        else:
            workloads = {"arithmetic chain": ("arithmetic_median_ms", "arithmetic_cov"),
                         "pointer chase, 8 MB": ("pointer_chase_median_ms", "pointer_chase_cov")}
            placement = name
        for workload, (median_key, cov_key) in workloads.items():
            medians = [line[median_key] for line in lines]
            covs = [line[cov_key] for line in lines] if cov_key else []
            cov_text = f"{statistics.median(covs) * 100:.1f}%" if covs else "-"
            print(f"| {workload} | {placement} | {len(medians)} | "
                  f"{', '.join(f'{m:.4g}' for m in medians)} | {spread(medians):.1f}% | "
                  f"{triples_text(medians)} | {cov_text} |")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
