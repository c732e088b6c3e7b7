#!/usr/bin/env bash
# Writes docs/results.md from the result files in docs/data/: a headline table, then one section
# per suite, backend family and mode: its text (docs/data/results/text/NAME.md: the machine, the
# `zoobench run` command that reproduces it, what it shows), then `zoobench report` over its rows.
#   scripts/results_doc.sh            (ZOOBENCH=path/to/zoobench to use another binary)
set -euo pipefail
cd "$(dirname "$0")/.."
ZOOBENCH=${ZOOBENCH:-build/zoobench}
OUT=docs/results.md
TEXT=docs/data/results/text

# NAME|title|result files (globs, from the repository root)
SECTIONS=(
  "demo-inference-cpu|demo · inference · CPU · jit and python_eager|docs/data/results/demo-inference-cpu/*.csv"
  "timm-inference-h200|timm_models · inference · H200 · zoobench and torch.compile backends|docs/data/results/timm-inference-h200/*.csv"
  "huggingface-inference-h200|huggingface · inference · H200 · zoobench and torch.compile backends|docs/data/results/huggingface-inference-h200/*.csv"
  "timm-training-h200|timm_models · training · H200 · zoobench and torch.compile backends|docs/data/results/timm-training-h200/*.csv"
  "torchbench-training-h200|torchbench · training · H200 · zoobench and torch.compile backends|docs/data/results/torchbench-training-h200/*.csv"
  "torchbench-list-h200|torchbench list · inference accuracy · H200 · jit and aot_inductor|docs/data/coverage/torchbench_*.csv"
  "huggingface-list-h200|huggingface list · inference accuracy · H200 · jit and aot_inductor|docs/data/coverage/huggingface_*.csv"
  "timm-list-h200|timm_models list · inference accuracy · H200 · jit and aot_inductor|docs/data/coverage/timm_models_*.csv"
  "torchbench-inductor-inference-h100|torchbench list · inference · H100 · inductor (upstream's settings)|docs/data/lists-inductor-inference/*.csv"
  "torchbench-inductor-training-h100|torchbench list · training · H100 · inductor (upstream's settings)|docs/data/lists-inductor-training/*.csv"
)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

headline="| section | models | pass rate | zoobench's fastest vs torch.compile's fastest |
|---|---:|---|---|"
for section in "${SECTIONS[@]}"; do
  IFS='|' read -r name title files <<<"$section"
  # shellcheck disable=SC2086  # $files is a glob
  "$ZOOBENCH" report $files --title "$title" --markdown "$work/$name.md" >/dev/null
  models=$(sed -n 's/^\([0-9]*\) models · .*/\1/p' "$work/$name.md")
  pass=$(sed -n 's/^pass rate \([^;)]*\).*/\1)/p' "$work/$name.md" | head -1)
  versus=$(sed -n "s/^zoobench's fastest backend at or below torch.compile's fastest on \(.*\) models (geomean latency ratio \([0-9.x]*\).*/\1, geomean \2/p" "$work/$name.md" | head -1)
  anchor=$(tr '[:upper:]' '[:lower:]' <<<"$title" | tr -d '·.()' | tr ' ' '-')
  headline+=$'\n'"| [$title](#$anchor) | $models | $pass | ${versus:--} |"
done

{
  cat "$TEXT/intro.md"
  echo
  echo "$headline"
  for section in "${SECTIONS[@]}"; do
    IFS='|' read -r name _ _ <<<"$section"
    echo
    # the report's title becomes the section's heading, its own headings one level down
    sed -n '1s/^#/##/p' "$work/$name.md"
    echo
    cat "$TEXT/$name.md"
    sed '1d; s/^#/##/' "$work/$name.md"
  done
} >"$OUT"
echo "wrote $OUT"
