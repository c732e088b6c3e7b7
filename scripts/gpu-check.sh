#!/usr/bin/env bash
# zoobench on the GPU machine: build against its PyTorch, test, and run the suites. Each stage
# is one zoobench (or ctest, or benchmark) command; docs/gpu.md says what each measures and how
# to continue a long run.
#
#   scripts/gpu-check.sh                 env build test smoke
#   scripts/gpu-check.sh STAGE...        the named stages, in the plan's order
#   scripts/gpu-check.sh --detach STAGE...   the same in the background, in a copy of the checkout
#   scripts/gpu-check.sh --poll [SECONDS]    waits up to SECONDS for it, then shows how it stands
#   scripts/gpu-check.sh --collect [DIR]     its logs and result rows into DIR (default $OUT)
#
# Stages: env build test smoke lists lists-train upstream breaks eager-check turnaround
#         upstream-turnaround table dropout overhead interpreter pack
# shellcheck disable=SC2317  # the stages are called by name
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
ROOT=$PWD
OUT=${OUT:-$ROOT/gpu-out}
LOGS=${LOGS:-$ROOT/gpu-logs}
BUILD=${BUILD:-build-gpu}
PY=${PY:-python3}
ZOO=${ZOO:-zoo-gpu}
RESULTS=${RESULTS:-results-gpu}
JOBS=${JOBS:-$(nproc)}
TORCHBENCH_DIR=${TORCHBENCH_DIR:-$ROOT/.torchbench}
LISTS=${LISTS:-torchbench huggingface timm_models}
LISTS_BACKEND=${LISTS_BACKEND:-inductor}
KINDS=${KINDS:-accuracy performance}  # what lists and upstream check and time
ZOO_MAX_GB=${ZOO_MAX_GB:-30}
TABLE_BACKENDS=${TABLE_BACKENDS:-python_eager,jit,cudagraphs,aot_inductor,inductor:default,inductor}
# turnaround: the models of the side-by-side (docs/performance.md), the suite they are in, and
# zoobench's pipelines (empty: its default). The default models are built from the checkout's own
# code, which upstream's harness loads offline too (torchvision's models download weights there).
TURN_SUITE=${TURN_SUITE:-torchbench}
TURN_MODELS=${TURN_MODELS:-BERT_pytorch|phlippe_resnet|phlippe_densenet|pytorch_unet|dcgan|LearningToPaint|nvidia_deeprecommender|hf_Bert}
TURN_JOBS=${TURN_JOBS:-}  # zoobench's --jobs: a number, or default; several, one run each
mkdir -p "$OUT" "$LOGS"
# The exporter reads suite files through zoobench (tools/zoo_export/suite_config.py): this build.
export ZOOBENCH_BIN=$ROOT/$BUILD/zoobench
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
source scripts/gpu-lib.sh

# A run longer than the shell that starts it: in a copy of the checkout of its own (so that
# updating or re-copying the checkout cannot take files, the build or the TorchBench copy from
# under it), detached from the shell that starts it (setsid, so that it outlives that shell).
DETACH_DIR=${DETACH_DIR:-/tmp/zoobench-gpu-run}
detached_pid() { cat "$DETACH_DIR/.pid" 2> /dev/null; }
detached_running() { local pid; pid=$(detached_pid) && [[ -n $pid ]] && kill -0 "$pid" 2> /dev/null; }
case ${1:-} in
  --detach)
    shift
    detached_running && { echo "a detached run is under way in $DETACH_DIR (--poll)"; exit 2; }
    mkdir -p "$DETACH_DIR"
    skip=(--exclude="./$ZOO*" --exclude="./$RESULTS" --exclude=./gpu-logs --exclude=./gpu-out)
    for folder in build build-* fuzz-build*; do  # other builds than the one the stages use
      [[ -d $folder && $folder != "$BUILD" ]] && skip+=(--exclude="./$folder")
    done
    tar -C "$ROOT" "${skip[@]}" -cf - . | tar -C "$DETACH_DIR" -xf - || exit 2
    mkdir -p "$DETACH_DIR/gpu-logs"
    (cd "$DETACH_DIR" || exit 2
     # The copied build is not where it was built: its zoobench finds its Python plugin and
     # tools through these (util/install_layout.h), as an installed one would.
     setsid nohup env OUT="$DETACH_DIR/gpu-out" LOGS="$DETACH_DIR/gpu-logs" \
       ZOOBENCH_PYTHON_PLUGIN="$DETACH_DIR/$BUILD/libzoobench_python.so" \
       ZOOBENCH_TOOLS_DIR="$DETACH_DIR/tools" \
       scripts/gpu-check.sh "$@" > gpu-logs/detached.log 2>&1 < /dev/null &
     echo $! > .pid)
    log "detached: scripts/gpu-check.sh $* in $DETACH_DIR (pid $(detached_pid)); --poll shows it"
    exit 0 ;;
  --poll)
    end=$((SECONDS + ${2:-0}))
    while detached_running && ((SECONDS < end)); do sleep 5; done
    grep -v "^zoobench info" "$DETACH_DIR/gpu-logs/detached.log" 2> /dev/null | tail -"${POLL_LINES:-25}"
    if detached_running; then log "still running (pid $(detached_pid))"; else log "finished"; fi
    exit 0 ;;
  --collect)
    into=${2:-$OUT}
    mkdir -p "$into"
    cp -r "$DETACH_DIR/$RESULTS" "$DETACH_DIR/gpu-logs" "$into/" 2> /dev/null
    ls "$into"
    exit 0 ;;
