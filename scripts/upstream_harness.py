#!/usr/bin/env python3
"""Upstream's benchmarks/dynamo harness, made runnable offline beside zoobench.

  scripts/upstream_harness.py prepare OUT --torchbench-dir DIR --extras DIR
  scripts/upstream_harness.py models SUITE_LIST|ROWS.csv [--done CSV...] [--shards N --shard I]
  scripts/upstream_harness.py merge INTO.csv PART.csv...

`prepare` copies the harness from a TorchBench checkout (userbenchmark/dynamo/dynamobench) into
OUT and makes the five offline changes that docs/upstream-agreement.md lists: timm_models.yaml
and huggingface_llm_models.py added, timm models built with random weights, the HuggingFace
configs that upstream downloads at import built from zoobench's exporter's offline copies (the
same configs zoobench's models use), and TorchBench's torchvision and timm models built with
random weights instead of their downloaded pretrained ones (as zoobench builds them offline, so
that both sides judge the same models). Nothing else of upstream's code changes.

`models` prints upstream's -k filter for a zoobench model list or the names of zoobench's result
CSV (names matched whole), less the names that already have a row in the given upstream CSVs (to
continue a run that was cut); with --shards N --shard I, the I-th of N interleaved parts of them.

`merge INTO PART...` appends the rows of the CSVs that parallel parts wrote to INTO.
"""

from __future__ import annotations

import argparse
import csv
import os
import re
import shutil
import sys

HARNESS = os.path.join("userbenchmark", "dynamo", "dynamobench")

# The one module upstream imports that the checkout lacks: its LLM entries stay out (their names
# then fail to load, as on any machine without the hub).
LLM_MODULE = "HF_LLM_MODELS = {}\n"

# Hub config names upstream reads at import -> zoobench's exporter's name for the same model.
OFFLINE_MODULE = '''"""The hub configs upstream's huggingface.py downloads, built offline by zoobench's exporter."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from zoo_export.sources.huggingface import EXTRA_MODELS  # noqa: E402

HUB_NAMES = {
    "allenai/longformer-base-4096": "AllenaiLongformerBase",
    "t5-small": "T5Small",
    "distilgpt2": "DistillGPT2",
    "google/fnet-base": "GoogleFnet",
    "YituTech/conv-bert-base": "YituTechConvBert",
}


def from_pretrained(hub_name):
    import transformers

    return EXTRA_MODELS[HUB_NAMES[hub_name]][0](transformers)
'''

# TorchBench's torchvision models ask for ImageNet weights (weights=..._Weights.IMAGENET1K_V1, or
# pretrained=True, which torchvision turns into its default weights) and its timm_* models for
# pretrained=True: downloads. torchbench.py imports this first; every builder then sees no
# weights and initializes at random, as zoobench's offline builds do.
OFFLINE_WEIGHTS_MODULE = '''"""TorchBench's pretrained weights (downloads) replaced by random ones, as zoobench builds them."""
import functools

try:
    from torchvision.models._api import WeightsEnum
except ImportError:  # no torchvision: nothing asks for its weights
    WeightsEnum = None
if WeightsEnum is not None:
    WeightsEnum.verify = classmethod(lambda cls, obj: None)

try:
    import timm
except ImportError:
    timm = None
if timm is not None:
    _create_model = timm.create_model

    @functools.wraps(_create_model)
    def _create_model_without_download(*args, **kwargs):
        kwargs["pretrained"] = False
        return _create_model(*args, **kwargs)

    timm.create_model = _create_model_without_download
'''

# (file, text upstream has, text it becomes, how many times)
PATCHES = [
    ("timm_models.py", "scriptable=False, num_classes=None, pretrained=True)",
     "scriptable=False, num_classes=None, pretrained=False)", 1),
    ("huggingface.py", "AutoConfig.from_pretrained(", "zoobench_offline.from_pretrained(", 5),
    ("huggingface.py", "\nEXTRA_MODELS = {", "\nimport zoobench_offline  # noqa: E402\n\nEXTRA_MODELS = {", 1),
    ("torchbench.py", "\nimport torch\n\n",
     "\nimport torch\n\nimport zoobench_offline_weights  # noqa: E402,F401\n\n", 1),
]


