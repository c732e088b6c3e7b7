#!/usr/bin/env python3
"""Writes docs/coverage.md: for each model list (torchbench, huggingface, timm_models), every
name, where it comes from, whether it was exported on the CPU and on the H200, its accuracy
status on the H200 with jit, aot_inductor and inductor (inference, and inductor in training),
inductor's inference speedup over Python eager, and the reason for every gap.

  scripts/coverage_table.py (--cpu-zoo ZOO... | --cpu-index FILE...) [--gpu-zoo ZOO...]
                            [--jit CSV...] [--aoti CSV...] [--inductor CSV...]
                            [--inductor-perf CSV...] [--inductor-train CSV...]
                            [--not-run BACKEND=REASON] [--unfinished BACKEND=REASON]
                            [--notes FILE] [--torchbench-dir DIR] [-o docs/coverage.md]

Where each fact comes from:
  source, skip reasons   the exporter's own plan (suites/*.yaml and lists, tools/zoo_export)
  exported, or why not   a zoo's index.json (status exported|failed and the reason), or a saved
                         copy of one (--cpu-index: docs/data/coverage/ keeps the CPU zoo's, so
                         the CPU column regenerates without a 19-minute export)
  jit / aot_inductor     accuracy CSVs of `zoobench run` (docs/formats.md: dev, name,
                         batch_size, accuracy, reason), rows of a CUDA device, inference; the
                         list a CSV covers is its file name's prefix. The JSON beside a CSV adds
                         the failing tensors' own reasons. A row at another batch size than the
                         H200 export's says so in its cell.
  inductor               the same, of `zoobench run --accuracy --backend inductor` (--inductor)
  inductor training      the same in training (--inductor-train); no batch size note, since
                         training runs at the yaml's training batch size, not the export's
  inductor speedup       performance CSVs (--inductor-perf, docs/formats.md): python_speedup,
                         "1.39x", with "†" where the row's `unstable` is 1 (a side's CoV over
                         the limit); a row whose status is not pass shows its status
An exported model with no row is explained by the runner's own skips (suite yaml only_training,
skip.test.inference; in training skip.test.training, only_inference), else "no row", or "not
reached" with --unfinished's reason where the backend's runs were cut before they reached every
model. A list with no CSV for a backend reads "not run yet", or "not run (REASON)" with
--not-run. BACKEND of --not-run and --unfinished is a column's key: jit, aot_inductor, inductor,
inductor-perf, inductor-train (one each, since each column's runs are separate). Run it with a
python that has torch (the plan imports the exporter): /usr/bin/python3 here, python3 on the GPU
machine.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import shlex
import sys
from dataclasses import dataclass, field
from typing import Dict, List, Optional

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))

LISTS = ("torchbench", "huggingface", "timm_models")
NOT_RUN = "not run yet"
UNSTABLE = "†"  # after a speedup whose run was unstable

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


@dataclass(frozen=True)
class Column:
    """One result column: its --not-run/--unfinished key, Row field and headings."""
    key: str
    attr: str  # its Row field, also the argparse dest of its CSVs' option
    label: str  # before its reason in "why not"
    heading: str  # in the model tables
    summary: str  # in the Numbers table
    kind: str = "accuracy"  # accuracy | training | perf


COLUMNS = (
    Column("jit", "jit", "jit", "jit (H200)", "jit pass (H200)"),
    Column("aot_inductor", "aoti", "aot_inductor", "aot_inductor (H200)",
           "aot_inductor pass (H200)"),
    # The inductor columns' rows come from list runs on more than one kind of GPU machine (the
    # page's notes say which list ran where).
    Column("inductor", "inductor", "inductor", "inductor inference accuracy",
           "inductor inference pass (GPU)"),
    Column("inductor-perf", "inductor_perf", "inductor speedup", "inductor speedup vs Python eager",
           "inductor speedup vs Python eager (GPU)", "perf"),
    Column("inductor-train", "inductor_train", "inductor training", "inductor training accuracy",
           "inductor training pass (GPU)", "training"),
)
COLUMN_KEYS = {c.key: c for c in COLUMNS}


@dataclass
class Row:
    name: str
    source: str
    cpu: str = NOT_RUN
    gpu: str = NOT_RUN
    jit: str = NOT_RUN
    aoti: str = NOT_RUN
    inductor: str = NOT_RUN
    inductor_perf: str = NOT_RUN
    inductor_train: str = NOT_RUN
    speedup: Optional[float] = None  # inductor's python_speedup, for the Numbers' geomean
    notes: Dict[str, str] = field(default_factory=dict)  # column -> "batch 8" beside its status
    why: Dict[str, str] = field(default_factory=dict)  # where -> reason, in column order

    def reasons(self) -> str:
        """Reasons joined; one shared by the CPU and the H200 is said once."""
        merged: Dict[str, List[str]] = {}
        for where, reason in self.why.items():
            merged.setdefault(reason, []).append(where)
        return "; ".join(f"{', '.join(wheres)}: {reason}" for reason, wheres in merged.items())


@dataclass
class Accuracy:
    """One column's rows (accuracy or performance): {(suite, name): CSV row} and the lists its
    CSVs cover."""
    rows: Dict[tuple, dict]
    lists: set
    not_run: str  # the cell of a list no CSV covers
    unfinished: Optional[str]  # why an exported model has no row, where runs were cut (or None)


# --- inputs ---------------------------------------------------------------------------------------

def read_index(paths: List[str]) -> Optional[Dict[tuple, dict]]:
    """{(suite, name): entry} of one or more zoos (scripts/gpu-lists.sh writes one per GPU) or
    index files in their format; an exported entry wins over a failed one."""
    if not paths:
        return None
    entries: Dict[tuple, dict] = {}
    for path in paths:
        index = os.path.join(path, "index.json") if os.path.isdir(path) else path
        with open(index, encoding="utf-8") as f:
            for m in json.load(f).get("models", []):
                key = (m.get("suite"), m.get("name"))
                if key not in entries or m.get("status") == "exported":
                    entries[key] = m
    return entries


def failed_tensors(csv_path: str) -> Dict[tuple, str]:
    """{(suite, name): "output[1]: dtype mismatch ..."} from the JSON beside an accuracy CSV:
    the CSV's reason gives the worst margin, the JSON says what failed (a dtype, NaNs, ...)."""
    json_path = csv_path[: -len(".csv")] + ".json"
    if not os.path.isfile(json_path):
        return {}
    with open(json_path, encoding="utf-8") as f:
        records = json.load(f).get("records", [])
    found = {}
    for record in records:
        cells = record.get("cells", {})
        failed = [f"{t.get('path')}: {t.get('reason')}" for t in
                  record.get("detail", {}).get("tensors", []) if t.get("pass") is False]
        if failed:
            found[(cells.get("suite"), cells.get("name"))] = "; ".join(failed[:2])
    return found