esac

PLAN=(env build test smoke lists lists-train upstream breaks eager-check turnaround
      upstream-turnaround table dropout overhead interpreter pack)
STAGES=("$@")
[[ ${#STAGES[@]} -eq 0 ]] && STAGES=(env build test smoke)

stage_env() {
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv || true
  nproc; free -g | head -2; df -h . | tail -1
  # how the CPUs are cores: the pipelines' CPU shares keep a core's threads together
  lscpu 2> /dev/null | grep -E "^(Thread\(s\) per core|Core\(s\) per socket|Socket\(s\)|NUMA node\(s\))" || true
  g++ --version | head -1; cmake --version | head -1; nvcc --version | tail -1
  $PY -c 'import torch, sys; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda)'
  $PY -c 'import timm, transformers, torchvision; print("timm", timm.__version__, "transformers", transformers.__version__, "torchvision", torchvision.__version__)'
  # pretrained weights already on the machine (offline, TorchBench's torchvision models build
  # with random weights without them)
  ls "${TORCH_HOME:-$HOME/.cache/torch}/hub/checkpoints" 2> /dev/null | head -20 || true
}

stage_build() {
  [[ -f .gpu-deps/.complete ]] || { echo "missing .gpu-deps: run scripts/fetch-gpu-deps.sh and carry .gpu-deps"; return 2; }
  if [[ ! -f $BUILD/build.ninja ]]; then
    cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_PREFIX_PATH="$($PY -c 'import torch;print(torch.utils.cmake_prefix_path)');$ROOT/.gpu-deps/root/usr" \
      -DOPENSSL_ROOT_DIR="$ROOT/.gpu-deps/root/usr" -DZOOBENCH_PYTHON="$(command -v "$PY")" \
      -DCMAKE_CUDA_ARCHITECTURES=90 -DZOOBENCH_GTEST_SOURCE_DIR="$ROOT/.gpu-deps/root/usr/src/googletest" \
      > "$LOGS/configure.log" 2>&1 || { tail -20 "$LOGS/configure.log"; return 2; }
  fi
  # -k 0: every compile error in one go, not just the first.
  cmake --build "$BUILD" -j "$JOBS" ${BUILD_TARGETS:+--target $BUILD_TARGETS} -- -k 0 > "$LOGS/build.log" 2>&1
  local rc=$?
  grep -E "error|FAILED" "$LOGS/build.log" | head -40
  return "$rc"
}

stage_test() {
  # Half the cores as parallel tests, each with its share of threads (docs/gpu.md).
  local jobs=$((JOBS / 2 > 4 ? JOBS / 2 : 4)) args
  read -ra args <<< "${CTEST_ARGS:-}"
  (cd "$BUILD" && OMP_NUM_THREADS=$((JOBS / jobs)) ctest -j "$jobs" --timeout 600 \
    --label-exclude browser --output-on-failure "${args[@]}" > "$LOGS/ctest.log" 2>&1)
  local rc=$?
  grep -E "tests passed|tests failed|\*\*\*Failed|\(Failed\)|Timeout" "$LOGS/ctest.log" | head -40
  return "$rc"
}

stage_smoke() {
  run_zb smoke 14 --suite timm_models --only mobilenetv3_large_100 --batch-size 8 \
    --backend jit --accuracy --performance --devices cuda --zoo "$ZOO"
}

# LISTS_FROM=DIR (docs/data): a list run continues from the rows kept in DIR/NAME (the rows of a
# run on another machine) when $RESULTS/NAME has none of the suite's yet. LISTS_REDO=REGEX: the
# kept rows of the models whose names match are dropped, so that the run makes them again (after
# a change that alters them, or rows made while another run shared the GPU); LISTS_REDO_TRAIN
# does it for lists-train's rows (default: LISTS_REDO).
seed_list_rows() {
  local name=$1 suite=$2 redo=$3 from=${LISTS_FROM:-}/$1
  [[ -n ${LISTS_FROM:-} && -d $from ]] || return 0
  compgen -G "$RESULTS/$name/${suite}_*" > /dev/null && return 0
  mkdir -p "$RESULTS/$name"
  cp "$from/${suite}_"*.csv "$from/${suite}_"*.json "$RESULTS/$name/" 2> /dev/null
  echo "-- $name: continuing from the $suite rows in $from"
  [[ -z $redo ]] || "$PY" scripts/drop_result_rows.py "$redo" "$RESULTS/$name"
}

# The seed job: each list with torch.compile, every model exported on demand within a disk
# budget; --resume continues a run that a deadline (ZB_DEADLINE) or an interrupt ended.
stage_lists() {
  local suite rc=0 kind kinds=()
  for kind in $KINDS; do kinds+=("--$kind"); done
  for suite in $LISTS; do
    seed_list_rows "lists-$LISTS_BACKEND-inference" "$suite" "${LISTS_REDO:-}"
    run_zb "lists-$LISTS_BACKEND-inference" 16 --suite "$suite" --backend "$LISTS_BACKEND" \
      "${kinds[@]}" --devices cuda --torchbench-dir "$TORCHBENCH_DIR" --zoo "$ZOO" \
      --zoo-max-gb "$ZOO_MAX_GB" --timeout "${MODEL_TIMEOUT_S:-900}" --keep-compile-cache --resume \
      --output-format upstream || rc=1
  done
  return "$rc"
}

stage_lists-train() {
  local suite rc=0
  for suite in $LISTS; do
    seed_list_rows "lists-$LISTS_BACKEND-training" "$suite" "${LISTS_REDO_TRAIN-${LISTS_REDO:-}}"
    run_zb "lists-$LISTS_BACKEND-training" 16 --suite "$suite" --backend "$LISTS_BACKEND" \
      --training --accuracy --devices cuda --torchbench-dir "$TORCHBENCH_DIR" --zoo "$ZOO" \
      --zoo-max-gb "$ZOO_MAX_GB" --timeout "${MODEL_TIMEOUT_S:-900}" --keep-compile-cache --resume \
      --output-format upstream || rc=1
  done
  return "$rc"
}

# Upstream's own harness on the same lists and settings as `lists` (the reference side of
# `zoobench compare --upstream`, docs/upstream-agreement.md): .upstream is made by
# scripts/upstream_harness.py prepare; a cut run continues without the models it has rows for.
#   UPSTREAM_MODES    inference and/or training (training: accuracy, as upstream's CI checks it)
#   UPSTREAM_NAMES    list (the suite's list, upstream's skips applied) or rows: the names of the
#                     list run's rows (lists, lists-train; else LISTS_FROM's), with --no-skip:
#                     the names zoobench ran despite upstream's yaml (run_despite_checkout_skip)
#   UPSTREAM_SHARDS   accuracy in that many processes at once (nothing is timed in it);
#                     performance always in one, alone on the GPU
#   LISTS_FROM=DIR    continues from DIR/upstream-<suite>/'s rows when this machine has none
stage_upstream() {
  local suite mode kind rc=0
  for suite in $LISTS; do
    for mode in ${UPSTREAM_MODES:-inference}; do
      for kind in $KINDS; do
        [[ $mode == training && $kind == performance ]] && continue
        upstream_list "$suite" "$mode" "$kind" || rc=1
      done
    done
  done
  return "$rc"
}

# upstream_harness SUITE ARGS...: upstream's SUITE.py with ARGS, offline, in .upstream (made by
# scripts/upstream_harness.py prepare), interrupted before ZB_DEADLINE; settings for it alone go
# before the call (TORCH_LOGS=graph_breaks upstream_harness ...).
upstream_harness() {
  local suite=$1; shift
  ln -sfn "$TORCHBENCH_DIR" "$ROOT/torchbench"  # torchbench.py looks for the checkout there
  (cd "$ROOT/.upstream" && HF_HUB_OFFLINE=1 within_deadline "$PY" "$suite.py" "$@")
}

# The names upstream's harness gets: the suite's list, or the list run's result rows.
upstream_names_source() {
  local suite=$1 mode=$2 csv
  [[ ${UPSTREAM_NAMES:-list} == rows ]] || { echo "suites/${suite%_models}_models_list.txt"; return; }
  for csv in "$RESULTS/lists-$LISTS_BACKEND-$mode" "${LISTS_FROM:-/nonexistent}/lists-$LISTS_BACKEND-$mode"; do
    csv=$csv/${suite}_${LISTS_BACKEND}_${mode}_float32_cuda_accuracy.csv
    [[ -f $csv ]] && { echo "$csv"; return; }
  done
  return 1
}

upstream_list() {
  local suite=$1 mode=$2 kind=$3 out=$ROOT/$RESULTS/upstream source shards=1 i filter pids=() rc=0
  local file=inductor_${suite}_float32_${mode}_cuda_$kind.csv extra=()
  source=$(upstream_names_source "$suite" "$mode") || { echo "-- upstream $suite $mode: no rows of the list run"; return 1; }
  [[ ${UPSTREAM_NAMES:-list} == rows ]] && extra=(--no-skip)
  [[ $kind == accuracy ]] && shards=${UPSTREAM_SHARDS:-1}
  mkdir -p "$out"
  # LISTS_FROM=DIR: continue from the rows kept in DIR/upstream-<suite>/ (another machine's run)
  local kept=${LISTS_FROM:-/nonexistent}/upstream-${suite%_models}/$file
  if [[ ! -f $out/$file && -f $kept ]]; then
    cp "$kept" "$out/$file" && echo "-- upstream $suite $mode $kind: continuing from $kept"
  fi
  for ((i = 0; i < shards; i++)); do
    filter=$($PY scripts/upstream_harness.py models "$source" --done "$out/$file" "$out/${file%.csv}".part*.csv \
      --shards "$shards" --shard "$i")
    [[ -n $filter ]] || continue
    upstream_harness "$suite" "--$kind" "--$mode" --backend inductor --device cuda -k "$filter" \
      "${extra[@]}" --retain-output --output-directory "$out" --output "${file%.csv}.part$i.csv" \
      --timeout "${MODEL_TIMEOUT_S:-900}" >> "$LOGS/upstream-$suite-$mode-$kind.part$i.log" 2>&1 &
    pids+=($!)
  done
  for i in "${pids[@]}"; do wait "$i" || rc=1; done
  $PY scripts/upstream_harness.py merge "$out/$file" "$out/${file%.csv}".part*.csv
  tail -qn 2 "$LOGS/upstream-$suite-$mode-$kind".part*.log 2> /dev/null
  return "$rc"
}

# The seed job's turnaround on $TURN_MODELS: README's command from an empty zoo and a cold
# compile cache, inference accuracy + performance, then training accuracy; the wall time of each
# is the `timed` line, where each model's time went is scripts/phase_times.py over the logs.
stage_turnaround() {
  local jobs rc=0
  for jobs in ${TURN_JOBS:-default}; do  # several (TURN_JOBS="default 1"): one run after the other
    turnaround_with_jobs "$jobs" || rc=1
  done
  # Both ways run: whether the pipelines' timings agree with one model at a time's.
  local pipelines=$RESULTS/turnaround-jobs-default-inference alone=$RESULTS/turnaround-jobs-1-inference
  if [[ -d $pipelines && -d $alone ]]; then
    "$PY" scripts/timing_agreement.py "$pipelines" "$alone" | tee "$LOGS/timing-agreement.md" || rc=1
  fi
  return "$rc"
}

turnaround_with_jobs() {
  local tag=jobs-$1 jobs=() extra=() rc=0
  [[ $1 != default ]] && jobs=(--jobs "$1")
  rm -rf "$ZOO-turnaround-$tag" "$RESULTS/turnaround-$tag"*
  local common=(--suite "$TURN_SUITE" -k "^($TURN_MODELS)\$" --backend inductor --devices cuda
                --torchbench-dir "$TORCHBENCH_DIR" --zoo "$ZOO-turnaround-$tag" --timeout 900
                --output-format upstream "${jobs[@]}")
  # TURN_FLAGS: more of zoobench's flags for both runs (word-split), e.g. "--amp --ci"
  read -r -a extra <<< "${TURN_FLAGS:-}"
  common+=("${extra[@]}")
  if [[ ${TURN_INFERENCE:-1} == 1 ]]; then
    timed run_zb "turnaround-$tag-inference" 30 "${common[@]}" --accuracy --performance || rc=1
  fi
  if [[ ${TURN_TRAINING:-1} == 1 ]]; then
    timed run_zb "turnaround-$tag-training" 20 "${common[@]}" --training --accuracy || rc=1
  fi
  return "$rc"
}

# The same models through upstream's harness (.upstream, scripts/upstream_harness.py prepare),
# one command per experiment as its users run it (TURN_UPSTREAM_KINDS: which), in a cache of
# its own that starts empty on a fresh machine.
stage_upstream-turnaround() {
  local out=$ROOT/$RESULTS/upstream-turnaround rc=0 kind mode
  mkdir -p "$out"
  for kind in ${TURN_UPSTREAM_KINDS:-accuracy-inference performance-inference accuracy-training}; do
    mode=${kind#*-}
    TORCHINDUCTOR_CACHE_DIR=/tmp/upstream-turnaround-cache \
      TRITON_CACHE_DIR=/tmp/upstream-turnaround-cache/triton \
      timed upstream_harness "$TURN_SUITE" "--${kind%-*}" "--$mode" --backend inductor \
      --device cuda -k "^($TURN_MODELS)\$" --output-directory "$out" \
      --output "inductor_${TURN_SUITE}_float32_${mode}_cuda_${kind%-*}.csv" --timeout 900 \
      >> "$LOGS/upstream-turnaround.log" 2>&1 || rc=1
    grep "took" "$LOGS/upstream-turnaround.log" | tail -1
  done
  return "$rc"
}

# Where each side breaks the graph, on BREAK_MODELS (a |-separated list, default hf_Bert, whose
# training count differs, and nanogpt, whose does not) in BREAK_MODE (training): upstream's
# harness with dynamo's graph_breaks log, whose break sites are printed, then zoobench, whose
# rows list each break's reason and count (detail.graph_break_reasons).
stage_breaks() {
  local models=${BREAK_MODELS:-hf_Bert|nanogpt} mode=${BREAK_MODE:-training} rc=0
  local suite=${BREAK_SUITE:-torchbench} log=$LOGS/breaks-upstream-$mode.log zb_mode=()
  [[ $mode == training ]] && zb_mode=(--training)
  mkdir -p "$ROOT/$RESULTS/breaks-upstream"  # upstream's harness writes its file, not the folder
  TORCH_LOGS=graph_breaks upstream_harness "$suite" --accuracy "--$mode" --backend inductor \
    --device cuda -k "^($models)\$" --no-skip --output-directory "$ROOT/$RESULTS/breaks-upstream" \
    --output "inductor_${suite}_float32_${mode}_cuda_accuracy.csv" > "$log" 2>&1 || rc=1
  grep -E "^Running|Graph break in user code|Graph Break Reason|^ +Explanation" "$log" | cut -c1-240
  cat "$ROOT/$RESULTS/breaks-upstream/"*.csv 2> /dev/null
  run_zb "breaks-zoobench" 6 --suite "$suite" -k "^($models)\$" --backend inductor "${zb_mode[@]}" \
    --accuracy --devices cuda --torchbench-dir "$TORCHBENCH_DIR" --zoo "$ZOO" --timeout 900 \
    --output-format upstream || rc=1
  return "$rc"
}

# Launch-bound models' eager timings, the same models run four ways one after the other: timed
# in a process that times only, after the accuracy check in the same process (the default of a
# torch.compile run), the same with --pause-pipelines, and one model at a time. A way of running
# that slows the eager side's Python loop shows as a slower eager latency for the same kernel
# time (scripts/eager_check.py prints them side by side).
stage_eager-check() {
  local models=${EAGER_MODELS:-hf_Bert|BERT_pytorch|lennard_jones|nanogpt|phlippe_resnet|dlrm|hf_DistilBert|llama}
  local common=(--suite torchbench -k "^($models)\$" --backend inductor --devices cuda
                --torchbench-dir "$TORCHBENCH_DIR" --zoo "$ZOO-eager-check" --timeout 600
                --keep-compile-cache) rc=0 way
  rm -rf "$RESULTS"/eager-check-*
  for way in ${EAGER_WAYS:-time-only check-then-time paused one-at-a-time}; do
    case $way in
      time-only) run_zb "eager-check-$way" 4 "${common[@]}" --performance || rc=1 ;;
      check-then-time) run_zb "eager-check-$way" 4 "${common[@]}" --accuracy --performance || rc=1 ;;
      paused) run_zb "eager-check-$way" 4 "${common[@]}" --accuracy --performance \
                --pause-pipelines || rc=1 ;;
      one-at-a-time) run_zb "eager-check-$way" 4 "${common[@]}" --performance --jobs 1 || rc=1 ;;
    esac
  done
  "$PY" scripts/eager_check.py "$RESULTS"/eager-check-*
  return "$rc"
}

