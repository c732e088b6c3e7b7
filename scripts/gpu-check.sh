#!/usr/bin/env bash
# Runs on the GPU machine (H200, PyTorch 2.11 + CUDA 13; nothing can be installed there).
#
#   scripts/gpu-check.sh                 the check (well under 10 minutes): env build test smoke
#   scripts/gpu-check.sh STAGE...        stages: env build test smoke zoo judged-cases measure pack;
#                                        measure's parts by name: latency noise bench run train
#                                        layouts extras workers judged
#   scripts/gpu-check.sh full            everything, in order (longer than one 10-minute device call)
#   BUILD_TARGETS narrows the build stage (e.g. BUILD_TARGETS=zoobench).
#   CTEST_ARGS narrows the test stage (e.g. CTEST_ARGS="-L gpu"); CTEST_EXCLUDE is the label
#   regex it leaves out (default browser; CTEST_EXCLUDE="gpu|browser" for the CPU tests only).
#
# Needs .gpu-deps/ (scripts/fetch-gpu-deps.sh, run on the CPU machine; the device tool carries
# it). Logs go to gpu-logs/, results to results-gpu/; `pack` bundles both (and the zoo index)
# into $OUT/gpu-check.tar.gz, since the device tool brings back only a few files. Stages are
# idempotent, so a warm machine can continue where the last call stopped.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${OUT:-$ROOT/gpu-out}
LOGS=${LOGS:-$ROOT/gpu-logs}
mkdir -p "$OUT" "$LOGS"
BUILD=${BUILD:-build-gpu}
PY=${PY:-python3}
ZOO=${ZOO:-zoo-gpu}
JOBS=${JOBS:-$(nproc)}
RESULTS=${RESULTS:-results-gpu}
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
STAGES=("$@")
[[ ${#STAGES[@]} -eq 0 ]] && STAGES=(env build test smoke)

log() { echo "== [$(date +%H:%M:%S)] $*"; }
# `full` runs every stage in order; measure's parts run only when named.
want() {
  local s
  for s in "${STAGES[@]}"; do [[ $s == "$1" || $s == full ]] && return 0; done
  return 1
}
named() {
  local s
  for s in "${STAGES[@]}"; do [[ $s == "$1" ]] && return 0; done
  return 1
}
timed() { local start=$SECONDS; "$@"; local rc=$?; log "$1 ... took $((SECONDS - start))s (rc $rc)"; return $rc; }
# on_cpu CPU COMMAND...: runs COMMAND (a program, not a shell function) on that one CPU
# (taskset), or as it is when CPU is empty or taskset is missing.
on_cpu() {
  local cpu=$1; shift
  if [[ -n $cpu ]] && command -v taskset > /dev/null; then taskset -c "$cpu" "$@"; else "$@"; fi
}

stage_env() {
  log "environment"
  nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv || true
  uname -a; nproc; free -g | head -2
  lscpu | grep -E "^(Model name|Socket|Core|Thread|NUMA)"; nvidia-smi topo -m 2>/dev/null | head -8
  echo "measure lanes' CPUs (timing | checking): $($PY scripts/lane_cpus.py 0 2>&1)"
  g++ --version | head -1; cmake --version | head -1; ninja --version; nvcc --version | tail -1
  $PY -c 'import torch, sys; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.get_device_name(0)); print(torch.utils.cmake_prefix_path)'
  $PY -c 'import timm, transformers, torchvision; print("timm", timm.__version__, "transformers", transformers.__version__, "torchvision", torchvision.__version__)'
}

stage_build() {
  [[ -f .gpu-deps/.complete ]] || { echo "missing .gpu-deps: run scripts/fetch-gpu-deps.sh here and carry .gpu-deps"; return 2; }
  local torch_prefix
  torch_prefix=$($PY -c 'import torch;print(torch.utils.cmake_prefix_path)')
  if [[ ! -f $BUILD/build.ninja ]]; then
    log "configure ($BUILD)"
    cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_PREFIX_PATH="$torch_prefix;$ROOT/.gpu-deps/root/usr" \
      -DZOOBENCH_PYTHON="$(command -v $PY)" -DCMAKE_CUDA_ARCHITECTURES=90 \
      -DZOOBENCH_GTEST_SOURCE_DIR="$ROOT/.gpu-deps/root/usr/src/googletest" 2>&1 | tail -25
  fi
  log "build (-j$JOBS) ${BUILD_TARGETS:-}"
  # -k 0: one call shows every compile error, not just the first. BUILD_TARGETS narrows it
  # (e.g. "zoobench" when a short call needs only the CLI).
  cmake --build "$BUILD" -j "$JOBS" ${BUILD_TARGETS:+--target $BUILD_TARGETS} -- -k 0 > "$LOGS/build.log" 2>&1
  local rc=$?
  grep -E "error|FAILED" "$LOGS/build.log" | head -60
  return $rc
}

stage_test() {
  log "ctest (labels but ${CTEST_EXCLUDE:-browser}) ${CTEST_ARGS:-}"
  # Each test process gets its share of the cores. With Torch's default (every core per
  # process) eight parallel tests ran 10-30x slower than alone on the 32-core machine
  # (2026-11-30: the judged-case test 279 s, on 2 cores here 20 s), most likely 8 x 32 threads
  # spinning on 32 cores. One --label-exclude: ctest leaves out only the tests that match every
  # one given.
  # Half the cores as parallel tests: most of a test's time there is process start (loading
  # libtorch_cuda, CUDA init, importing torch in Python), not compute, so more tests at once
  # with two threads each finish sooner than eight with four.
  local jobs=$(( JOBS / 2 > 4 ? JOBS / 2 : 4 ))
  local threads=$(( JOBS / jobs > 1 ? JOBS / jobs : 1 ))
  (cd "$BUILD" && export OMP_NUM_THREADS=$threads MKL_NUM_THREADS=$threads &&
    ctest -j "$jobs" --timeout 600 --label-exclude "${CTEST_EXCLUDE:-browser}" --output-on-failure ${CTEST_ARGS:-} > "$LOGS/ctest.log" 2>&1)
  grep -E "tests passed|tests failed|\*\*\*Failed|Not Run|\(Failed\)|Timeout|Total Test time" "$LOGS/ctest.log" | head -60
  echo "-- slowest tests (ctest -j$jobs, $threads threads each):"
  grep -E "Test +#[0-9]+: " "$LOGS/ctest.log" | awk '{print $(NF-1), $0}' | sort -rn | head -12 | cut -d' ' -f2-
  cp "$BUILD/Testing/Temporary/CTestCostData.txt" "$LOGS/" 2>/dev/null
}

# Exports run in parallel into separate zoos (the exporter's index is per zoo), then are merged.
export_part() {
  local name=$1; shift
  $PY tools/export_zoo.py --zoo "$ZOO.parts/$name" --device cuda "$@" > "$LOGS/export-$name.log" 2>&1
  echo "-- export $name: $(tail -1 "$LOGS/export-$name.log")"
}

# train.pt only where a stage trains: 3 timm models, the BERT dropout model, and the latency
# stage's mobilenetv3 and resnet50 (bs 8 and 64).
TRAINED_TIMM='^(mobilenetv3_large_100|repvgg_a2|tf_efficientnet_b0)$'
stage_zoo() {
  [[ -f $ZOO/index.json && -f $ZOO-bs64/index.json ]] && { echo "-- zoo exported before ($ZOO, $ZOO-bs64)"; return 0; }
  log "export on cuda: the 14 timm models, 4 HuggingFace models, torchbench extras (bs 8), AOTInductor packages, bs 64"
  rm -rf "$ZOO.parts" && mkdir -p "$ZOO.parts"
  export OMP_NUM_THREADS=2  # ten exporters share the cores (and the test stage may run beside)
  export_part timm --suite timm_models --batch-size 8 -x "$TRAINED_TIMM" &
  export_part timm-train --suite timm_models --batch-size 8 --training -k "$TRAINED_TIMM" &
  export_part hf --suite huggingface --batch-size 8 \
    -k '^(BertForMaskedLM|GPT2ForSequenceClassification|T5ForConditionalGeneration|AllenaiLongformerBase)$' &
  export_part tb --suite torchbench --batch-size 8 --training --only resnet50 &
  export_part tb-train --suite torchbench --batch-size 8 --training --only text_encoder_bert_dropout &
  export_part mrcnn --suite torchbench --only vision_maskrcnn &
  # AOTInductor compiles take the longest: two processes.
  export_part aoti1 --suite timm_models --batch-size 8 --aoti --no-check -k '^(mobilenetv3_large_100|repvgg_a2)$' &
  export_part aoti2 --suite timm_models --batch-size 8 --aoti --no-check -k '^(tf_efficientnet_b0|ghostnet_100)$' &
  # Batch 64 lives in its own zoo (same names as the batch 8 models).
  export_part bs64 --suite timm_models --batch-size 64 --no-check --training -k '^mobilenetv3_large_100$' &
  export_part bs64-tb --suite torchbench --batch-size 64 --no-check --training --only resnet50 &
  wait
  rm -rf "$ZOO-bs64" "$ZOO"
  $PY scripts/merge_zoos.py "$ZOO-bs64" "$ZOO.parts"/bs64* | tee "$LOGS/zoo-merge-bs64.log"
  rm -rf "$ZOO.parts"/bs64*
  $PY scripts/merge_zoos.py "$ZOO" "$ZOO.parts"/* | tee "$LOGS/zoo-merge.log"
  unset OMP_NUM_THREADS
}

# Judged accuracy cases: PyTorch's own torch._dynamo.utils.same on real timm models (eager vs
# torch.compile vs bf16 vs noise); `judged` asks `zoobench same` the same questions.
stage_judged-cases() {
  log "judged cases from real timm models (torch.compile, bf16, noise)"
  rm -rf "$ROOT/judged-gpu"
  $PY tests/gpu/accuracy/generate_judged_cases.py --out "$ROOT/judged-gpu" --device cuda > "$LOGS/judged-generate.log" 2>&1
  tail -3 "$LOGS/judged-generate.log"
}

zb() { "$BUILD/zoobench" "$@"; }

stage_smoke() {
  log "smoke: one timm model and resnet18 exported on cuda, run through zoobench"
  $PY tools/export_zoo.py --zoo "$ZOO-smoke" --device cuda --training --batch-size 8 \
    --suite timm_models --only mobilenetv3_large_100 2>&1 | tail -2
  $PY tools/export_zoo.py --zoo "$ZOO-smoke" --device cuda --training --batch-size 8 \
    --suite torchbench --only resnet18 2>&1 | tail -2
  zb run --zoo "$ZOO-smoke" --suite all --accuracy --performance --devices cuda --backend jit \
    --repeat 10 --timeout 300 --output-directory "$RESULTS/smoke" 2>&1 | grep -v "^zoobench info" | tail -12
}

# ---- measure: two lanes in parallel. The timing lane runs one model at a time; the checking
# lane runs accuracy-only work (and CPU-side checks) beside it. Both log to gpu-logs/lane-*.log.

# The 14 timm models, inference, batch 8, fp32, one backend: accuracy + performance.
run_timm() {
  local backend=$1; shift
  log "timm_models inference with $backend"
  zb run --resume --zoo "$ZOO" --suite timm_models --accuracy --performance --devices cuda --backend "$backend" \
    --repeat ${REPEAT:-15} --timeout 300 --output-directory "$RESULTS/timm-$backend" "$@" 2>&1 | grep -v "^zoobench info" | tail -20
}

# zoobench's eager latency vs a Python loop timing the same TorchScript file with CUDA events.
# Three runs of each, alternating (Python, zoobench, Python, ...), so drift hits both sides.
# Every process on one CPU (LATENCY_CPU): on 2026-11-30 that took the 3-run spread of
# mobilenetv3 training at batch 64 from 22.4% (CPUs 0-15) to 0.6%, resnet50 inference at
# batch 8 from 9.7% to 1.2% (docs/performance.md).
latency_case() {
  local zoo=$1 model=$2 mode=$3 file=eval.pt run cpu=${LATENCY_CPU:-4}
  [[ $mode == training ]] && file=train.pt
  [[ -f $zoo/$model/$file ]] || { echo "-- missing $zoo/$model/$file"; return; }
  local name="$(basename "$zoo")-${model##*/}-$mode"
  ls "$RESULTS/latency-$name-run3"/*_performance.json > /dev/null 2>&1 && { echo "-- done before: $name"; return; }
  for run in 1 2 3; do
    on_cpu "$cpu" $PY bench/python_latency.py --model "$zoo/$model/$file" --inputs "$zoo/$model/inputs.pt" --device cuda \
      --optimize off --samples 30 $([[ $mode == training ]] && echo --training) \
      > "$RESULTS/latency-python-$name-run$run.json"
    on_cpu "$cpu" "$BUILD/zoobench" run --zoo "$zoo" --suite "${model%%/*}" --only "${model##*/}" --performance --$mode --backend eager \
      --devices cuda --repeat 30 --warmup 10 --output-directory "$RESULTS/latency-$name-run$run" > /dev/null 2>&1
  done
  # Without settling iterations: what alternating with the compiled side's copy costs.
  on_cpu "$cpu" "$BUILD/zoobench" run --zoo "$zoo" --suite "${model%%/*}" --only "${model##*/}" --performance \
    --$mode --backend eager --devices cuda --repeat 30 --warmup 10 --settle-iterations 0 \
    --output-directory "$RESULTS/latency-$name-settle0" > /dev/null 2>&1
  echo "-- $name: done"
}

stage_latency() {
  log "eager latency: zoobench vs Python CUDA events (3 runs each), same TorchScript files"
  mkdir -p "$RESULTS"
  local zoo
  for zoo in "$ZOO" "$ZOO-bs64"; do  # batch 8 first: launch-bound, the most sensitive to load
    latency_case "$zoo" timm_models/mobilenetv3_large_100 inference
    latency_case "$zoo" torchbench/resnet50 inference
    latency_case "$zoo" timm_models/mobilenetv3_large_100 training
    latency_case "$zoo" torchbench/resnet50 training
  done
  $PY scripts/latency_table.py "$RESULTS" | tee "$LOGS/latency-table.txt"
}

# The host's noise floor: fixed CPU work (bench/host_noise.cpp, no Torch) and the launch loop
# on a one-op model (Python's, and zoobench's timing path where bench_harness_overhead is
# built), each in several processes, on one pinned CPU and unpinned. Launch-bound
# runs cannot be more reproducible between processes than the host is.
stage_noise() {
  log "host noise floor between processes: fixed CPU work and a one-op launch loop"
  local binary=$LOGS/host_noise placement run cpu
  g++ -O2 -std=c++17 bench/host_noise.cpp -o "$binary" || return 2
  for placement in pinned free; do
    cpu= && [[ $placement == pinned ]] && cpu=${NOISE_CPU:-4}
    rm -f "$LOGS"/noise-{,python-trivial-,zoobench-trivial-}$placement.jsonl
    for run in $(seq "${NOISE_PROCESSES:-10}"); do on_cpu "$cpu" "$binary" >> "$LOGS/noise-$placement.jsonl"; done
    for run in $(seq "${NOISE_LAUNCH_PROCESSES:-5}"); do
      on_cpu "$cpu" $PY bench/python_latency.py --trivial "$LOGS/trivial.pt" --device cuda >> "$LOGS/noise-python-trivial-$placement.jsonl"
      [[ -x $BUILD/bench/bench_harness_overhead ]] || continue
      on_cpu "$cpu" "$BUILD/bench/bench_harness_overhead" --model "$LOGS/trivial.pt" --benchmark_filter=EagerCuda \
        --benchmark_format=json 2> /dev/null | $PY -c 'import json, sys
median = [b for b in json.load(sys.stdin)["benchmarks"] if b.get("aggregate_name") == "median"][0]
print(json.dumps({"median_ms": median["real_time"] / 1e3}))' >> "$LOGS/noise-zoobench-trivial-$placement.jsonl"
    done
  done
  $PY scripts/noise_table.py "$LOGS" | tee "$LOGS/noise-table.txt"
}

stage_run() {
  zb list --zoo "$ZOO" --suite all --devices cuda | tail -30
  run_timm eager  # the reference against itself: accuracy against float64, speedup ~1.0
  run_timm aot_inductor -k '^(mobilenetv3_large_100|repvgg_a2|tf_efficientnet_b0|ghostnet_100)$'
  run_timm jit
  run_timm cudagraphs
}

stage_train() {
  # Peak memory: eager_peak_mem with the patch vs without; accuracy: jit (patched) vs eager.
  log "packed dropout: BERT-style encoder training step with and without the patch"
  local patches backend
  for patches in "" --no-patches; do
    ls "$RESULTS/dropout${patches:+-off}"/*_performance.json > /dev/null 2>&1 && { echo "-- done before: dropout$patches"; continue; }
    zb run --zoo "$ZOO" --suite torchbench --only text_encoder_bert_dropout --training --accuracy --performance \
      --devices cuda --backend jit --disable-cudagraphs --repeat 10 $patches \
      --output-directory "$RESULTS/dropout${patches:+-off}" 2>&1 | grep -v "^zoobench info" | tail -4
  done
  for backend in eager jit cudagraphs; do
    log "training: 3 timm models with $backend"
    zb run --resume --zoo "$ZOO" --suite timm_models --training --accuracy --performance --devices cuda --backend "$backend" \
      -k "$TRAINED_TIMM" --repeat 10 --timeout 300 \
      --output-directory "$RESULTS/train-$backend" 2>&1 | grep -v "^zoobench info" | tail -6
  done
}

# The lanes keep out of each other's way. With two GPUs the timing lane has GPU 0 to itself, the
# checking lane's one-GPU work runs on GPU 1, and its two-GPU work waits for the timing lane to
# end (TIMING_DONE). With one GPU the checking lane waits for the timing lane's quiet part (the
# latency comparison and the micro-benchmarks want the GPU to themselves: QUIET_DONE).
QUIET_DONE=$LOGS/.quiet-part-done
TIMING_DONE=$LOGS/.timing-lane-done
physical_gpus() { nvidia-smi -L 2>/dev/null | wc -l; }
stage_timing_lane() {
  [[ $(physical_gpus) -ge 2 ]] && export CUDA_VISIBLE_DEVICES=0
  timed stage_latency; timed stage_bench; touch "$QUIET_DONE"; timed stage_run; touch "$TIMING_DONE"
}

# The lanes also keep to their own CPUs (taskset): the timing lane whole physical cores near
# GPU 0, the checking lane the rest (scripts/lane_cpus.py), so the launch-bound timing runs
# never share a core.
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

stage_layouts() {
  log "input-layout fuzzing of the compiled backends on timm models (two workers)"
  local backend
  for backend in ${LAYOUT_BACKENDS:-aot_inductor jit}; do
    zb run --resume --zoo "$ZOO" --suite timm_models --accuracy --devices "${WORKER_DEVICES:-$(two_workers)}" --backend "$backend" \
      -k '^(mobilenetv3_large_100|repvgg_a2|tf_efficientnet_b0|ghostnet_100)$' \
      --input-layouts contiguous,transposed,gapped,overlapping,expanded \
      --output-directory "$RESULTS/layouts-$backend" 2>&1 | grep -v "^zoobench info" | tail -8
  done
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

# WORKER_DEVICES overrides the devices (cuda:1 alone: one worker, in a child pinned to GPU 1).
stage_extras() {
  local devices=${WORKER_DEVICES:-$(two_workers)}
  log "HuggingFace and torchbench extras (vision_maskrcnn, resnet50, BERT dropout) with jit on $devices: accuracy"
  zb run --resume --zoo "$ZOO" --suite huggingface --accuracy --devices "$devices" --backend jit --timeout 300 \
    --output-directory "$RESULTS/hf-jit" 2>&1 | grep -v "^zoobench info" | tail -8
  zb run --resume --zoo "$ZOO" --suite torchbench --accuracy --devices "$devices" --backend jit --timeout 300 \
    --output-directory "$RESULTS/tb-jit" 2>&1 | grep -v "^zoobench info" | tail -8
}

stage_workers() {
  log "two workers ($(two_workers)): timm accuracy with jit"
  zb run --resume --zoo "$ZOO" --suite timm_models --accuracy --devices "$(two_workers)" --backend jit \
    --output-directory "$RESULTS/two-workers" 2>&1 | grep -v "^zoobench info" | tail -6
}

stage_judged() {
  log "judged cases: zoobench same vs PyTorch's torch._dynamo.utils.same"
  [[ -f $ROOT/judged-gpu/cases.json ]] || { echo "no judged cases: run the judged-cases stage first"; return 2; }
  $PY tests/gpu/accuracy/check_judged_cases.py "$ROOT/judged-gpu" --zoobench "$BUILD/zoobench" --require-upstream -j 4 2>&1 | tail -8
}

stage_bench() {
  log "micro-benchmarks on the H200: boundary, compare, packed dropout, harness overhead"
  local b
  # The CPU ATen path of bench_compare takes tens of seconds and is measured on the CPU machine.
  local -A filter=([boundary]=. [compare]=-aten_cpu [dropout]=.)
  for b in boundary compare dropout; do
    grep -q '"benchmarks"' "$LOGS/bench-$b.json" 2>/dev/null && grep -q real_time "$LOGS/bench-$b.json" &&
      { echo "-- bench_$b done before"; continue; }
    timeout 240 "$BUILD/bench/bench_$b" --benchmark_format=json --benchmark_min_time=0.2 --benchmark_filter="${filter[$b]}" \
      > "$LOGS/bench-$b.json" 2> "$LOGS/bench-$b.err"
    echo "-- bench_$b rc $?"
  done
  $PY bench/python_latency.py --trivial "$LOGS/trivial.pt" --device cuda | tee "$LOGS/python-trivial.json"
  timeout 120 "$BUILD/bench/bench_harness_overhead" --model "$LOGS/trivial.pt" --benchmark_format=json > "$LOGS/bench-overhead.json" 2> "$LOGS/bench-overhead.err"
  echo "-- bench_harness_overhead rc $?"
}

stage_checking_lane() {
  export OMP_NUM_THREADS=${CHECKING_THREADS:-4}
  if [[ $(physical_gpus) -ge 2 ]]; then
    (export CUDA_VISIBLE_DEVICES=1; timed stage_train; timed stage_layouts)
    # One worker on cuda:1, in a child pinned to GPU 1: models traced on cuda:0 must run there.
    WORKER_DEVICES=cuda:1 timed stage_extras
    wait_for "$TIMING_DONE" "the timing lane" "${TIMING_WAIT_S:-240}"
  else
    wait_for "$QUIET_DONE" "the timing lane's quiet part" "${QUIET_WAIT_S:-200}"
    timed stage_train; timed stage_layouts; timed stage_extras
  fi
  timed stage_workers
}

stage_measure() {
  log "measure: timing lane ($(lane_cpus timing)) and checking lane ($(lane_cpus checking)) in parallel (logs: gpu-logs/lane-*.log)"
  rm -f "$QUIET_DONE" "$TIMING_DONE"
  # SIGINT lets zoobench finish its rows; the limit keeps the call inside the device's 10 minutes.
  $(lane_cpus timing) timeout -k 30 -s INT "${LANE_LIMIT_S:-480}" bash "$0" timing_lane > "$LOGS/lane-timing.log" 2>&1 &
  $(lane_cpus checking) timeout -k 30 -s INT "${LANE_LIMIT_S:-480}" bash "$0" checking_lane > "$LOGS/lane-checking.log" 2>&1 &
  wait
  grep -vE "^\[|^zoobench (info|progress)" "$LOGS/lane-timing.log" | tail -90
  grep -vE "^\[|^zoobench (info|progress)" "$LOGS/lane-checking.log" | tail -50
}

stage_pack() {
  tar czf "$OUT/gpu-check.tar.gz" --exclude="*.pt" "$LOGS" "$RESULTS" "$ZOO/index.json" "$ZOO"/*/*/manifest.json 2>/dev/null
  ls -la "$OUT"
}

want env && stage_env
want build && { timed stage_build || exit 1; }
want test && timed stage_test
want smoke && timed stage_smoke
want zoo && timed stage_zoo
want judged-cases && timed stage_judged-cases
# measure's parts, each also runnable on its own by name (not part of `full`: measure is).
for part in latency noise bench run train layouts extras workers judged; do
  named "$part" && timed "stage_$part"
done
named timing_lane && stage_timing_lane
named checking_lane && stage_checking_lane
want measure && timed stage_measure
want pack && stage_pack
log "done"
