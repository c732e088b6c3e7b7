#!/usr/bin/env python3
"""Where two sides' kernel time goes, kernel by kernel, from the performance records' kernel
listings (docs/formats.md: `eager_kernels`, `compiled_kernels`, CUDA rows only).

  scripts/kernel_listing.py MODEL SIDE [SIDE...] [--top N]

SIDE is a result JSON and which side of its MODEL record to read, `FILE.json:eager` or
`FILE.json:compiled` (the default). Examples:
  # the TorchScript eager reference against the Python module, from one python_eager row
  scripts/kernel_listing.py MegatronBertForQuestionAnswering P.json:eager P.json:compiled
  # AOTInductor's kernels against torch.compile's, from two backends' rows
  scripts/kernel_listing.py DebertaForMaskedLM aot_inductor.json inductor.json

Prints one line per kernel name (the names that take the most time on any side first): its
milliseconds and calls per iteration on each side, then each side's total. A kernel that only
one side runs shows `-` on the others. Only the standard library: any python3 runs it.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Dict, List, Tuple


def read_side(spec: str, model: str) -> Tuple[str, Dict[str, Tuple[float, float]], float]:
    path, _, side = spec.rpartition(":")
    if not path or side not in ("eager", "compiled"):
        path, side = spec, "compiled"
    with open(path, encoding="utf-8") as f:
        records = json.load(f).get("records", [])
    rows = [r for r in records if r.get("cells", {}).get("name") == model and r.get("kind") == "performance"]
    if not rows:
        sys.exit(f"{path}: no performance record of {model}")
    row = rows[-1]  # a resumed file keeps the newest last
    listing = row.get("detail", {}).get(f"{side}_kernels")
    if not listing:
        sys.exit(f"{path}: {model}'s record has no {side}_kernels (a CPU row, or written by a "
                 "zoobench older than the kernel listing)")
    kernels = {k["name"]: (float(k["ms"]), float(k["calls"])) for k in listing}
    label = f"{row['cells'].get('backend', '?')}:{side}"
    return label, kernels, sum(ms for ms, _ in kernels.values())


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model")
    parser.add_argument("sides", nargs="+", metavar="SIDE")
    parser.add_argument("--top", type=int, default=25, help="kernel names shown (default 25)")
    parser.add_argument("--width", type=int, default=70, help="characters of a kernel name shown")
    args = parser.parse_args(argv)
    sides = [read_side(spec, args.model) for spec in args.sides]
    names = {name for _, kernels, _ in sides for name in kernels}
    largest = sorted(names, key=lambda n: (-max(k.get(n, (0, 0))[0] for _, k, _ in sides), n))
    head = f"{'kernel':<{args.width}}" + "".join(f" | {label[:22]:>22}" for label, _, _ in sides)
    print(head)
    print("-" * len(head))
    for name in largest[:args.top]:
        cells = []
        for _, kernels, _ in sides:
            ms, calls = kernels.get(name, (None, None))
            cells.append(f"{'-':>22}" if ms is None else f"{ms:>10.3f} ms x{calls:>7.1f}")
        shown = name if len(name) <= args.width else name[:args.width - 3] + "..."
        print(f"{shown:<{args.width}}" + "".join(f" | {c}" for c in cells))
    if len(largest) > args.top:
        print(f"({len(largest) - args.top} more names)")
    print(f"{'total':<{args.width}}" + "".join(f" | {total:>10.3f} ms{'':>9}" for _, _, total in sides))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