# The side-by-side table: zoobench's deployment paths and torch.compile's in one latency matrix.
stage_table() {
  run_zb table 40 --suite "${TABLE_SUITE:-timm_models}" --batch-size 8 --backend "$TABLE_BACKENDS" \
    --accuracy --performance --devices cuda --accuracy-workers "${ACCURACY_WORKERS:-3}" \
    --zoo "$ZOO" --timeout 900 --resume
}

stage_dropout() {
  "$BUILD/bench/bench_dropout" --benchmark_filter=Cuda --benchmark_format=json \
    > "$LOGS/bench-dropout.json" 2> "$LOGS/bench-dropout.err"
  grep -E '"name"|"real_time"' "$LOGS/bench-dropout.json" | paste - - | head -20
}

stage_overhead() {
  "$BUILD/bench/bench_python_bridge" --benchmark_format=json \
    > "$LOGS/bench-python-bridge.json" 2> "$LOGS/bench-python-bridge.err"
  grep -E '"name"|"real_time"' "$LOGS/bench-python-bridge.json" | paste - - | grep median
}

# How fast Python runs in the interpreter zoobench embeds (the shared libpython) against the
# python executable upstream's harness runs in, and in one linked with the static libpython: a
# Python loop and cold torch.compiles, on 4 CPUs as a model's pipeline has them.
stage_interpreter() {
  within_deadline "$PY" bench/embedded_interpreter.py --python "$(command -v "$PY")" --compile \
    --runs "${INTERPRETER_RUNS:-3}" --cpus "${INTERPRETER_CPUS:-0-3}"
}

stage_pack() {
  symbolize_crashes "$RESULTS"/*/logs/*.log
  local indexes
  mapfile -t indexes < <(find "$ZOO" -name index.json 2> /dev/null)
  tar czf "$OUT/gpu-check.tar.gz" --exclude="*.pt" --exclude="*.pt2" "$LOGS" "$RESULTS" "${indexes[@]}"
  ls -la "$OUT"
}

for stage in "${STAGES[@]}"; do
  [[ " ${PLAN[*]} " == *" $stage "* ]] || { echo "unknown stage '$stage' (stages: ${PLAN[*]})"; exit 2; }
done
status=0
for stage in "${PLAN[@]}"; do
  [[ " ${STAGES[*]} " == *" $stage "* ]] || continue
  log "$stage"
  if [[ $stage == build ]]; then
    timed stage_build || { log "build failed"; exit 1; }
  else
    timed "stage_$stage" || status=1
  fi
done
log "done (status $status)"
exit $status
