#!/usr/bin/env python3
"""Writes docs/coverage.md: for each model list (torchbench, huggingface, timm_models), every
name, where it comes from, whether it was exported on the CPU and on the H200, its accuracy
status with jit and with aot_inductor on the H200, and the reason for every gap.

  scripts/coverage_table.py --cpu-zoo ZOO [--gpu-zoo ZOO] [--jit CSV...] [--aoti CSV...]
                            [--torchbench-dir DIR] [-o docs/coverage.md]

Where each fact comes from:
  source, skip reasons   the exporter's own plan (suites/*.yaml and lists, tools/zoo_export)
  exported, or why not   the zoo's index.json (status exported|failed and the reason)
  jit / aot_inductor     accuracy CSVs of `zoobench run` (docs/formats.md: dev, name, accuracy,
                         reason), rows of a CUDA device
A column with no input reads "not run yet". Run it with a python that has torch (the plan
imports the exporter): /usr/bin/python3 here, python3 on the GPU machine.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
from dataclasses import dataclass, field
from typing import Dict, List, Optional

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))

LISTS = ("torchbench", "huggingface", "timm_models")
NOT_RUN = "not run yet"

# exporter source module -> what the "source" column calls it
SOURCE_KINDS = {
    "torchbench_checkout": "checkout",
    "torchbench_synthetic": "checkout code, synthetic inputs",
    "torchbench_timm": "library mapping",
    "torchbench_transformers": "library mapping",
    "torch_geometric_gnn": "library mapping",
    "torchvision_models": "built in",
    "text_encoder": "built in",
    "huggingface": "library",
    "timm_models": "library",
}


@dataclass
class Row:
    name: str
    source: str
    cpu: str = NOT_RUN
    gpu: str = NOT_RUN
    jit: str = NOT_RUN
    aoti: str = NOT_RUN
    why: Dict[str, str] = field(default_factory=dict)  # where -> reason, in column order

    def reasons(self) -> str:
        """Reasons joined; one shared by the CPU and the H200 is said once."""
        merged: Dict[str, List[str]] = {}
        for where, reason in self.why.items():
            merged.setdefault(reason, []).append(where)
        return "; ".join(f"{', '.join(wheres)}: {reason}" for reason, wheres in merged.items())


# --- inputs ---------------------------------------------------------------------------------------

def read_index(zoos: List[str]) -> Optional[Dict[tuple, dict]]:
    """{(suite, name): entry} of one or more zoos (scripts/gpu-lists.sh writes one per GPU);
    an exported entry wins over a failed one."""
    if not zoos:
        return None
    entries: Dict[tuple, dict] = {}
    for zoo in zoos:
        with open(os.path.join(zoo, "index.json"), encoding="utf-8") as f:
            for m in json.load(f).get("models", []):
                key = (m.get("suite"), m.get("name"))
                if key not in entries or m.get("status") == "exported":
                    entries[key] = m
    return entries


def read_accuracy(paths: List[str]) -> Optional[Dict[tuple, dict]]:
    """{(suite, name): row} of CUDA rows; the suite is the CSV's file name prefix."""
    if not paths:
        return None
    rows: Dict[tuple, dict] = {}
    for path in paths:
        suite = next((s for s in LISTS if os.path.basename(path).startswith(s + "_")), None)
        with open(path, newline="", encoding="utf-8") as f:
            for row in csv.DictReader(f):
                if row.get("dev", "").startswith("cuda"):
                    rows[(suite, row["name"])] = row
    return rows


def plan(suite: str, device: str, torchbench_dir: Optional[str]):
    from zoo_export import exporter

    options = exporter.ExportOptions(suites_dir=os.path.join(ROOT, "suites"), device=device,
                                     torchbench_dir=torchbench_dir)
    listed = {e.name for e in exporter.load_suites(options, suite)[0].entries}
    return [p for p in exporter.plan(options, suite, None, [], []) if p.name in listed]


# --- cells ----------------------------------------------------------------------------------------

def source_of(planned) -> str:
    if planned.source is None:
        return "checkout" if planned.suite == "torchbench" else "? (no source)"
    module = planned.source.__name__.rsplit(".", 1)[-1]
    kind = SOURCE_KINDS.get(module, module)
    return kind if kind == "checkout" else f"{kind}: {planned.source_label}"


def export_cell(index, planned, where: str, why: Dict[str, str]) -> str:
    entry = (index or {}).get((planned.suite, planned.name))
    if planned.skip_reason and not (entry and entry.get("status") == "exported"):
        why[where] = f"skipped, {planned.skip_reason}"  # the yaml says so before any run
        return "skipped"
    if index is None:
        return NOT_RUN
    if entry is None:
        why[where] = "not attempted"
        return "no"
    if entry.get("status") == "exported":
        return "yes"
    why[where] = entry.get("reason") or "failed"
    return "no"


def accuracy_cell(rows, planned, exported: str, backend: str, why: Dict[str, str]) -> str:
    if rows is None:
        return NOT_RUN
    row = rows.get((planned.suite, planned.name))
    if row is None:
        if exported != "yes":
            return "-"
        why[backend] = "no row in the results"
        return "no row"
    status = row.get("accuracy", "")
    if status != "pass":
        reason = (row.get("reason") or "").strip()
        why[backend] = status + (f" ({reason})" if reason else "")
    return status


