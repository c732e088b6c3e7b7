#!/usr/bin/env bash
# Runs on the GPU machine (H200, PyTorch 2.11 + CUDA 13; nothing can be installed there):
# builds zoobench against the machine's PyTorch, runs every test including the `gpu`-labelled
# ones, exports the timm / HuggingFace models on CUDA and runs them through zoobench.
#
#   scripts/gpu-check.sh [STAGE...]
#   stages: env build test smoke judged zoo bench run train layouts pack, or all (default)
#   CTEST_ARGS narrows the test stage (e.g. CTEST_ARGS="-L gpu").
#
# Needs .gpu-deps/ (scripts/fetch-gpu-deps.sh, run on the CPU machine; the device tool carries
# it). Logs and results go to $OUT (the device tool's output folder) or gpu-out/. Each stage is
# idempotent, so a warm machine can continue where the last call stopped. `all` fits the
# 10-minute limit of one device call only when the zoo export is cached; split it otherwise.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${OUT:-$ROOT/gpu-out}
mkdir -p "$OUT"
BUILD=${BUILD:-build-gpu}
PY=${PY:-python3}
ZOO=${ZOO:-zoo-gpu}
JOBS=${JOBS:-$(nproc)}
RESULTS=${RESULTS:-results-gpu}
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
STAGES=("$@")
[[ ${#STAGES[@]} -eq 0 ]] && STAGES=(all)

log() { echo "== [$(date +%H:%M:%S)] $*"; }
want() { local s; for s in "${STAGES[@]}"; do [[ $s == "$1" || $s == all ]] && return 0; done; return 1; }
timed() { local start=$SECONDS; "$@"; local rc=$?; log "$1 ... took $((SECONDS - start))s (rc $rc)"; return $rc; }

stage_env() {
  log "environment"
  nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv || true
  uname -a; nproc; free -g | head -2
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
  log "build (-j$JOBS)"
  # -k 0: one call shows every compile error, not just the first.
  cmake --build "$BUILD" -j "$JOBS" -- -k 0 > "$OUT/build.log" 2>&1
  grep -E "error|FAILED" "$OUT/build.log" | head -60
  test -x "$BUILD/zoobench"
}

stage_test() {
  log "ctest (all labels but browser) ${CTEST_ARGS:-}"
  (cd "$BUILD" && ctest -j 8 --timeout 600 --label-exclude browser --output-on-failure ${CTEST_ARGS:-} > "$OUT/ctest.log" 2>&1)
  grep -E "tests passed|tests failed|\*\*\*Failed|Not Run|\(Failed\)|Timeout" "$OUT/ctest.log" | head -60
}

# Exports run in parallel into separate zoos (the exporter's index is per zoo), then are merged.
export_part() {
  local name=$1; shift
  $PY tools/export_zoo.py --zoo "$ZOO.parts/$name" --device cuda "$@" > "$OUT/export-$name.log" 2>&1
  echo "-- export $name:"; tail -4 "$OUT/export-$name.log"
}

stage_zoo() {
  log "export on cuda: timm_models (bs 8), 4 HuggingFace models, torchbench extras, AOTInductor packages"
  mkdir -p "$ZOO.parts"
  export_part timm --suite timm_models --batch-size 8 --training &
  export_part hf --suite huggingface --batch-size 8 --training \
    -k '^(BertForMaskedLM|GPT2ForSequenceClassification|T5ForConditionalGeneration|AllenaiLongformerBase)$' &
  export_part tb --suite torchbench --batch-size 8 --training -k '^(resnet50|text_encoder_bert_dropout)$' &
  export_part mrcnn --suite torchbench --only vision_maskrcnn --training &
  # AOTInductor compiles take the longest: two processes.
  export_part aoti1 --suite timm_models --batch-size 8 --aoti --no-check -k '^(mobilenetv3_large_100|repvgg_a2)$' &
  export_part aoti2 --suite timm_models --batch-size 8 --aoti --no-check -k '^(tf_efficientnet_b0|ghostnet_100)$' &
  export_part bs64 --suite timm_models --batch-size 64 --no-check -k '^mobilenetv3_large_100$' &
  wait
  # bs 64 models live in their own zoo (same names as the bs 8 ones).
  mkdir -p "$ZOO-bs64" && cp -r "$ZOO.parts/bs64/." "$ZOO-bs64/"
  $PY tools/export_zoo.py --zoo "$ZOO-bs64" --device cuda --suite torchbench --batch-size 64 --no-check \
    --only resnet50 > "$OUT/export-bs64-resnet50.log" 2>&1
  rm -rf "$ZOO.parts/bs64"
  $PY scripts/merge_zoos.py "$ZOO" "$ZOO.parts"/*
}

zb() { "$BUILD/zoobench" "$@"; }

stage_smoke() {
  log "smoke: one timm model and resnet18 exported on cuda, run through zoobench"
  $PY tools/export_zoo.py --zoo "$ZOO-smoke" --device cuda --training --batch-size 8 \
    --suite timm_models --only mobilenetv3_large_100 2>&1 | tail -3
  $PY tools/export_zoo.py --zoo "$ZOO-smoke" --device cuda --training --batch-size 8 \
    --suite torchbench --only resnet18 2>&1 | tail -3
  zb run --zoo "$ZOO-smoke" --suite all --accuracy --performance --devices cuda --backend jit \
    --repeat 10 --timeout 300 --output-directory "$RESULTS/smoke" 2>&1 | tail -25
}

# The 14 timm models, inference, batch 8, fp32, one backend: accuracy + performance.
run_timm() {
  local backend=$1; shift
  log "timm_models inference with $backend"
  zb run --zoo "$ZOO" --suite timm_models --accuracy --performance --devices cuda --backend "$backend" \
    --repeat 20 --timeout 300 --output-directory "$RESULTS/timm-$backend" "$@" 2>&1 | grep -v "^zoobench info" | tail -32
}

stage_run() {
  zb list --zoo "$ZOO" --suite all --devices cuda | tail -30
  run_timm jit
  run_timm cudagraphs
  run_timm aot_inductor -k '^(mobilenetv3_large_100|repvgg_a2|tf_efficientnet_b0|ghostnet_100)$'
  log "HuggingFace and torchbench extras with jit"
  zb run --zoo "$ZOO" --suite huggingface --accuracy --performance --devices cuda --backend jit \
    --repeat 20 --timeout 300 --output-directory "$RESULTS/hf-jit" 2>&1 | tail -12
  zb run --zoo "$ZOO" --suite torchbench --accuracy --performance --devices cuda --backend jit \
    --repeat 20 --timeout 300 --output-directory "$RESULTS/tb-jit" 2>&1 | tail -12
}

stage_train() {
  for backend in eager jit cudagraphs; do
    log "training: 3 timm models with $backend"
    zb run --zoo "$ZOO" --suite timm_models --training --accuracy --performance --devices cuda --backend "$backend" \
      -k '^(mobilenetv3_large_100|resnet50|repvgg_a2|tf_efficientnet_b0)$' --repeat 10 --timeout 300 \
      --output-directory "$RESULTS/train-$backend" 2>&1 | tail -10
  done
  log "packed dropout: BERT training step with and without the patch"
  for patches in "" --no-patches; do
    zb run --zoo "$ZOO" --suite torchbench --only text_encoder_bert_dropout --training --accuracy --performance \
      --devices cuda --backend jit --disable-cudagraphs --repeat 10 $patches \
      --output-directory "$RESULTS/dropout${patches:+-off}" 2>&1 | tail -6
  done
}

stage_layouts() {
  log "input-layout fuzzing of the compiled backends on timm models"
  for backend in jit aot_inductor; do
    zb run --zoo "$ZOO" --suite timm_models --accuracy --devices cuda --backend "$backend" \
      -k '^(mobilenetv3_large_100|repvgg_a2|tf_efficientnet_b0|ghostnet_100)$' \
      --input-layouts contiguous,transposed,gapped,overlapping,expanded \
      --output-directory "$RESULTS/layouts-$backend" 2>&1 | tail -8
  done
  log "two workers sharing the GPU"
  zb run --zoo "$ZOO" --suite timm_models --accuracy --devices cuda:0,cuda:0 --backend jit \
    --output-directory "$RESULTS/two-workers" 2>&1 | tail -6
}

stage_bench() {
  log "harness overhead: C++ timing path vs a Python loop, trivial model"
  $PY bench/python_latency.py --trivial "$OUT/trivial.pt" --device cuda | tee "$OUT/python-trivial.json"
  $PY bench/python_latency.py --model "$OUT/trivial.pt" --device cpu --inputs /dev/null 2>/dev/null || true
  "$BUILD/bench/bench_harness_overhead" --model "$OUT/trivial.pt" --benchmark_format=json > "$OUT/bench-overhead.json" 2>/dev/null
  grep -E '"name"|"real_time"' "$OUT/bench-overhead.json" | paste - - | grep median
  log "eager latency: zoobench vs Python CUDA events, same TorchScript files"
  for z in "$ZOO" "$ZOO-bs64"; do
    for m in timm_models/mobilenetv3_large_100 torchbench/resnet50; do
      [[ -f $z/$m/eval.pt ]] || continue
      $PY bench/python_latency.py --model "$z/$m/eval.pt" --inputs "$z/$m/inputs.pt" --device cuda --optimize off
      for run in 1 2 3; do
        zb run --zoo "$z" --suite "${m%%/*}" --only "${m##*/}" --performance --backend eager --devices cuda \
          --repeat 30 --output-directory "$RESULTS/latency-$(basename $z)-run$run" > /dev/null 2>&1
        tail -1 "$RESULTS/latency-$(basename $z)-run$run/"*performance.csv | cut -d, -f2,3,10,15
      done
    done
  done
  "$BUILD/bench/bench_boundary" --benchmark_filter=cuda --benchmark_format=json > "$OUT/bench-boundary.json" 2>/dev/null
  "$BUILD/bench/bench_compare" --benchmark_format=json > "$OUT/bench-compare.json" 2>/dev/null
  "$BUILD/bench/bench_dropout" --benchmark_format=json > "$OUT/bench-dropout.json" 2>/dev/null
}

stage_judged() {
  log "judged cases: zoobench same vs PyTorch's torch._dynamo.utils.same on real timm models"
  rm -rf /tmp/judged
  $PY tests/gpu/accuracy/generate_judged_cases.py --out /tmp/judged --device cuda > "$OUT/judged-generate.log" 2>&1
  tail -5 "$OUT/judged-generate.log"
  $PY tests/gpu/accuracy/check_judged_cases.py /tmp/judged --zoobench "$BUILD/zoobench" --require-upstream -j 8 2>&1 | tail -8
}

stage_pack() {
  tar czf "$OUT/results.tar.gz" "$RESULTS" "$ZOO/index.json" 2>/dev/null
  ls -la "$OUT"
}

want env && stage_env
want build && { timed stage_build || exit 1; }
want test && timed stage_test
want smoke && timed stage_smoke
want judged && timed stage_judged
want zoo && timed stage_zoo
want bench && timed stage_bench
want run && timed stage_run
want train && timed stage_train
want layouts && timed stage_layouts
want pack && stage_pack
log "done"