def read_accuracy(paths: List[str], not_run: str, unfinished: Optional[str]) -> Accuracy:
    """CUDA rows of accuracy CSVs; the suite is the CSV's file name prefix."""
    accuracy = Accuracy({}, set(), not_run, unfinished)
    for path in paths:
        suite = next((s for s in LISTS if os.path.basename(path).startswith(s + "_")), None)
        accuracy.lists.add(suite)
        details = failed_tensors(path)
        with open(path, newline="", encoding="utf-8") as f:
            for row in csv.DictReader(f):
                if row.get("dev", "").startswith("cuda"):
                    key = (suite, row["name"])
                    row["failed_tensors_detail"] = details.get(key, "")
                    accuracy.rows[key] = row
    return accuracy


def plan(suite: str, device: str, torchbench_dir: Optional[str]):
    """(the exporter's plan of the list's names, the suite config)."""
    from zoo_export import exporter

    options = exporter.ExportOptions(suites_dir=os.path.join(ROOT, "suites"), device=device,
                                     torchbench_dir=torchbench_dir)
    cfg = exporter.load_suites(options, suite)[0]
    listed = {e.name for e in cfg.entries}
    return [p for p in exporter.plan(options, suite, None, [], []) if p.name in listed], cfg


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


def short_reason(reason: str) -> str:
    # PyTorch's out-of-memory message ends in allocator advice and a link; the sizes before it
    # are the reason
    return reason.split(" Of the allocated memory", 1)[0].strip()


def package_failure(export_entry: Optional[dict]) -> Optional[str]:
    """Why the export made no CUDA package: the index entry's aoti_failures ({role: why}), or
    in indexes written before it had that field, its notes ("no aoti.float32.cuda: why"). Rows
    written before the runner read the manifest's aoti_failures say only that the package is
    missing."""
    entry = export_entry or {}
    failures = dict(entry.get("aoti_failures") or {})
    for note in entry.get("notes") or []:
        if note.startswith("no aoti.") and ": " in note:
            role, why = note[len("no "):].split(": ", 1)
            failures.setdefault(role, why)
    for role, why in sorted(failures.items()):
        if role.endswith(".cuda"):
            return "the export could not make its package: " + why
    return None


