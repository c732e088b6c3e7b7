#!/usr/bin/env bash
# scripts/slurm/ against a real Slurm: munged, slurmctld and slurmd started here on localhost as a
# one-node cluster with 2 CPUs (generated slurm.conf, everything in a temporary folder), the demo
# zoo submitted as a 2-task array plus the merge job, as README's "Spreading a suite over
# machines" says. Checks:
#   1. a task cancelled mid-run (scancel ARRAY_1) keeps its finished rows; the merge job then
#      fails and lists that task and the models without rows;
#   2. submitting the same command again runs only the missing models (the finished task's files
#      do not change, the cancelled task's earlier rows stay as they were) and the merged CSVs
#      hold exactly the rows of a single-process run of the same models (names, statuses), none
#      twice;
#   3. a model whose file on the shared zoo differs from its manifest's sha256 fails alone, with
#      the reason in its row: the task that holds it finishes its other model.
# The daemons are stopped and the temporary folder removed on every exit (trap). Exit 77 (ctest
# SKIP) only when a daemon cannot start, saying which and why.
#   slurm_array_test.sh ZOOBENCH REPO_ROOT PYTHON ZOO_CACHE_DIR
set -uo pipefail

# Absolute paths: the jobs and the single run start in the temporary folder.
zoobench=$(realpath "$1") repo=$(realpath "$2") python=$3 zoo_cache=$(realpath -m "$4")
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
models=(mobilenet_v2 resnet18 shufflenet_v2_x1_0 squeezenet1_1 text_encoder_small)
corrupted=squeezenet1_1
started=$SECONDS

log() { echo "[slurm-test $((SECONDS - started))s] $*"; }
fail() {
  echo "FAIL: $*"
  exit 1
}
skip() {
  echo "SKIP: $*"
  exit 77
}

# Everything of this test lives under $tmp; the daemons' pids are kept to stop exactly them.
tmp=$(mktemp -d /tmp/zoobench-slurm-test.XXXXXX)
chmod 755 "$tmp"
munged_pid="" slurmctld_pid="" slurmd_pid="" single_pid=""

