"""The Slurm test's row checks: the merged result files against a single-process run's.

    compare_rows.py MERGED_DIR SINGLE_DIR   exit 0 when every result CSV of SINGLE_DIR has a
                                            merged twin with the same rows: same models, same
                                            statuses (timings may differ), no row twice.
"""

import csv
import glob
import os
import sys

# The columns that say what a row is about and how it ended; everything else is a measurement.
IDENTITY = ("dev", "name", "backend", "mode", "dtype")
STATUS = {"accuracy": "accuracy", "performance": "status"}


def rows_of(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def summary(path):
    kind = "accuracy" if path.endswith("_accuracy.csv") else "performance"
    keys = [tuple(row[c] for c in IDENTITY) + (row[STATUS[kind]],) for row in rows_of(path)]
    return keys


def main(merged_dir, single_dir):
    problems = []
    singles = sorted(glob.glob(os.path.join(single_dir, "*.csv")))
    if not singles:
        problems.append(f"the single-process run wrote no CSV in {single_dir}")
    for single in singles:
        name = os.path.basename(single)
        merged = os.path.join(merged_dir, name)
        if not os.path.exists(merged):
            problems.append(f"{name}: no merged file")
            continue
        want, got = summary(single), summary(merged)
        duplicates = sorted({k for k in got if got.count(k) > 1})
        if duplicates:
            problems.append(f"{name}: rows twice in the merged file: {duplicates}")
        if sorted(want) != sorted(set(got)):
            problems.append(f"{name}: merged rows differ from the single run's:\n"
                            f"  only single: {sorted(set(want) - set(got))}\n"
                            f"  only merged: {sorted(set(got) - set(want))}")
        else:
            print(f"{name}: {len(got)} rows, as the single-process run "
                  f"({', '.join(sorted({k[1] + '=' + k[-1] for k in got}))})")
    for problem in problems:
        print("FAIL:", problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