def training_run_skip(cfg, name: str) -> Optional[str]:
    """Why `zoobench run` skips an exported model in training without writing a row, in its own
    words (SuiteConfig::skip_reason in src/zoobench/zoo/suite_config.cpp); the exporter's config
    knows only the inference skips, since it exports for both modes alike."""
    if name in cfg.names_at("skip", "test", "training"):
        return f"skip.test.training in {cfg.name}.yaml"
    if name in cfg.names_at("only_inference"):
        return f"only_inference in {cfg.name}.yaml (the model has only an eval mode)"
    return None


def missing_cell(results: Accuracy, planned, row: Row, run_skip: Optional[str],
                 column: Column) -> Optional[str]:
    """The cell of a model its column has no row for, its reason in row.why; None where it has
    one."""
    if planned.suite not in results.lists:
        return results.not_run
    if (planned.suite, planned.name) in results.rows:
        return None
    if row.gpu != "yes":
        return "-"
    if run_skip:
        row.why[column.label] = f"skipped by the runner, {run_skip}"
        return "skipped"
    if results.unfinished:
        row.why[column.label] = results.unfinished
        return "not reached"
    row.why[column.label] = "no row in the results"
    return "no row"


def note_batch(result: dict, export_entry: Optional[dict], row: Row, column: Column) -> None:
    # training runs at the yaml's training batch size by design: unlike the export's is no news
    batch = result.get("batch_size", "")
    if (column.kind != "training" and export_entry and batch
            and batch != str(export_entry.get("batch_size"))):
        row.notes[column.attr] = f"batch {batch}"


def failure(result: dict, status: str, column: Column, export_entry: Optional[dict]) -> str:
    """A status other than pass with its reason; a reason's lines (a graph break's explanation)
    are joined, since a table cell holds one."""
    reason = "; ".join(r for r in (short_reason(result.get("reason") or ""),
                                   result.get("failed_tensors_detail", "")) if r)
    if column.key == "aot_inductor" and status == "model_fail_to_load":
        reason = package_failure(export_entry) or reason
    reason = " ".join(reason.split())
    return status + (f" ({reason})" if reason else "")


def accuracy_cell(results: Accuracy, planned, row: Row, export_entry: Optional[dict],
                  run_skip: Optional[str], column: Column) -> str:
    """The accuracy status of one column; its reason goes to row.why, a batch size unlike the
    H200 export's to row.notes."""
    missing = missing_cell(results, planned, row, run_skip, column)
    if missing is not None:
        return missing
    result = results.rows[(planned.suite, planned.name)]
    note_batch(result, export_entry, row, column)
    status = result.get("accuracy", "")
    if status != "pass":
        row.why[column.label] = failure(result, status, column, export_entry)
    return status


def speedup_cell(results: Accuracy, planned, row: Row, export_entry: Optional[dict],
                 run_skip: Optional[str], column: Column) -> str:
    """Inductor's speedup over Python eager, "1.39x", with UNSTABLE where the row says its
    timings varied too much to trust; a row that did not pass shows its status."""
    missing = missing_cell(results, planned, row, run_skip, column)
    if missing is not None:
        return missing
    result = results.rows[(planned.suite, planned.name)]
    note_batch(result, export_entry, row, column)
    status = result.get("status", "")
    if status != "pass":
        row.why[column.label] = failure(result, status, column, export_entry)
        return status
    try:
        speedup = float(result.get("python_speedup") or "nan")
    except ValueError:
        speedup = float("nan")
    if not speedup > 0:  # a row of a runner before python_speedup, or no Python eager timing
        row.why[column.label] = "no python_speedup in its row"
        return status
    row.speedup = speedup
    return f"{speedup:.2f}x" + (UNSTABLE if result.get("unstable") == "1" else "")


def rows_for(suite: str, args, inputs) -> List[Row]:
    cpu_index, gpu_index, results = inputs
    gpu_planned, cfg = plan(suite, "cuda", args.torchbench_dir)
    gpu_plan = {p.name: p for p in gpu_planned}
    rows = []
    for planned in plan(suite, "cpu", args.torchbench_dir)[0]:
        row = Row(planned.name, source_of(planned))
        row.cpu = export_cell(cpu_index, planned, "CPU", row.why)
        row.gpu = export_cell(gpu_index, gpu_plan[planned.name], "H200", row.why)
        entry = (gpu_index or {}).get((suite, planned.name))
        for column in COLUMNS:
            run_skip = (training_run_skip(cfg, planned.name) if column.kind == "training" else
                        cfg.inference_run_skip(planned.name))
            fill = speedup_cell if column.kind == "perf" else accuracy_cell
            setattr(row, column.attr,
                    fill(results[column.key], planned, row, entry, run_skip, column))
        rows.append(row)
    return rows


