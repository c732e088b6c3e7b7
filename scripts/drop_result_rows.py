#!/usr/bin/env python3
"""Removes the rows of the models whose name matches a regular expression from zoobench's
result files (CSV and their JSON twins), so that `zoobench run --resume` on that folder runs
those models again, after a change that alters their rows. Upstream-format files in the folder
(--output-format upstream) are removed whole: a resumed run writes them again from zoobench's
own rows.

  scripts/drop_result_rows.py 'hf_' results-gpu/lists-inductor-inference

Prints what it dropped; exits 2 on a file it cannot read."""

import argparse
import csv
import glob
import json
import os
import re
import sys


def model_column(header):
    return header.index("name") if "name" in header else None


def drop_from_csv(path, pattern):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    if not rows:
        return []
    column = model_column(rows[0])
    if column is None:
        raise ValueError(f"{path}: no model column in its header")
    kept, dropped = [rows[0]], []
    for row in rows[1:]:
        if pattern.search(row[column]):
            dropped.append(row[column])
        else:
            kept.append(row)
    if dropped:
        with open(path, "w", newline="") as f:
            csv.writer(f, lineterminator="\n").writerows(kept)
    return dropped


def drop_from_json(path, pattern):
    with open(path) as f:
        doc = json.load(f)
    records = doc.get("records", [])

    def model(record):
        cells = record.get("cells", {})
        return cells.get("name", "")

    kept = [r for r in records if not pattern.search(model(r))]
    if len(kept) != len(records):
        doc["records"] = kept
        with open(path, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
    return len(records) - len(kept)


def is_upstream_file(path):
    # Both formats start "dev,name,batch_size"; only zoobench's has a backend column.
    with open(path, newline="") as f:
        header = next(csv.reader(f), [])
    return "backend" not in header


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pattern", help="regular expression searched in each row's model name")
    parser.add_argument("folders", nargs="+", help="folders of result files")
    args = parser.parse_args(argv)
    pattern = re.compile(args.pattern)
    try:
        for folder in args.folders:
            for path in sorted(glob.glob(os.path.join(folder, "*.csv"))):
                if is_upstream_file(path):
                    os.remove(path)
                    print(f"{path}: removed (upstream's format; the resumed run writes it again)")
                    continue
                dropped = drop_from_csv(path, pattern)
                twin = os.path.splitext(path)[0] + ".json"
                if os.path.exists(twin):
                    drop_from_json(twin, pattern)
                print(f"{path}: {len(dropped)} row(s) dropped"
                      + (f" ({', '.join(sorted(set(dropped)))})" if dropped else ""))
    except (OSError, ValueError, json.JSONDecodeError) as e:
        print(f"drop_result_rows: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
