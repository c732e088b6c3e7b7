# The mechanics of scripts/gpu-check.sh (sourced by it): logging, timing, pinning, running
# zoobench and the exporter, GPU and CPU placement. The plan (which stages, which models) is in
# gpu-check.sh.

log() { echo "== [$(date +%H:%M:%S)] $*"; }

# timed COMMAND...: runs it and logs how long it took and its status; returns that status.
timed() { local start=$SECONDS; "$@"; local rc=$?; log "$1 ... took $((SECONDS - start))s (rc $rc)"; return $rc; }

# on_cpu CPU COMMAND...: runs COMMAND (a program, not a shell function) on that one CPU
# (taskset), or as it is when CPU is empty or taskset is missing.
on_cpu() {
  local cpu=$1; shift
  if [[ -n $cpu ]] && command -v taskset > /dev/null; then taskset -c "$cpu" "$@"; else "$@"; fi
}

zb() { "$BUILD/zoobench" "$@"; }

# run_zb NAME TAIL ARGS...: `zoobench run ARGS --output-directory $RESULTS/NAME`, its progress
# and info lines left out, the last TAIL lines shown; returns zoobench's status.
# With ZB_DEADLINE (seconds since the epoch) set, zoobench gets SIGINT DEADLINE_MARGIN_S (30)
# seconds before it: it finishes the models in flight, writes their rows, and a later call with
# --resume continues; a device call so ends inside its limit with nothing lost.
run_zb() {
  local name=$1 tail_lines=$2; shift 2
  local limit=() budget=()
  if [[ -n ${ZB_DEADLINE:-} ]]; then
    local left=$((ZB_DEADLINE - $(date +%s) - ${DEADLINE_MARGIN_S:-30}))
    [[ $left -gt 20 ]] || { echo "-- $name: not started, the call's deadline is near (${left}s left)"; return 0; }
    # zoobench starts only the jobs whose checks say they end in time (a torch.compile timing
    # killed half-way lost 40-85 s of each call, 2026-12-03); the interrupt stays for the rest.
    budget=(--time-budget $((left - 10)))
    limit=(timeout -k 60 -s INT "$left")
  fi
  # The whole output (every job's progress line, with its seconds) stays in $LOGS.
  "${limit[@]}" "$BUILD/zoobench" run "$@" "${budget[@]}" --output-directory "$RESULTS/$name" 2>&1 |
    tee -a "$LOGS/run-$name.log" | grep -v "^zoobench info" | tail -"$tail_lines"
  return "${PIPESTATUS[0]}"
}

# export_part NAME ARGS...: one exporter process into its own zoo ($ZOO.parts/NAME; the
# exporter's index is per zoo, merge_zoos.py joins them), traced on CUDA. The marker
# $ZOO.parts/.NAME.exported says the part is finished (the table's checks start on it).
export_part() {
  local name=$1; shift
  $PY tools/export_zoo.py --zoo "$ZOO.parts/$name" --device cuda "$@" > "$LOGS/export-$name.log" 2>&1
  touch "$ZOO.parts/.$name.exported"
  echo "-- export $name: $(tail -1 "$LOGS/export-$name.log")"
}

# regex_of NAME...: ^(a|b|c)$ for -k / -x.
regex_of() { local IFS='|'; echo "^($*)\$"; }

physical_gpus() { nvidia-smi -L 2>/dev/null | wc -l; }

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

# Two workers: one per GPU when two are visible, else both on the one GPU.
two_workers() {
  local visible
  if [[ -n ${CUDA_VISIBLE_DEVICES:-} ]]; then
    visible=$(tr ',' '\n' <<< "$CUDA_VISIBLE_DEVICES" | wc -l)
  else
    visible=$(physical_gpus)
  fi
  if [[ $visible -ge 2 ]]; then echo cuda:0,cuda:1; else echo cuda:0,cuda:0; fi
}

# One worker per GPU: for timings, never two workers on one GPU.
one_worker_per_gpu() {
  local gpus
  gpus=$(physical_gpus)
  if [[ $gpus -ge 2 ]]; then echo cuda:0,cuda:1; else echo cuda; fi
}

# The lanes keep to their own CPUs (taskset): the timing lane whole physical cores near GPU 0,
# the checking lane the rest (scripts/lane_cpus.py), so launch-bound timing runs never share a
# core.
lane_cpus() {
  command -v taskset > /dev/null || return 0
  local split
  split=($($PY scripts/lane_cpus.py 0 2> /dev/null))
  [[ ${#split[@]} -eq 2 ]] || return 0
  if [[ $1 == timing ]]; then echo taskset -c "${split[0]}"; else echo taskset -c "${split[1]}"; fi
}

# Waits until a marker file exists or `limit` seconds pass.
wait_for() {
  local marker=$1 what=$2 limit=$3 waited=0
  while [[ ! -f $marker && $waited -lt $limit ]]; do sleep 2; waited=$((waited + 2)); done
  [[ -f $marker ]] || log "$what still running after ${waited}s: going on beside it"
}
