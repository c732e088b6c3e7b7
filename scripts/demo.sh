#!/usr/bin/env bash
# `make demo`: export the demo zoo (six torchvision models and a small BERT-style encoder),
# run accuracy and performance of the `jit` and `python_eager` backends against eager on the
# CPU in one invocation, and write the results and reports (with the latency matrix). About 14
# minutes on a 2-core machine from a fresh clone (the CLI build is most of it).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
PYTHON=${PYTHON:-/usr/bin/python3}
ZOO=${ZOO:-zoo}
OUT=${RESULTS:-results}/demo
BACKEND=${BACKEND:-jit,python_eager}

echo "== exporting the demo zoo into $ZOO/demo"
"$PYTHON" tools/export_zoo.py --zoo "$ZOO" --suite demo

echo "== zoobench run: accuracy and performance, $BACKEND against eager, cpu"
rm -rf "$OUT"
"$BUILD/zoobench" run --zoo "$ZOO" --suite demo --accuracy --performance --inference \
  --backend "$BACKEND" --devices cpu --repeat "${REPEAT:-10}" --timeout 600 --output-directory "$OUT"

echo "== reports"
"$BUILD/zoobench" report "$OUT"/*.csv --markdown "$OUT/report.md" --html "$OUT/report.html"
echo
echo "results:  $OUT/*.csv (and .json)"
echo "reports:  $OUT/report.md  $OUT/report.html"