# --- markdown -------------------------------------------------------------------------------------

def cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def count(rows: List[Row], column: str, value: str, not_run: Optional[str] = None) -> str:
    if not_run is not None:
        return not_run
    text = f"{sum(getattr(r, column) == value for r in rows)}/{len(rows)}"
    notes = {r.notes[column] for r in rows if column in r.notes}
    if notes:
        text += f" ({notes.pop()})" if len(notes) == 1 else " (some at other batch sizes)"
    return text


def speedup_summary(rows: List[Row]) -> str:
    """How many models have a speedup and their geometric mean (a mean of ratios), how many of
    them unstable."""
    speedups = [r.speedup for r in rows if r.speedup is not None]
    if not speedups:
        return "0 models"
    geomean = math.exp(sum(math.log(x) for x in speedups) / len(speedups))
    text = f"{len(speedups)} model{'s' if len(speedups) > 1 else ''}, geomean {geomean:.2f}x"
    unstable = sum(r.speedup is not None and r.inductor_perf.endswith(UNSTABLE) for r in rows)
    return text + (f" ({unstable} {UNSTABLE})" if unstable else "")


def summary_table(tables: Dict[str, List[Row]], args, inputs) -> List[str]:
    cpu_index, gpu_index, results = inputs
    lines = ["| list | names | exported on CPU | exported on the H200 | "
             + " | ".join(c.summary for c in COLUMNS) + " |", "|---" * (len(COLUMNS) + 4) + "|"]
    for suite, rows in tables.items():
        cells = [count(rows, "cpu", "yes"),
                 count(rows, "gpu", "yes", None if gpu_index is not None else NOT_RUN)]
        for column in COLUMNS:
            got = results[column.key]
            if suite not in got.lists:
                cells.append(got.not_run)
            elif column.kind == "perf":
                cells.append(speedup_summary(rows))
            else:
                cells.append(count(rows, column.attr, "pass"))
        lines.append(f"| {suite} | {len(rows)} | " + " | ".join(cells) + " |")
    return lines


def model_table(rows: List[Row]) -> List[str]:
    lines = ["| model | source | CPU export | H200 export | "
             + " | ".join(c.heading for c in COLUMNS) + " | why not |",
             "|---" * (len(COLUMNS) + 5) + "|"]
    for r in rows:
        results = [getattr(r, c.attr) + (f" ({r.notes[c.attr]})" if c.attr in r.notes else "")
                   for c in COLUMNS]
        lines.append("| " + " | ".join(cell(x) for x in (
            [r.name, r.source, r.cpu, r.gpu] + results + [r.reasons()])) + " |")
    return lines


def command_line(argv: List[str]) -> List[str]:
    """The command that wrote the document, one option a line."""
    lines = [f"{sys.executable or 'python3'} scripts/coverage_table.py"]
    for arg in argv:
        if arg.startswith("-") and len(lines[-1]) > 2:
            lines.append("  " + shlex.quote(arg))
        else:
            lines[-1] += " " + shlex.quote(arg)
    return [line + " \\" for line in lines[:-1]] + lines[-1:]


# what the inductor columns mean, under the Numbers (the --notes file describes the runs)
INDUCTOR_NOTE = (
    "*inductor speedup vs Python eager*: the performance CSVs' `python_speedup`, the latency of "
    "the same Python module run uncompiled over inductor's, timed in the same rounds (upstream's "
    f"speedup); {UNSTABLE} where the row is `unstable` (a side's timings varied more than the "
    "run's `unstable_cov` allows, so the number is rough); a model whose performance run did not "
    "pass shows its status. The table above counts the models with a speedup and gives their "
    "geometric mean. *inductor training accuracy* runs at the suite yaml's training batch sizes, "
    "not the export's, so its cells do not note them.")


