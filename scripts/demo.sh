#!/usr/bin/env bash
# `make demo`: the demo list (six torchvision models and a small BERT-style encoder), exported
# by zoobench as the run reaches each model, accuracy and performance of the `jit` and
# `python_eager` backends against eager on the CPU in one invocation, then the reports (with the
# latency matrix). About 14 minutes on a 2-core machine from a fresh clone (the CLI build is
# most of it).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
ZOO=${ZOO:-zoo}
OUT=${RESULTS:-results}/demo
BACKEND=${BACKEND:-jit,python_eager}

echo "== zoobench run: the demo list exported into $ZOO/demo as needed; accuracy and performance, $BACKEND against eager, cpu"
rm -rf "$OUT"
# Exit 1 means a row failed: the reports are still written, then make demo fails.
status=0
"$BUILD/zoobench" run --zoo "$ZOO" --suite demo --accuracy --performance --inference \
  --backend "$BACKEND" --devices cpu --repeat "${REPEAT:-10}" --timeout 600 --output-directory "$OUT" ||
  status=$?
[[ $status -le 1 ]] || exit "$status"

echo "== reports"
"$BUILD/zoobench" report "$OUT"/*.csv --markdown "$OUT/report.md" --html "$OUT/report.html"
echo
echo "results:  $OUT/*.csv (and .json)"
echo "reports:  $OUT/report.md  $OUT/report.html"
exit "$status"