def prepare(out: str, torchbench_dir: str, extras: str) -> None:
    source = os.path.join(torchbench_dir, HARNESS)
    if not os.path.isfile(os.path.join(source, "common.py")):
        sys.exit(f"upstream_harness: no {HARNESS}/common.py under {torchbench_dir}")
    yaml = os.path.join(extras, "timm_models.yaml")
    if not os.path.isfile(yaml):
        sys.exit(f"upstream_harness: no timm_models.yaml in {extras} (../shared/upstream-dynamo)")
    if os.path.exists(out):
        shutil.rmtree(out)
    shutil.copytree(source, out)
    os.chmod(out, 0o755)
    shutil.copy(yaml, os.path.join(out, "timm_models.yaml"))
    with open(os.path.join(out, "huggingface_llm_models.py"), "w") as f:
        f.write(LLM_MODULE)
    with open(os.path.join(out, "zoobench_offline.py"), "w") as f:
        f.write(OFFLINE_MODULE)
    with open(os.path.join(out, "zoobench_offline_weights.py"), "w") as f:
        f.write(OFFLINE_WEIGHTS_MODULE)
    for name, old, new, count in PATCHES:
        path = os.path.join(out, name)
        os.chmod(path, 0o644)
        with open(path) as f:
            text = f.read()
        if text.count(old) != count:
            sys.exit(f"upstream_harness: {name} has {text.count(old)} of {old!r}, expected "
                     f"{count}: the checkout's harness changed; update PATCHES")
        with open(path, "w") as f:
            f.write(text.replace(old, new))
    print(f"upstream's harness, offline, in {out}")


def done_names(paths) -> set:
    names = set()
    for path in paths:
        if os.path.isfile(path):
            with open(path, newline="") as f:
                names.update(row["name"] for row in csv.DictReader(f) if row.get("name"))
    return names


def listed_names(source: str) -> list:
    """A suite list's names (first word of each line) or a result CSV's `name` column."""
    if source.endswith(".csv"):
        names = sorted(done_names([source]))
        if not names:
            sys.exit(f"upstream_harness: no rows with a name in {source}")
        return names
    with open(source) as f:
        return [line.replace(",", " ").split()[0] for line in f
                if line.strip() and not line.startswith("#")]


def models(source: str, done: list, shards: int = 1, shard: int = 0) -> None:
    if not 0 <= shard < shards:
        sys.exit(f"upstream_harness: --shard {shard} is not one of 0..{shards - 1}")
    left = [n for n in listed_names(source) if n not in done_names(done)][shard::shards]
    # upstream: re.search("|".join(filters), name, re.IGNORECASE); anchored, each name whole
    print("^(" + "|".join(re.escape(n) for n in left) + ")$" if left else "")


def merge(into: str, parts: list) -> None:
    """The rows of upstream's CSVs written by parallel parts, appended to INTO; the parts go."""
    fields, rows = [], []
    for path in [into] + [p for p in parts if p != into]:
        if not os.path.isfile(path):
            continue
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            fields += [name for name in reader.fieldnames or [] if name not in fields]
            rows += list(reader)
    if not rows:
        return
    with open(into, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields, restval="")
        writer.writeheader()
        writer.writerows(rows)
    for path in parts:
        if path != into and os.path.isfile(path):
            os.remove(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    p = commands.add_parser("prepare")
    p.add_argument("out")
    p.add_argument("--torchbench-dir", required=True)
    p.add_argument("--extras", required=True, help="the folder with timm_models.yaml")
    m = commands.add_parser("models")
    m.add_argument("source", help="a suite's model list, or zoobench's result CSV")
    m.add_argument("--done", nargs="*", default=[])
    m.add_argument("--shards", type=int, default=1, help="split the names into this many parts")
    m.add_argument("--shard", type=int, default=0, help="which part to print (from 0)")
    g = commands.add_parser("merge")
    g.add_argument("into")
    g.add_argument("parts", nargs="*")
    args = parser.parse_args()
    if args.command == "prepare":
        prepare(args.out, args.torchbench_dir, args.extras)
    elif args.command == "merge":
        merge(args.into, args.parts)
    else:
        models(args.source, args.done, args.shards, args.shard)


if __name__ == "__main__":
    main()
