# shellcheck shell=bash
# The mechanics of scripts/gpu-check.sh (sourced by it): logging, timing, running zoobench
# within a deadline, naming the frames of crash reports. The plan is in gpu-check.sh.

log() { echo "== [$(date +%H:%M:%S)] $*"; }

# timed COMMAND...: runs it and logs how long it took and its status; returns that status.
timed() { local start=$SECONDS; "$@"; local rc=$?; log "$1 ... took $((SECONDS - start))s (rc $rc)"; return $rc; }

zb() { "$BUILD/zoobench" "$@"; }

# run_zb NAME TAIL ARGS...: `zoobench run ARGS --output-directory $RESULTS/NAME`, its progress
# and info lines left out, the last TAIL lines shown; returns zoobench's status.
# With ZB_DEADLINE (seconds since the epoch) set, zoobench gets SIGINT DEADLINE_MARGIN_S (30)
# seconds before it: it finishes the models in flight and writes their rows, and the same
# command with --resume continues; a machine lent for a fixed time loses nothing.
run_zb() {
  local name=$1 tail_lines=$2; shift 2
  local limit=() budget=()
  if [[ -n ${ZB_DEADLINE:-} ]]; then
    local left=$((ZB_DEADLINE - $(date +%s) - ${DEADLINE_MARGIN_S:-30}))
    [[ $left -gt 20 ]] || { echo "-- $name: not started, ZB_DEADLINE is near (${left}s left)"; return 0; }
    # zoobench starts only the jobs whose checks say they end in time (a timing killed half-way
    # is lost work); the interrupt stays for the rest.
    budget=(--time-budget $((left - 10)))
    limit=(timeout -k 60 -s INT "$left")
  fi
  # The whole output (every job's progress line, with its seconds) stays in $LOGS.
  "${limit[@]}" "$BUILD/zoobench" run "$@" "${budget[@]}" --output-directory "$RESULTS/$name" 2>&1 |
    tee -a "$LOGS/run-$name.log" | grep -v "^zoobench info" | tail -"$tail_lines"
  return "${PIPESTATUS[0]}"
}

# within_deadline COMMAND...: the command, interrupted DEADLINE_MARGIN_S before ZB_DEADLINE.
within_deadline() {
  [[ -n ${ZB_DEADLINE:-} ]] || { "$@"; return; }
  local left=$((ZB_DEADLINE - $(date +%s) - ${DEADLINE_MARGIN_S:-30}))
  [[ $left -gt 20 ]] || { echo "-- not started, ZB_DEADLINE is near: $*"; return 0; }
  timeout -k 30 -s INT "$left" "$@"
}

# symbolize_crashes FILE...: the zoobench frames of crash reports in these logs, as function
# names (the binary here is not stripped; the copy on the CPU machine is another build).
symbolize_crashes() {
  local offsets
  offsets=$(grep -ho 'zoobench(+0x[0-9a-f]*)' "$@" 2>/dev/null | grep -o '0x[0-9a-f]*' | sort -u)
  [[ -n $offsets ]] || return 0
  echo "-- zoobench frames of the crash reports in: $*"
  # shellcheck disable=SC2086
  addr2line -f -C -p -e "$BUILD/zoobench" $offsets 2>&1 | sed 's/^/   /'
}
