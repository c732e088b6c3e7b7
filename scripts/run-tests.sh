#!/usr/bin/env bash
# `make test`'s last step: every test of the build folder, then ctest's summary line repeated
# at the very end (ctest prints timings and the list of skipped tests after it), so the last
# line says whether the tests passed. Exit status is ctest's.
#   scripts/run-tests.sh BUILD_DIR [ctest args...]
set -uo pipefail
build=$1; shift
log="$build/ctest-last.log"
(cd "$build" && ctest --output-on-failure "$@") 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
echo
grep -E "tests passed, [0-9]+ tests? failed out of" "$log" | tail -1 || echo "ctest printed no summary (exit $status)"
exit "$status"