def document(tables: Dict[str, List[Row]], args, inputs, argv: List[str]) -> str:
    cpu = args.cpu_zoo_label or " ".join(args.cpu_zoo + args.cpu_index)
    sources = [f"CPU `{cpu}`",
               f"H200 zoos `{args.gpu_zoo_label or ' '.join(args.gpu_zoo)}`" if args.gpu_zoo else
               "no H200 zoo yet"]
    sources += [f"{c.label} CSVs: {len(getattr(args, c.attr))}" for c in COLUMNS]
    out = ["# Model coverage", "",
           "Every name of the three model lists of the Ascend suite (suites/*_models_list.txt), "
           "where zoobench gets it, whether it was exported on the CPU (this machine: torch "
           "1.13, no timm, transformers or torch_geometric) and on the H200, its accuracy "
           "status on a GPU machine with the jit and aot_inductor backends (the H200) and "
           "inductor (inference and training; the notes say which machine ran which list), "
           "inductor's inference speedup over Python eager, and why for every gap.", "",
           f"Generated by `scripts/coverage_table.py` from: {'; '.join(sources)}, with this "
           "command (from the repository root):", "",
           "```sh"] + command_line(argv) + ["```", ""]
    if args.note:
        out += [args.note, ""]
    out += ["## Numbers", ""] + summary_table(tables, args, inputs) + ["", INDUCTOR_NOTE, ""]
    out += ["Sources: *checkout*: TorchBench's own model API from a checkout "
            "(`--torchbench-dir`, ../shared/torchbench); *checkout code, synthetic inputs*: the "
            "network from the checkout's files, inputs of TorchBench's shapes made up because "
            "its data is a download; *library mapping*: the TorchBench name built offline from "
            "timm / transformers / torch_geometric with TorchBench's architecture, batch size "
            "and inputs (its checkout downloads weights or configs); *library*: the library's "
            "own name; *built in*: torchvision or a BERT encoder of torch.nn modules.", ""]
    if args.notes:
        with open(args.notes, encoding="utf-8") as f:
            out += [f.read().rstrip("\n"), ""]
    for suite, rows in tables.items():
        out += [f"## {suite} ({len(rows)})", ""] + model_table(rows) + [""]
    return "\n".join(out)


def backend_reasons(option: str, specs: List[str], parser) -> Dict[str, str]:
    reasons = {}
    for spec in specs:
        backend, _, reason = spec.partition("=")
        if backend not in COLUMN_KEYS or not reason:
            parser.error(f"{option} {spec!r}: expected BACKEND=REASON, BACKEND one of "
                         f"{', '.join(COLUMN_KEYS)}")
        reasons[backend] = reason
    return reasons


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cpu-zoo", nargs="+", default=[],
                        help="zoo(s) exported on the CPU (their index.json)")
    parser.add_argument("--cpu-index", nargs="+", default=[],
                        help="index files of zoos exported on the CPU, e.g. the saved "
                             "docs/data/coverage/cpu-zoo-index.json")
    parser.add_argument("--gpu-zoo", nargs="*", default=[],
                        help="zoo(s) exported on the H200 (their index.json)")
    parser.add_argument("--jit", nargs="*", default=[], help="accuracy CSVs, backend jit")
    parser.add_argument("--aoti", nargs="*", default=[], help="accuracy CSVs, aot_inductor")
    parser.add_argument("--inductor", nargs="*", default=[],
                        help="accuracy CSVs, inductor, inference")
    parser.add_argument("--inductor-perf", nargs="*", default=[],
                        help="performance CSVs, inductor, inference (python_speedup)")
    parser.add_argument("--inductor-train", nargs="*", default=[],
                        help="accuracy CSVs, inductor, training")
    parser.add_argument("--not-run", action="append", default=[], metavar="BACKEND=REASON",
                        help="what a list with no CSV of BACKEND (" + ", ".join(COLUMN_KEYS)
                             + ") says")
    parser.add_argument("--unfinished", action="append", default=[], metavar="BACKEND=REASON",
                        help="BACKEND's runs were cut before every model: an exported model "
                             "without a row reads 'not reached' with REASON, not 'no row'")
    parser.add_argument("--torchbench-dir", help="the TorchBench checkout the zoos used")
    parser.add_argument("--cpu-zoo-label", help="how the document names the CPU zoo")
    parser.add_argument("--gpu-zoo-label", help="how the document names the H200 zoo")
    parser.add_argument("--note", help="a paragraph under the introduction (how it was run)")
    parser.add_argument("--notes", help="a markdown file put before the tables (diagnoses)")
    parser.add_argument("-o", "--output", help="write here (default: standard output)")
    args = parser.parse_args(argv)
    if not args.cpu_zoo and not args.cpu_index:
        parser.error("one of --cpu-zoo or --cpu-index is required")
    not_run = {backend: f"not run ({reason})"
               for backend, reason in backend_reasons("--not-run", args.not_run, parser).items()}
    unfinished = backend_reasons("--unfinished", args.unfinished, parser)
    results = {c.key: read_accuracy(getattr(args, c.attr), not_run.get(c.key, NOT_RUN),
                                    unfinished.get(c.key)) for c in COLUMNS}
    inputs = (read_index(args.cpu_zoo + args.cpu_index), read_index(args.gpu_zoo), results)
    tables = {suite: rows_for(suite, args, inputs) for suite in LISTS}
    text = document(tables, args, inputs, argv) + "\n"
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