cleanup() {
  local status=$?
  trap - EXIT INT TERM
  if ((status != 0 && status != 77)); then
    for f in "$tmp"/log/*.log "$tmp"/results/slurm/*.out "$tmp"/single.log; do
      [[ -s "$f" ]] && { echo "---- last lines of $f"; tail -n 25 "$f"; }
    done
  fi
  [[ -n "$single_pid" ]] && kill "$single_pid" 2>/dev/null
  if [[ -n "$slurmctld_pid" ]] && kill -0 "$slurmctld_pid" 2>/dev/null; then
    # Jobs first (their steps are slurmd's children and outlive it), then the daemons.
    local jobs
    jobs=$(squeue -h -o %A 2>/dev/null | sort -u)
    [[ -n "$jobs" ]] && scancel --quiet $jobs 2>/dev/null
    for _ in $(seq 40); do
      [[ -z "$(squeue -h -o %i 2>/dev/null)" ]] && break
      sleep 0.5
    done
    scontrol shutdown >/dev/null 2>&1
  fi
  [[ -n "$munged_pid" ]] && kill "$munged_pid" 2>/dev/null
  local left=()
  for pid in $slurmd_pid $slurmctld_pid $munged_pid $single_pid; do
    for _ in $(seq 40); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.25
    done
    if kill -0 "$pid" 2>/dev/null; then
      left+=("$pid")
      kill -9 "$pid" 2>/dev/null
    fi
    wait "$pid" 2>/dev/null
  done
  rm -rf "$tmp"
  if ((${#left[@]})); then
    echo "FAIL: processes still running after shutdown, killed: ${left[*]}"
    status=1
  else
    echo "daemons stopped, $tmp removed"
  fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- the cluster -------------------------------------------------------------------------------
for tool in munged mungekey slurmctld slurmd sbatch squeue scancel scontrol sinfo; do
  command -v "$tool" >/dev/null ||
    skip "$tool is not installed, so the daemons cannot start (scripts/setup-deps.sh installs slurm-wlm and munge)"
done
((EUID == 0)) ||
  skip "slurmd cannot start as $(id -un): it starts each job as its user, which needs root"
mkdir -p "$tmp"/{munge,state,spool,log}
# Slurm clients read the cluster from SLURM_CONF; a surrounding Slurm job's variables must not leak.
mapfile -t slurm_vars < <(compgen -v SLURM_)
((${#slurm_vars[@]})) && unset "${slurm_vars[@]}"
export SLURM_CONF=$tmp/slurm.conf

# started_or_skip NAME PID LOG CHECK...: wait up to 30 s for CHECK to succeed while NAME runs.
started_or_skip() {
  local name=$1 pid=$2 logfile=$3
  shift 3
  for _ in $(seq 60); do
    "$@" >/dev/null 2>&1 && return 0
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.5
  done
  skip "$name cannot start here: $(tail -n 5 "$logfile" 2>/dev/null | tr '\n' ' ')"
}

mungekey --create --keyfile="$tmp/munge/munge.key" >"$tmp/log/mungekey.log" 2>&1 ||
  skip "munged cannot start: mungekey failed: $(cat "$tmp/log/mungekey.log")"
# --force: munged as root, with its socket under /tmp.
munged --foreground --force --socket="$tmp/munge/munge.socket" --key-file="$tmp/munge/munge.key" \
  --pid-file="$tmp/munge/munged.pid" --seed-file="$tmp/munge/munged.seed" \
  --log-file="$tmp/log/munged.log" >"$tmp/log/munged.out.log" 2>&1 &
munged_pid=$!
munge_roundtrip() { munge -n -S "$tmp/munge/munge.socket" | unmunge -S "$tmp/munge/munge.socket"; }
started_or_skip munged "$munged_pid" "$tmp/log/munged.out.log" munge_roundtrip

read -r ctld_port slurmd_port < <("$python" -c '
import socket
socks = [socket.socket() for _ in range(2)]
for s in socks: s.bind(("127.0.0.1", 0))
print(*(s.getsockname()[1] for s in socks))')
node=$(hostname -s)
cat >"$SLURM_CONF" <<CONF
# One node, 2 CPUs, no cgroups, no accounting: enough for array jobs and dependencies.
ClusterName=zoobenchtest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$tmp/munge/munge.socket
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
KillWait=10
MinJobAge=600
NodeName=$node NodeAddr=127.0.0.1 CPUs=2 RealMemory=1000 State=UNKNOWN
PartitionName=test Nodes=$node Default=YES MaxTime=INFINITE State=UP
CONF
slurmctld -D -f "$SLURM_CONF" >"$tmp/log/slurmctld.out.log" 2>&1 &
slurmctld_pid=$!
started_or_skip slurmctld "$slurmctld_pid" "$tmp/log/slurmctld.out.log" scontrol ping
slurmd -D -f "$SLURM_CONF" >"$tmp/log/slurmd.out.log" 2>&1 &
slurmd_pid=$!
node_idle() { [[ "$(sinfo -h -n "$node" -o %T)" == idle ]]; }
started_or_skip slurmd "$slurmd_pid" "$tmp/log/slurmd.out.log" node_idle
log "cluster up: node $node idle, slurmctld on port $ctld_port"

# ---- the zoo: exported once (cached in the build folder), shared by "every node" ---------------
have_zoo() {
  for m in "${models[@]}"; do [[ -f "$zoo_cache/demo/$m/manifest.json" ]] || return 1; done
}
if ! have_zoo; then
  log "exporting ${models[*]} into $zoo_cache"
  "$python" "$repo/tools/export_zoo.py" --suite demo -x densenet -x mobilenet_v3 --skip-exported \
    --zoo "$zoo_cache" >"$tmp/export.log" 2>&1 || fail "export_zoo.py failed: $(tail -n 5 "$tmp/export.log")"
  have_zoo || fail "the export wrote no manifest for some of ${models[*]}"
fi
cp -al "$zoo_cache" "$tmp/zoo"
# What a node with a stale or damaged copy of the shared folder sees: a file that is not the one
# the manifest's sha256 names (replaced, not edited: the copy shares the cache's files).
artifact="$tmp/zoo/demo/$corrupted/eval.pt"
cp "$artifact" "$artifact.new" && printf 'x' >>"$artifact.new" && mv "$artifact.new" "$artifact"

flags=(--zoo "$tmp/zoo" --suite demo -x densenet -x mobilenet_v3 --accuracy --performance
       --repeat 2 --warmup 1 --settle-iterations 0 --iterations-per-run 1 --timeout 300)
submit=("$repo/scripts/slurm/submit.sh" --parsable --partitions 2 --results "$tmp/results"
        --zoobench "$zoobench" --sbatch=--cpus-per-task=1 -- "${flags[@]}")
cd "$tmp" || fail "cannot enter $tmp"
# --partitions 2 splits the demo list's seven models as upstream's harness does, before -x
# narrows them (3 + 4): task 0 keeps mobilenet_v2 alone, task 1 the other four, and task 1 is
# the one cancelled mid-run.
victim=1 other=0
victim_models=("${models[@]:1:4}")

# The same models in one process, for comparison; it runs while the cluster does.
"$zoobench" run "${flags[@]}" --output-directory "$tmp/single" >"$tmp/single.log" 2>&1 &
single_pid=$!

# wait_for SECONDS WHAT CHECK...
wait_for() {
  local bound=$1 what=$2
  shift 2
  local until=$((SECONDS + bound))
  while ((SECONDS < until)); do
    "$@" && return 0
    sleep 0.5
  done
  fail "$what: not within ${bound}s"
}
job_gone() { [[ -z "$(squeue -h -j "$1" -o %i 2>/dev/null)" ]]; }
job_state() { scontrol show job "$1" -o | grep -o 'JobState=[A-Z_]*' | head -1 | cut -d= -f2; }
data_rows() { [[ -f "$1" ]] && echo $(($(wc -l <"$1") - 1)) || echo 0; }
models_in() { cut -d, -f2 "$1" | tail -n +2 | sort -u | tr '\n' ' '; }

accuracy_csv=demo_jit_inference_float32_cpu_accuracy.csv
performance_csv=demo_jit_inference_float32_cpu_performance.csv

# ---- 1. submit, cancel task 1 after its first model ------------------------------------------
read -r array_job merge_job < <("${submit[@]}") || fail "submit.sh failed"
[[ -n "$merge_job" ]] || fail "submit.sh printed no job ids"
log "submitted array job $array_job and merge job $merge_job"
first_model_done() { (($(data_rows "$tmp/results/part${victim}/$performance_csv") >= 1)); }
wait_for 240 "task ${victim} finishing its first model" first_model_done
scancel "${array_job}_${victim}" || fail "scancel ${array_job}_${victim} failed"
wait_for 60 "task ${victim} ending after scancel" job_gone "${array_job}_${victim}"
done_at_cancel=$(models_in "$tmp/results/part${victim}/$performance_csv")
log "task ${victim} cancelled with these models done: $done_at_cancel"
(($(wc -w <<<"$done_at_cancel") < ${#victim_models[@]})) ||
  fail "task ${victim} ran all its ${#victim_models[@]} models before scancel reached it: nothing was cancelled mid-run"
grep -q '^exit 0 ' "$tmp/results/part${victim}/slurm-task.txt" && fail "task ${victim} recorded exit 0 after scancel"
mkdir -p "$tmp/cancelled"
cp "$tmp/results/part${victim}/"*.csv "$tmp/cancelled/"

wait_for 300 "merge job $merge_job ending" job_gone "$merge_job"
[[ "$(job_state "$merge_job")" == FAILED ]] ||
  fail "merge job after the cancelled task: state $(job_state "$merge_job"), expected FAILED (exit 1: incomplete)"
grep -q "^task ${victim}: " "$tmp/results/incomplete.txt" || fail "incomplete.txt does not list task ${victim}"
grep -q "^task ${other}: " "$tmp/results/incomplete.txt" && fail "incomplete.txt lists task ${other}, which finished"
for m in "${victim_models[@]}"; do
  [[ " $done_at_cancel " == *" $m "* ]] && continue
  grep -q "no row for .*\b$m\b" "$tmp/results/incomplete.txt" || fail "incomplete.txt does not name missing $m"
done
log "merge job listed what is missing:"
sed 's/^/    /' "$tmp/results/incomplete.txt"
mkdir -p "$tmp/part${other}-before"
cp "$tmp/results/part${other}/"*.csv "$tmp/part${other}-before/"

# ---- 2. the same command again: only the missing models run ------------------------------------
read -r array_job merge_job < <("${submit[@]}") || fail "re-submission failed"
log "re-submitted: array job $array_job, merge job $merge_job"
wait_for 300 "merge job $merge_job ending" job_gone "$merge_job"
[[ "$(job_state "$merge_job")" == COMPLETED ]] ||
  fail "merge job after re-submission: state $(job_state "$merge_job"): $(cat "$tmp/results/incomplete.txt")"
[[ -s "$tmp/results/incomplete.txt" ]] && fail "incomplete.txt not empty: $(cat "$tmp/results/incomplete.txt")"
for f in report.md report.html "merged/$accuracy_csv" "merged/$performance_csv"; do
  [[ -s "$tmp/results/$f" ]] || fail "the merge job wrote no $f"
done
for f in "$tmp/part${other}-before/"*.csv; do
  cmp -s "$f" "$tmp/results/part${other}/$(basename "$f")" ||
    fail "task ${other} had nothing left to run, yet $(basename "$f") changed on re-submission"
done
for f in "$tmp/cancelled/"*.csv; do
  while IFS= read -r line; do
    grep -qxF -- "$line" "$tmp/results/part${victim}/$(basename "$f")" ||
      fail "a row task ${victim} wrote before scancel changed or went away: $line"
  done <"$f"
done
for f in "$tmp"/results/part*/*.csv; do
  dup=$(cut -d, -f2 "$f" | sort | uniq -d)
  [[ -z "$dup" ]] || fail "$f has rows twice: $dup"
done
log "re-submission ran only the missing models; task ${victim}'s earlier rows and task ${other}'s files unchanged"

# ---- 3. against one process ---------------------------------------------------------------------
# Exit 1: the run ended and some rows failed (the damaged model's); anything else is a failure.
wait "$single_pid"
single_status=$?
((single_status <= 1)) || fail "the single-process run failed ($single_status): $(tail -n 5 "$tmp/single.log")"
single_pid=""
"$python" "$here/compare_rows.py" "$tmp/results/merged" "$tmp/single" || fail "merged rows differ"
row=$(grep "^cpu,$corrupted," "$tmp/results/merged/$accuracy_csv")
[[ "$row" == *model_fail_to_load*sha256* ]] || fail "the $corrupted row does not give the sha256 reason: $row"
grep -q "^cpu,text_encoder_small,.*,pass," "$tmp/results/merged/$accuracy_csv" ||
  fail "text_encoder_small, in the same task as the damaged $corrupted, did not pass"
log "checked: $corrupted failed alone ($(grep -o 'has sha256[^"]*' <<<"$row" | head -c 80)...)"
log "PASS"