def rows_for(suite: str, args, inputs) -> List[Row]:
    cpu_index, gpu_index, jit, aoti = inputs
    gpu_plan = {p.name: p for p in plan(suite, "cuda", args.torchbench_dir)}
    rows = []
    for planned in plan(suite, "cpu", args.torchbench_dir):
        row = Row(planned.name, source_of(planned))
        row.cpu = export_cell(cpu_index, planned, "CPU", row.why)
        row.gpu = export_cell(gpu_index, gpu_plan[planned.name], "H200", row.why)
        row.jit = accuracy_cell(jit, planned, row.gpu, "jit", row.why)
        row.aoti = accuracy_cell(aoti, planned, row.gpu, "aot_inductor", row.why)
        rows.append(row)
    return rows


# --- markdown -------------------------------------------------------------------------------------

def cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def count(rows: List[Row], column: str, value: str, ran: bool) -> str:
    if not ran:
        return NOT_RUN
    return f"{sum(getattr(r, column) == value for r in rows)}/{len(rows)}"


def summary_table(tables: Dict[str, List[Row]], args) -> List[str]:
    lines = ["| list | names | exported on CPU | exported on the H200 | jit pass (H200) | "
             "aot_inductor pass (H200) |", "|---|---|---|---|---|---|"]
    for suite, rows in tables.items():
        cells = [count(rows, "cpu", "yes", True), count(rows, "gpu", "yes", bool(args.gpu_zoo)),
                 count(rows, "jit", "pass", bool(args.jit)),
                 count(rows, "aoti", "pass", bool(args.aoti))]
        lines.append(f"| {suite} | {len(rows)} | " + " | ".join(cells) + " |")
    return lines


def model_table(rows: List[Row]) -> List[str]:
    lines = ["| model | source | CPU export | H200 export | jit (H200) | aot_inductor (H200) | "
             "why not |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append("| " + " | ".join(cell(x) for x in (
            r.name, r.source, r.cpu, r.gpu, r.jit, r.aoti, r.reasons())) + " |")
    return lines


def document(tables: Dict[str, List[Row]], args) -> str:
    inputs = [f"CPU zoo `{args.cpu_zoo_label or ' '.join(args.cpu_zoo)}`",
              f"H200 zoos `{args.gpu_zoo_label or ' '.join(args.gpu_zoo)}`" if args.gpu_zoo else
              "no H200 zoo yet",
              f"jit CSVs: {len(args.jit)}", f"aot_inductor CSVs: {len(args.aoti)}"]
    out = ["# Model coverage", "",
           "Every name of the three model lists of the Ascend suite (suites/*_models_list.txt), "
           "where zoobench gets it, whether it was exported on the CPU (this machine: torch "
           "1.13, no timm, transformers or torch_geometric) and on the H200, its accuracy "
           "status there with the jit and aot_inductor backends, and why for every gap.", "",
           f"Generated by `scripts/coverage_table.py` from: {'; '.join(inputs)}. "
           "Regenerate, after the GPU run of `scripts/gpu-lists.sh`:", "",
           "```sh",
           "/usr/bin/python3 scripts/coverage_table.py --torchbench-dir ../shared/torchbench \\",
           "  --cpu-zoo zoo-cpu --gpu-zoo zoo-gpu-lists/torchbench zoo-gpu-lists/huggingface-timm \\",
           "  --jit results-gpu/lists-jit/*_accuracy.csv \\",
           "  --aoti results-gpu/lists-aot_inductor/*_accuracy.csv -o docs/coverage.md",
           "```", ""]
    if args.note:
        out += [args.note, ""]
    out += ["## Numbers", ""] + summary_table(tables, args) + [""]
    out += ["Sources: *checkout*: TorchBench's own model API from a checkout "
            "(`--torchbench-dir`, ../shared/torchbench); *checkout code, synthetic inputs*: the "
            "network from the checkout's files, inputs of TorchBench's shapes made up because "
            "its data is a download; *library mapping*: the TorchBench name built offline from "
            "timm / transformers / torch_geometric with TorchBench's architecture, batch size "
            "and inputs (its checkout downloads weights or configs); *library*: the library's "
            "own name; *built in*: torchvision or a BERT encoder of torch.nn modules.", ""]
    for suite, rows in tables.items():
        out += [f"## {suite} ({len(rows)})", ""] + model_table(rows) + [""]
    return "\n".join(out)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cpu-zoo", nargs="+", required=True,
                        help="zoo(s) exported on the CPU (their index.json)")
    parser.add_argument("--gpu-zoo", nargs="*", default=[],
                        help="zoo(s) exported on the H200 (their index.json)")
    parser.add_argument("--jit", nargs="*", default=[], help="accuracy CSVs, backend jit")
    parser.add_argument("--aoti", nargs="*", default=[], help="accuracy CSVs, aot_inductor")
    parser.add_argument("--torchbench-dir", help="the TorchBench checkout the zoos used")
    parser.add_argument("--cpu-zoo-label", help="how the document names the CPU zoo")
    parser.add_argument("--gpu-zoo-label", help="how the document names the H200 zoo")
    parser.add_argument("--note", help="a paragraph under the introduction (how it was run)")
    parser.add_argument("-o", "--output", help="write here (default: standard output)")
    args = parser.parse_args(argv)
    inputs = (read_index(args.cpu_zoo), read_index(args.gpu_zoo), read_accuracy(args.jit),
              read_accuracy(args.aoti))
    tables = {suite: rows_for(suite, args, inputs) for suite in LISTS}
    text = document(tables, args) + "\n"
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
