#!/usr/bin/env bash
# Every fuzz target with MUTANTS seeded mutants (make fuzz): one summary line each in
# fuzz-results/summary.jsonl, failing mutants kept in fuzz-results/artifacts/. Exits 1 when
# any mutant hung, ran out of memory or died by a signal.
#   scripts/fuzz.sh FUZZER [MUTANTS=10000] [SEED=20261201]
set -uo pipefail
cd "$(dirname "$0")/.."
fuzzer=$1 mutants=${2:-10000} seed=${3:-20261201}
out=fuzz-results
mkdir -p "$out"
: > "$out/summary.jsonl"
# ASan: an error ends the mutant's process by a signal (the fuzzer counts it); LibTorch is not
# instrumented, so its new/delete pairs look mismatched to ASan; leaks of a forked child that
# _exits are not findings.
# A failed allocation returns null (operator new throws bad_alloc), so the address-space limit
# reads as out of memory, not as ASan's abort.
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=0:alloc_dealloc_mismatch=0:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:abort_on_error=1:print_stacktrace=1}
status=0
for target in $("$fuzzer" --list); do
  echo "== $target: $mutants mutants, seed $seed"
  "$fuzzer" "$target" --mutants "$mutants" --seed "$seed" --artifacts "$out/artifacts" \
    2> "$out/$target.err" | tee -a "$out/summary.jsonl"
  [[ ${PIPESTATUS[0]} -eq 0 ]] || status=1
  tail -3 "$out/$target.err"
done
exit $status
