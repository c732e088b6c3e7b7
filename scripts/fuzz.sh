#!/usr/bin/env bash
# Every fuzz target with MUTANTS seeded mutants, or for SECONDS each when that comes first
# (`make fuzz`; `make fuzz-ci`, which CI runs), then the fuzzer's self-check (a crash, a hang and
# an exhausted memory are counted as such). One summary line per target in
# fuzz-results/summary.jsonl (FUZZ_RESULTS names another folder); failing mutants are kept in
# its artifacts/ and their paths printed (a run starts with none: the same seed makes the same
# mutants again). Exits 1 when any mutant hung, ran out of memory or died by a signal, or the
# self-check failed.
#   scripts/fuzz.sh FUZZER [MUTANTS=10000] [SEED=20261201] [SECONDS=0: no time bound]
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
fuzzer=$1 mutants=${2:-10000} seed=${3:-20261201} seconds=${4:-0}
out=${FUZZ_RESULTS:-fuzz-results}
rm -rf "$out/artifacts"
mkdir -p "$out"
out=$(cd "$out" && pwd)
: > "$out/summary.jsonl"
# The sanitizers' options are the fuzzer's own defaults (fuzz/fuzz_main.cpp); ASAN_OPTIONS and
# UBSAN_OPTIONS override them.
bound="$mutants mutants"
[[ $seconds == 0 ]] || bound="$mutants mutants or $seconds s"
status=0
for target in $("$fuzzer" --list); do
  echo "== $target: $bound, seed $seed"
  "$fuzzer" "$target" --mutants "$mutants" --seconds "$seconds" --seed "$seed" \
    --artifacts "$out/artifacts" 2> "$out/$target.err" | tee -a "$out/summary.jsonl"
  if [[ ${PIPESTATUS[0]} -eq 0 ]]; then
    tail -3 "$out/$target.err"
  else
    # The findings (each names its kept mutant), then the end of the last sanitizer report.
    status=1
    echo "!! $target: findings (whole log: $out/$target.err)"
    findings='^(mutant [0-9]+ of|seed )'
    grep -E "$findings" "$out/$target.err" | head -20
    if grep -qvE "$findings" "$out/$target.err"; then
      echo "-- the end of its log (a sanitizer's report):"
      tail -40 "$out/$target.err"
    fi
  fi
done
echo "== self_check"
if ! "$fuzzer" self_check 2> "$out/self_check.err"; then
  status=1
  echo "!! self_check: the harness miscounts (log: $out/self_check.err)"
fi
if [[ -d $out/artifacts ]] && [[ -n $(ls -A "$out/artifacts") ]]; then
  echo "== failing mutants kept (reproduce one: put it alone in a folder, then"
  echo "   $fuzzer TARGET --corpus FOLDER --mutants 0):"
  ls -1 "$out/artifacts"/*
fi
exit $status
