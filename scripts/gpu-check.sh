#!/usr/bin/env bash
# Runs on the GPU machine (H200, PyTorch 2.11 + CUDA 13; nothing can be installed there).
#
#   scripts/gpu-check.sh              the check (well under 10 minutes): env build test smoke;
#                                     exits non-zero when the build or a test fails
#   scripts/gpu-check.sh STAGE...     the named stages, in the order of the plan below
#   scripts/gpu-check.sh full         every stage of the plan (longer than one 10-minute call)
#
# The plan: what each stage does (mechanics in scripts/gpu-lib.sh).
#   env            machine, GPUs, compilers, Python, torch, and what the embedded Python needs
#   table-zoo      the side-by-side table's zoo ($ZOO-table): the 14 timm models (bs 8, AOTInductor
#                  packages for all; TIMM_TABLE=0 leaves them out); with HF_TABLE=1 also
#                  HuggingFace models at the list's batch sizes (HF_TABLE_MODELS, default all; HF_AOTI=1
#                  with AOTInductor packages and the aot_inductor backend in the table, HF_EXPORTERS
#                  exporters; HF_TABLE_NEXT=N: the next N the carried rows lack). TABLE_ZOO_BACKGROUND=1:
#                  exports beside the stages after it; compile-table checks each HuggingFace
#                  model once exported and times them all once the whole zoo is
#   build          zoobench against the machine's PyTorch (BUILD_TARGETS narrows it)
#   gpu-unit       chosen gtest cases straight from their binaries (GPU_UNIT: "binary:filter ..."),
#                  for a call that builds only those binaries (BUILD_TARGETS)
#   test           ctest, every label but browser (CTEST_ARGS / CTEST_EXCLUDE narrow it;
#                  TEST_SET=python, recent or verify: named subsets, see TEST_SETS)
#   smoke          two models exported on CUDA and run with jit
#   compiler-bisect  Inductor's compiler bisector finds a planted wrong lowering (relu lowered as
#                  abs) through `zoobench bisect --backend inductor --devices cuda`: the one test
#                  CompilerBisectorOnCuda.* (BUILD_TARGETS="zoobench integration_gpu_tests")
#   bisect         `zoobench bisect` of AllenaiLongformerBase with jit on CUDA (issue 19), its repro
#                  run and judged, and where freezing is the switch the first node of the frozen
#                  graph that differs (tools/zoo_diag/frozen_graph_diff.py)
#   zoo            the measured zoo: 14 timm models (bs 8, AOTInductor packages for all), 4
#                  HuggingFace models, torchbench extras, bs-64 copies for the latency stage
#   compile-table  the side-by-side table: the timm zoo with python_eager, jit, cudagraphs,
#                  aot_inductor, inductor, inductor:reduce-overhead in one invocation: checks
#                  ACCURACY_WORKERS (3) at a time per GPU, then timings one per GPU (resumable:
#                  a second call continues it; ZB_DEADLINE ends it in time, TABLE_LEAVES_S
#                  seconds earlier for the stages after it)
#   lists-beside   the lists (as `lists`) in the background on the last GPU and the upper half of
#                  the CPUs, beside the stages after it (a table on GPU 0: TABLE_GPU=0); the
#                  pack stage waits for it; its limit comes from ZB_DEADLINE
#   diag-zoo       the diagnosis zoo ($ZOO-diag), in the background: the two timm models whose
#                  capture falls back (bs 8) and two HuggingFace models (list batch sizes)
#   host-syncs     where those models read device values back to the host, and whether a CUDA
#                  graph captures them in PyTorch itself (scripts/host_sync_sites.py)
#   train-zoo      the training table's zoo ($ZOO-train: the three trained timm models, resnet50,
#                  text_encoder_bert_dropout, batch 8, train.pt), in the background
#   compile-train  the training side by side (issue 18, target 2): python_eager, jit,
#                  cudagraphs, inductor, inductor:reduce-overhead, training step with SGD;
#                  resumable like compile-table
#   retime-zoo     RETIME_MODELS exported without packages, in the background
#   retime         those models with RETIME_BACKENDS, accuracy and performance, into
#                  $RESULTS/$RETIME_RUN: one change re-measured (e.g. TorchScript loading)
#   capture-check  the diagnosis zoo with jit and cudagraphs, accuracy: the `cudagraphs` column
#   dropout        bench_dropout's CUDA cases (packed vs ATen, moved GB/s, fraction of HBM)
#   training-package  bench/training_package.py (issue 18, target 2): the whole training step
#                  as one AOTInductor package against torch.compile's training, each side in its
#                  own process; TRAINING_PACKAGE_MODELS (text_encoder_bert_dropout),
#                  TRAINING_PACKAGE_SIDES (eager,inductor:reduce-overhead,package,package_graph),
#                  TRAINING_PACKAGE_FLAGS (e.g. --no-dropout: the package checked against autograd)
#   overhead       the Python backends' bridge cost (bench_python_bridge), CPU and CUDA
#   lists          the three model lists exported and run with jit (scripts/gpu-lists.sh;
#                  LISTS_PARTS="stream pack": with AOTInductor packages, a model at a time)
#   judged-cases   PyTorch's own same() on real models, for `zoobench same`
#   measure        timing lane (latency, bench, run) beside checking lane (train, layouts,
#                  extras, workers); each part also runs alone by its name
#   latency noise bench run train layouts extras workers judged   measure's parts
#   pack           logs and results into $OUT/gpu-check.tar.gz (the device tool returns few files)
#
# The side-by-side table from a fresh machine, in device calls of 10 minutes (the first exports
# beside the build and the torch.compile tests; each later call continues the table):
#   ZB_DEADLINE=$(($(date +%s) + 570)) TABLE_ZOO_BACKGROUND=1 TEST_SET=verify \
#     scripts/gpu-check.sh env table-zoo build test compile-table pack
#   ZB_DEADLINE=$(($(date +%s) + 570)) scripts/gpu-check.sh compile-table pack
# To continue an earlier session's table, copy its rows in first and carry them with the first
# call only (carry: .gpu-deps, results-gpu): a carried folder replaces the device's copy, so
# carrying it again loses the rows made since. Both tables are complete: timm in
# docs/gpu-runs/2026-12-01d/compile-timm, HuggingFace (36 of 36) in 2026-12-03e/compile-hf.
# HF_TABLE_NEXT=N reads the rows carried in and takes the next N models that lack a check or a
# timing (4-5 minutes of GPU per model for its six backends), with AOTInductor packages for
# those whose aot_inductor rows are missing; only call 1 exports (an export beside a timing would
# disturb it), and each model's checks start as soon as its export is done:
#   mkdir -p results-gpu && cp -r docs/gpu-runs/2026-12-03e/compile-hf results-gpu/
#   ZB_DEADLINE=$(($(date +%s)+560)) BUILD_TARGETS=zoobench TABLE_ZOO_BACKGROUND=1 TIMM_TABLE=0 \
#     HF_TABLE_NEXT=6 HF_EXPORTERS=3 ACCURACY_WORKERS=4 scripts/gpu-check.sh table-zoo build compile-table pack
# and then, on the still-warm machine, the same without the exports (send it the moment the first
# returns: the machine goes back after 30 s idle, and a fresh one exports and builds again):
#   ZB_DEADLINE=$(($(date +%s)+570)) TIMM_TABLE=0 HF_TABLE_NEXT=6 ACCURACY_WORKERS=4 \
#     scripts/gpu-check.sh compile-table pack
# A retime re-measures some models with some backends (RETIME_MODELS exported in the background
# by retime-zoo, checked and timed by retime into $RESULTS/$RETIME_RUN).
# A capture that runs out of memory releases the allocator's cache and captures again (checked
# on 2026-12-03f: its gtest in TEST_SET=verify, and BlenderbotSmallForCausalLM's checks, `on`):
#   ZB_DEADLINE=$(($(date +%s)+560)) BUILD_TARGETS="zoobench gpu_backends unit_backends" TEST_SET=verify \
#     RETIME_MODELS=BlenderbotSmallForCausalLM RETIME_BACKENDS=jit,cudagraphs RETIME_RUN=retime-capture \
#     scripts/gpu-check.sh retime-zoo build test retime pack
# Issue 18's target 2: the training step as one AOTInductor package (bench/training_package.py)
# against torch.compile's training, alone on the GPU; the package sides run in the build's
# bench_training_package_runner (LibTorch's C++ loader: Python's aoti_load_package dies of a
# segmentation fault loading the package). About 4 minutes a model after a 75 s build; then
# with --no-dropout, the package checked against autograd (2 minutes):
#   ZB_DEADLINE=$(($(date +%s)+500)) BUILD_TARGETS=bench_training_package_runner \
#     scripts/gpu-check.sh build training-package pack
#   ZB_DEADLINE=$(($(date +%s)+215)) TRAINING_PACKAGE_FLAGS=--no-dropout TRAINING_PACKAGE_SIDES=package \
#     scripts/gpu-check.sh training-package pack
# The runner's own test (python.test_training_package's PackageThroughTheRunner, not yet run on
# the H200): BUILD_TARGETS=bench_training_package_runner CTEST_ARGS="-R python.test_training_package"
# With two GPUs, the lists beside the table:
#   ZB_DEADLINE=... TABLE_ZOO_BACKGROUND=1 TABLE_GPU=0 \
#     scripts/gpu-check.sh env table-zoo lists-beside build compile-table pack
#
# AOTInductor's loss on language-model heads (GPT-Neo, DeBERTa-MLM: one GEMM with a vocabulary
# that is not a multiple of 8, docs/results.md 2026-12-02c). The packages are now compiled under
# the timed runs' TF32 (--aoti-numerics performance), which should let Inductor pad that GEMM as
# torch.compile does; re-exported and timed against inductor in one call (RETIME_EXPORT_FLAGS;
# RETIME_AOTI_OPTIONS='{"force_shape_pad": true}' forces the padding instead):
#   ZB_DEADLINE=$(($(date +%s)+540)) BUILD_TARGETS=zoobench RETIME_MODELS="GPTNeoForCausalLM DebertaForMaskedLM" \
#     RETIME_EXPORT_FLAGS=--aoti RETIME_BACKENDS=aot_inductor,inductor RETIME_RUN=retime-numerics \
#     scripts/gpu-check.sh retime-zoo build retime pack
#
# Issue 17's aot_inductor column (and jit at the lists' batch sizes): the lists streamed, a model
# at a time per pipeline, so their packages never need the disk at once (scripts/gpu-lists.sh,
# part stream; resumable: each call continues, results-gpu carried with the first call only;
# carry .gpu-deps and .torchbench; the first exports run beside the build). Every list is done
# (2026-12-02f: docs/gpu-runs/2026-12-02f/lists-stream); to redo some models, copy those rows in,
# delete the models' rows from the copy, and stream (six pipelines left the H200 mostly idle:
# load 8.9 of 16 CPUs, GPU 20% busy):
#   mkdir -p results-gpu && cp -r docs/gpu-runs/2026-12-02f/lists-stream docs/gpu-runs/2026-12-02c/compile-hf results-gpu/
#   ZB_DEADLINE=$(($(date +%s)+560)) BUILD_TARGETS=zoobench LISTS_PARTS="stream pack" LISTS_BESIDE_CPUS=all \
#     STREAM_PIPELINES=6 STREAM_SUITES="torchbench huggingface timm_models" STREAM_ALSO_DONE=results-gpu/compile-hf \
#     scripts/gpu-check.sh lists-beside build pack
# One model's package re-made and run apart (llama's after its exporter fix, 2026-12-02f):
#   ZB_DEADLINE=$(($(date +%s)+330)) BUILD_TARGETS=zoobench RETIME_SUITE=torchbench RETIME_MODELS=llama \
#     RETIME_EXPORT_FLAGS="--aoti --torchbench-dir .torchbench" RETIME_BACKENDS=jit,aot_inductor \
#     RETIME_RUN=retime-aoti-fixes scripts/gpu-check.sh retime-zoo build retime pack
#
# The training side by side (complete in docs/gpu-runs/2026-12-02/compile-train-*; the torchbench
# pair again with upstream's step in docs/gpu-runs/2026-12-02b/compile-train-sgd-torchbench):
#   ZB_DEADLINE=$(($(date +%s)+560)) scripts/gpu-check.sh train-zoo build compile-train pack
#
# Issue 19 on the GPU, two calls back to back (the second finds the first's build and zoo on the
# still-warm machine): the compiler bisector's planted fault, then Longformer's bisect to its end
# (its report and bisect.json, the repro run by `zoobench run` and judged by `zoobench same`):
#   ZB_DEADLINE=$(($(date +%s)+560)) BUILD_TARGETS="zoobench integration_gpu_tests" \
#     scripts/gpu-check.sh diag-zoo build compiler-bisect pack
#   ZB_DEADLINE=$(($(date +%s)+560)) scripts/gpu-check.sh diag-zoo bisect pack
# Needs .gpu-deps/ (scripts/fetch-gpu-deps.sh, run on the CPU machine; the device tool carries
# it). Logs go to gpu-logs/, results to results-gpu/. Stages are idempotent, so a warm machine
# continues where the last call stopped.
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
source scripts/gpu-lib.sh

PLAN=(env table-zoo diag-zoo train-zoo retime-zoo lists-beside build test gpu-unit smoke compiler-bisect bisect zoo compile-table compile-train retime host-syncs capture-check dropout training-package overhead lists judged-cases measure pack)
STAGES=("$@")
[[ ${#STAGES[@]} -eq 0 ]] && STAGES=(env build test smoke)

# --- model sets ----------------------------------------------------------------------------
TIMM_TRAINED=(mobilenetv3_large_100 repvgg_a2 tf_efficientnet_b0)   # train.pt exported
HF_MEASURED=(BertForMaskedLM GPT2ForSequenceClassification T5ForConditionalGeneration AllenaiLongformerBase)
LAYOUT_TIMM=(mobilenetv3_large_100 repvgg_a2 tf_efficientnet_b0 ghostnet_100)
SIDE_BY_SIDE_BACKENDS=python_eager,jit,cudagraphs,aot_inductor,inductor,inductor:reduce-overhead
# Named test sets (TEST_SET=...), for calls that cannot run all 500: python, the torch.compile
# family and the embedded Python; recent, python and what changed since the last GPU run.
# verify, what the last change needs on CUDA (2026-12-02g: the capture rewrites, the package of
# the buffers retry, the table's next models), beside the table's exports in its first call:
#   ... TEST_SET=verify BUILD_TARGETS="zoobench gpu_backends unit_backends" \
#     scripts/gpu-check.sh table-zoo build test compile-table pack
declare -A TEST_SETS=(
  [python]='BackendTable.*Reference/(python_eager|inductor|aot_eager)_|BackendOnDevice|EmbeddedPython|PythonBackends|BackendRegistry|BackendSwitches|RunFlags'
  [recent]='BackendTable.*Reference/(python_eager|inductor|aot_eager)_|BackendOnDevice|EmbeddedPython|PythonBackends|BackendRegistry|BackendSwitches|RunFlags|PickleLoad|PackedDropout|Sha256|HostilePickle|Columns|RecordRows|ChildProcess|Bisect|DisableSwitches|AccuracyWorkers|CudaGraphs|CaptureRewrites|HostSyncOps|Divergence|SubmoduleCapture|CompilerBisector|CrashReport'
  [verify]='CudaGraphs|CaptureRewrites|python.test_aoti_export|python.test_gpu_lists_stream'
)
# HF_TABLE_PART=k/n: the k-th of n interleaved parts of the HuggingFace list (every n-th name
# from the k-th, so large and small models spread over the parts), added to HF_TABLE_MODELS: a
# session takes one part of the table without naming its models, and with HF_TABLE_MODELS the
# models an earlier part left unfinished.
if [[ -n ${HF_TABLE_PART:-} ]]; then
  part_models=$(grep -v '^#' suites/huggingface_models_list.txt | cut -d, -f1 |
    awk -v k="${HF_TABLE_PART%/*}" -v n="${HF_TABLE_PART#*/}" 'NF { i++; if ((i - k) % n == 0) print }' | xargs)
  [[ -n $part_models ]] || { echo "HF_TABLE_PART=$HF_TABLE_PART names no model (k/n, 1 <= k <= n)"; exit 2; }
  HF_TABLE_MODELS="${HF_TABLE_MODELS:+$HF_TABLE_MODELS }$part_models"
fi
# HF_TABLE_NEXT=N: the next N models the table still needs, read from its rows in
# $RESULTS/compile-hf (carried in), in the parts' order (part 1's models, then part 2's, ...):
# a model is left until it has a check and a timing for every backend of the table. Those whose
# aot_inductor rows are all there are exported without a package (HF_NO_AOTI). It replaces
# naming the unfinished models by hand (2026-12-02g). A later call on the warm machine reads the
# rows again: the models finished drop out, and the table zoo it runs holds only those exported.
if [[ -n ${HF_TABLE_NEXT:-} ]]; then
  [[ -d $RESULTS/compile-hf ]] || { echo "HF_TABLE_NEXT reads the table's rows from $RESULTS/compile-hf, which is" \
    "missing: copy the last session's in (docs/results.md says which) and carry $RESULTS"; exit 2; }
  hf_parts_order=$(for k in 1 2 3 4 5 6 7 8; do grep -v '^#' suites/huggingface_models_list.txt | cut -d, -f1 |
    awk -v k=$k 'NF { i++; if ((i - k) % 8 == 0) print }'; done | xargs)
  hf_todo() {
    $PY scripts/lists_todo.py --suite huggingface --experiments accuracy,performance --device cuda \
      --results "$RESULTS/compile-hf" --backends "$@"
  }
  HF_TABLE_MODELS=$(hf_todo "${SIDE_BY_SIDE_BACKENDS}" $hf_parts_order | awk -v n="$HF_TABLE_NEXT" 'NR <= n' | xargs)
  if [[ -z $HF_TABLE_MODELS ]]; then
    # The table's stages have nothing left to do; the call's other stages (a training-package
    # after the table's last models) still run.
    HF_TABLE_COMPLETE=1
    echo "-- HF_TABLE_NEXT: the HuggingFace table is complete in $RESULTS/compile-hf"
  else
    needs_package=" $(hf_todo aot_inductor $HF_TABLE_MODELS | xargs) "
    HF_NO_AOTI=$(for m in $HF_TABLE_MODELS; do [[ $needs_package == *" $m "* ]] || echo "$m"; done | xargs)
    HF_TABLE=1 HF_AOTI=1
    echo "-- HF_TABLE_NEXT=$HF_TABLE_NEXT: $HF_TABLE_MODELS${HF_NO_AOTI:+ (without packages: $HF_NO_AOTI)}"
  fi
fi
if [[ -n ${TEST_SET:-} ]]; then
  [[ -n ${TEST_SETS[$TEST_SET]:-} ]] || { echo "unknown TEST_SET '$TEST_SET' (${!TEST_SETS[*]})"; exit 2; }
  CTEST_ARGS="-R ${TEST_SETS[$TEST_SET]} ${CTEST_ARGS:-}"
fi

# --- stages --------------------------------------------------------------------------------

stage_env() {
  log "environment"
  nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv || true
  uname -a; nproc; free -g | head -2
  lscpu | grep -E "^(Model name|Socket|Core|Thread|NUMA)"; nvidia-smi topo -m 2>/dev/null | head -8
  echo "measure lanes' CPUs (timing | checking): $($PY scripts/lane_cpus.py 0 2>&1)"
  g++ --version | head -1; cmake --version | head -1; ninja --version; nvcc --version | tail -1
  $PY -c 'import torch, sys; print("python", sys.version.split()[0], sys.executable, "torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.get_device_name(0)); print(torch.utils.cmake_prefix_path)'
  $PY -c 'import timm, transformers, torchvision; print("timm", timm.__version__, "transformers", transformers.__version__, "torchvision", torchvision.__version__)'
  # What the embedded Python (the torch.compile backends) links: headers, libpython, libtorch_python.
  $PY -c 'import sysconfig as s, os, glob, torch; inc = s.get_paths()["include"]; lib = s.get_config_var("LIBDIR"); print("Python.h:", os.path.exists(os.path.join(inc, "Python.h")), inc); print("libpython:", glob.glob(os.path.join(lib, "libpython3*.so*"))); print("libtorch_python:", glob.glob(os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_python*")))'
}

stage_build() {
  [[ -f .gpu-deps/.complete ]] || { echo "missing .gpu-deps: run scripts/fetch-gpu-deps.sh here and carry .gpu-deps"; return 2; }
  local torch_prefix
  torch_prefix=$($PY -c 'import torch;print(torch.utils.cmake_prefix_path)')
  if [[ ! -f $BUILD/build.ninja ]]; then
    log "configure ($BUILD)"
    cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_PREFIX_PATH="$torch_prefix;$ROOT/.gpu-deps/root/usr" -DOPENSSL_ROOT_DIR="$ROOT/.gpu-deps/root/usr" \
      -DZOOBENCH_PYTHON="$(command -v $PY)" -DCMAKE_CUDA_ARCHITECTURES=90 \
      -DZOOBENCH_GTEST_SOURCE_DIR="$ROOT/.gpu-deps/root/usr/src/googletest" 2>&1 | grep -E "zoobench|Error|error" | head -25
  fi
  log "build (-j$JOBS) ${BUILD_TARGETS:-}"
  # -k 0: one call shows every compile error, not just the first.
  cmake --build "$BUILD" -j "$JOBS" ${BUILD_TARGETS:+--target $BUILD_TARGETS} -- -k 0 > "$LOGS/build.log" 2>&1
  local rc=$?
  grep -E "error|FAILED" "$LOGS/build.log" | head -60
  return $rc
}

stage_test() {
  log "ctest (labels but ${CTEST_EXCLUDE:-browser}) ${CTEST_ARGS:-}"
  # Half the cores as parallel tests, each with its share of threads: most of a test's time
  # there is process start (loading libtorch_cuda, CUDA init, importing torch), and 8 x 32
  # threads on 32 cores made tests 10-30x slower (2026-11-30).
  local jobs=$(( JOBS / 2 > 4 ? JOBS / 2 : 4 ))
  local threads=$(( JOBS / jobs > 1 ? JOBS / jobs : 1 ))
  (cd "$BUILD" && export OMP_NUM_THREADS=$threads MKL_NUM_THREADS=$threads &&
    ctest -j "$jobs" --timeout 600 --label-exclude "${CTEST_EXCLUDE:-browser}" --output-on-failure ${CTEST_ARGS:-} > "$LOGS/ctest.log" 2>&1)
  local rc=$?
  grep -E "tests passed|tests failed|\*\*\*Failed|Not Run|\(Failed\)|Timeout|Total Test time" "$LOGS/ctest.log" | head -60
  echo "-- slowest tests (ctest -j$jobs, $threads threads each):"
  grep -E "Test +#[0-9]+: " "$LOGS/ctest.log" | awk '{print $(NF-1), $0}' | sort -rn | head -12 | cut -d' ' -f2-
  cp "$BUILD/Testing/Temporary/CTestCostData.txt" "$LOGS/" 2>/dev/null
  return $rc  # ctest's: a failing test fails the check
}

# Each spec runs in a process of its own: C++ autograd after the embedded Python's in one
# process trips PyTorch's engine assert (device_ready_queues_; docs/results.md), as ctest's
# one-process-per-test never does.
GPU_UNIT=${GPU_UNIT:-"gpu_zoo:* gpu_perf:* gpu_backends:CudaGraphs* gpu_backends:BackendSwitchesOnCuda* gpu_backends:Cuda/BackendOnDevice* gpu_patches:*PackedDropout*"}
stage_gpu-unit() {
  local spec rc=0 n=0 log
  for spec in $GPU_UNIT; do
    log="$LOGS/gpu-unit-$((++n))-${spec%%:*}.log"
    log "gtest ${spec%%:*} --gtest_filter=${spec#*:}"
    "$BUILD/tests/${spec%%:*}" --gtest_filter="${spec#*:}" > "$log" 2>&1 || rc=1
    grep -E "^\[  (PASSED|FAILED) |^\[       OK|^\[  FAILED|Failure|Expected|Which is|Value of" "$log" | head -40
  done
  return $rc
}

stage_smoke() {
  log "smoke: one timm model and resnet18 exported on cuda, run through zoobench"
  $PY tools/export_zoo.py --zoo "$ZOO-smoke" --device cuda --training --batch-size 8 \
    --suite timm_models --only mobilenetv3_large_100 2>&1 | tail -2
  $PY tools/export_zoo.py --zoo "$ZOO-smoke" --device cuda --training --batch-size 8 \
    --suite torchbench --only resnet18 2>&1 | tail -2
  zb run --zoo "$ZOO-smoke" --suite all --accuracy --performance --devices cuda --backend jit \
    --repeat 10 --timeout 300 --output-directory "$RESULTS/smoke" 2>&1 | grep -v "^zoobench info" | tail -12
  return "${PIPESTATUS[0]}"
}

# The 14 timm models at batch 8 with AOTInductor packages, two per exporter (their compiles take
# the longest), in the background into $ZOO.parts; train.pt for the models named as arguments.
export_timm_in_pairs() {
  local trained=("$@") timm=($(grep -v '^#' suites/timm_models_list.txt | awk '{print $1}')) i pair
  for ((i = 0; i < ${#timm[@]}; i += 2)); do
    pair=("${timm[@]:i:2}")
    export_part "timm$i" --suite timm_models --batch-size 8 --aoti -k "$(regex_of "${pair[@]}")" \
      $([[ ${#trained[@]} -gt 0 ]] && printf '%s\n' "${pair[@]}" | grep -qxF -f <(printf '%s\n' "${trained[@]}") && echo --training) &
  done
}

# Exports run in parallel into separate zoos, then are merged. AOTInductor packages for all 14
# timm models, two models per exporter (their compiles take the longest).
stage_zoo() {
  [[ -f $ZOO/index.json && -f $ZOO-bs64/index.json ]] && { echo "-- zoo exported before ($ZOO, $ZOO-bs64)"; return 0; }
  log "export on cuda: 14 timm models with AOTInductor packages, HuggingFace and torchbench extras (bs 8), bs 64"
  rm -rf "$ZOO.parts" && mkdir -p "$ZOO.parts"
  export OMP_NUM_THREADS=2  # a dozen exporters share the cores (and the test stage may run beside)
  export_timm_in_pairs "${TIMM_TRAINED[@]}"  # train.pt only where a stage trains
  export_part hf --suite huggingface --batch-size 8 -k "$(regex_of "${HF_MEASURED[@]}")" &
  export_part tb --suite torchbench --batch-size 8 --training --only resnet50 &
  export_part tb-train --suite torchbench --batch-size 8 --training --only text_encoder_bert_dropout &
  export_part mrcnn --suite torchbench --only vision_maskrcnn &
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

# The side-by-side table's own zoo: what it needs and nothing else, so a fresh machine reaches
# the table sooner. Seven exporters of two timm models each (AOTInductor compiles take the
# longest) and, with HF_TABLE, one HuggingFace exporter (one per GPU: the list's large models
# ran out of memory when eight exporters shared one).
TABLE_ZOO_DONE=$LOGS/.table-zoo-done
stage_table-zoo() {
  local zoo=$ZOO-table
  [[ -n ${HF_TABLE_COMPLETE:-} ]] && { echo "-- table zoo: nothing to export (the table is complete)"; return 0; }
  [[ -f $zoo/index.json && -z ${HF_TABLE:-} ]] && { echo "-- table zoo exported before ($zoo)"; return 0; }
  if [[ -n ${TABLE_ZOO_BACKGROUND:-} ]]; then
    # Beside the build and the tests (the exporters need no build); compile-table waits for it.
    rm -f "$TABLE_ZOO_DONE"
    (TABLE_ZOO_BACKGROUND= timed stage_table-zoo > "$LOGS/table-zoo.log" 2>&1; touch "$TABLE_ZOO_DONE") &
    echo "-- table zoo: exporting in the background (log: $LOGS/table-zoo.log)"
    return 0
  fi
  log "export on cuda for the side-by-side table: 14 timm models (bs 8, AOTInductor)${HF_TABLE:+ and HuggingFace at the list batch sizes}"
  rm -rf "$zoo.parts" && mkdir -p "$zoo.parts"
  export OMP_NUM_THREADS=2
  [[ ${TIMM_TABLE:-1} == 1 ]] && ZOO=$zoo export_timm_in_pairs
  [[ -n ${HF_TABLE:-} ]] && ZOO=$zoo export_hf_table
  wait
  rm -rf "$zoo"
  $PY scripts/merge_zoos.py "$zoo" "$zoo.parts"/* | tee "$LOGS/table-zoo-merge.log"
  unset OMP_NUM_THREADS
}

# The table's HuggingFace models, with HF_AOTI=1 with AOTInductor packages (a minute or two of
# compiling each), spread over HF_EXPORTERS exporters (default 1; the list's small and medium
# models fit two or three to a GPU, its large ones ran out of memory eight to a GPU).
# HF_NO_AOTI names models exported without packages, by one more exporter (a few seconds each):
# models whose aot_inductor rows an earlier session made, re-exported for other backends' rows.
export_hf_table() {
  local models=() plain=() n=$(( ${HF_EXPORTERS:-1} > 1 ? ${HF_EXPORTERS:-1} : 1 )) i j part m
  for m in ${HF_TABLE_MODELS:-}; do
    if [[ -n ${HF_AOTI:-} && " ${HF_NO_AOTI:-} " == *" $m "* ]]; then plain+=("$m"); else models+=("$m"); fi
  done
  if [[ ${#models[@]} -eq 0 && ${#plain[@]} -eq 0 ]]; then  # the whole list
    export_part hf --suite huggingface ${HF_AOTI:+--aoti} &
    return
  fi
  [[ ${#plain[@]} -gt 0 ]] && export_part hf-plain --suite huggingface -k "$(regex_of "${plain[@]}")" &
  for ((i = 0; i < n; i++)); do
    part=()
    for ((j = i; j < ${#models[@]}; j += n)); do part+=("${models[j]}"); done
    [[ ${#part[@]} -gt 0 ]] && export_part "hf$i" --suite huggingface ${HF_AOTI:+--aoti} -k "$(regex_of "${part[@]}")" &
  done
}

# hf_checks_while_exporting ZOO BACKENDS CHECK_FLAGS...: while the table zoo is exported in the
# background, each HuggingFace model's checks as soon as its exporter has finished (export_part
# leaves a marker), in a zoo of the parts finished so far. The checks need no GPU to themselves
# (only the timings do, and they wait for the whole zoo): a fresh machine had waited 155-313 s
# for the table zoo with its GPU idle (2026-12-02g). Their rows are the table's (--resume: the
# full run then times them only).
hf_checks_while_exporting() {
  local zoo=$1 backends=$2 early=$1.early checked=" " marker part models
  shift 2
  local ready
  while [[ ! -f $TABLE_ZOO_DONE ]]; do
    [[ -n ${ZB_DEADLINE:-} && $(date +%s) -ge $ZB_DEADLINE ]] && return 0
    ready=()
    for marker in "$zoo.parts"/.*.exported; do
      [[ -f $marker ]] || continue
      part=${marker##*/.}; part=${part%.exported}
      if [[ $checked != *" $part "* ]]; then ready+=("$zoo.parts/$part"); checked+="$part "; fi
    done
    if [[ ${#ready[@]} -eq 0 ]]; then sleep 5; continue; fi
    rm -rf "$early"
    $PY scripts/merge_zoos.py "$early" "${ready[@]}" > /dev/null || continue
    models=$($PY -c 'import json, sys
print(" ".join(e["name"] for e in json.load(open(sys.argv[1]))["models"] if e.get("status") == "exported"))' \
      "$early/index.json")
    [[ -n $models ]] || continue
    log "checks beside the exports still running: $models"
    run_zb compile-hf 20 --suite huggingface --backend "$backends" -k "$(regex_of $models)" --zoo "$early" "$@"
  done
}

# The issue-16 table: every backend on the timm zoo, inference, bs 8, float32, in one invocation;
# timings one per GPU (never two on one: they would share its timings), each on its share of
# the CPUs. --resume: a later call continues it.
stage_compile-table() {
  local zoo=$ZOO-table devices
  [[ -n ${HF_TABLE_COMPLETE:-} ]] && { echo "-- compile-table: nothing to run (the table is complete)"; return 0; }
  # TABLE_LEAVES_S: seconds of the call's deadline left to the stages after this one (a retime
  # in the same call), which would otherwise start only when the table has nothing that fits.
  [[ -n ${ZB_DEADLINE:-} ]] && local ZB_DEADLINE=$((ZB_DEADLINE - ${TABLE_LEAVES_S:-0}))
  devices=$(one_worker_per_gpu)
  local cpus="0-$((JOBS - 1))"
  if [[ -n ${TABLE_GPU:-} ]]; then
    # One GPU for the table (the lists run on the other): rows say `cuda`, as one GPU's run does,
    # so --resume continues a table timed on a one-GPU machine; the lower half of the CPUs.
    export CUDA_VISIBLE_DEVICES=$TABLE_GPU
    devices=cuda cpus="0-$((JOBS / 2 - 1))"
  fi
  # The checks three at a time per GPU (untimed), then the timings alone; Inductor's and
  # Triton's caches kept, so a model's timing child does not compile from nothing again what
  # its check compiled (its compilation_latency is then warm: docs/results.md says so).
  local check_flags=(--resume --accuracy --devices "$devices" --cpu-affinity "$cpus"
    --accuracy-workers "${ACCURACY_WORKERS:-3}" --keep-compile-cache --timeout "${MODEL_TIMEOUT:-600}")
  local table_flags=("${check_flags[@]}" --zoo "$zoo" --performance --repeat "${REPEAT:-10}")
  local hf_backends="python_eager,jit,cudagraphs${HF_AOTI:+,aot_inductor},inductor,inductor:reduce-overhead"
  if [[ -n ${TABLE_ZOO_BACKGROUND:-} ]]; then
    [[ -n ${HF_TABLE:-} ]] && hf_checks_while_exporting "$zoo" "$hf_backends" "${check_flags[@]}"
    wait_for "$TABLE_ZOO_DONE" "the table zoo's export" "${TABLE_ZOO_WAIT_S:-600}"
    tail -4 "$LOGS/table-zoo.log"
  fi
  [[ -f $zoo/index.json ]] || { echo "no table zoo: run the table-zoo stage first"; return 2; }
  local suites=()
  [[ ${TIMM_TABLE:-1} == 1 ]] && suites+=(timm_models)
  [[ -n ${HF_TABLE:-} ]] && suites+=(huggingface)
  log "side by side on ${suites[*]:-no suite} ($devices, CPUs $cpus): $SIDE_BY_SIDE_BACKENDS"
  if [[ ${TIMM_TABLE:-1} == 1 ]]; then
    run_zb compile-timm 80 --suite timm_models --backend "$SIDE_BY_SIDE_BACKENDS" "${table_flags[@]}"
  fi
  if [[ -n ${HF_TABLE:-} ]]; then
    # HF_TABLE_FIRST: models whose checks and timings go before the others' (an invocation sorts
    # all checks before all timings), e.g. the ones an earlier session left unfinished.
    [[ -n ${HF_TABLE_FIRST:-} ]] && run_zb compile-hf 60 --suite huggingface --backend "$hf_backends" \
      -k "$(regex_of $HF_TABLE_FIRST)" "${table_flags[@]}"
    run_zb compile-hf 60 --suite huggingface --backend "$hf_backends" "${table_flags[@]}"
  fi
  zb report "$RESULTS"/compile-*/*.csv --markdown "$RESULTS/compile-table.md" > /dev/null
  # Where the table's device time went (3.5 GPU-minutes per HuggingFace model, 2026-12-02).
  $PY scripts/phase_times.py "$RESULTS"/compile-hf/logs --top 10 2> /dev/null | head -40
  unset CUDA_VISIBLE_DEVICES
}

# Issues 18 and 19: the models whose CUDA-graph capture falls back, and the jit accuracy failure
# to bisect; exported beside the build (they need no zoobench).
DIAG_ZOO_DONE=$LOGS/.diag-zoo-done
DIAG_TIMM=(tf_efficientnet_b0 mobilevit_s)
DIAG_HF=(BertForMaskedLM AllenaiLongformerBase BartForConditionalGeneration)
# zoo_in_background ZOO MARKER PARTS: PARTS (a function starting export_part jobs) into
# ZOO.parts in the background, merged into ZOO, then MARKER; the stages after it wait for MARKER.
zoo_in_background() {
  local zoo=$1 marker=$2 parts=$3 log="$LOGS/$(basename "$1").log"
  rm -f "$marker"
  (
    rm -rf "$zoo.parts" && mkdir -p "$zoo.parts"
    ZOO=$zoo "$parts"
    wait
    $PY scripts/merge_zoos.py "$zoo" "$zoo.parts"/*
    touch "$marker"
  ) > "$log" 2>&1 &
  echo "-- $zoo: exporting in the background (log: $log)"
}

diag_parts() {
  export_part diag-timm --suite timm_models --batch-size 8 -k "$(regex_of "${DIAG_TIMM[@]}")" &
  export_part diag-hf --suite huggingface -k "$(regex_of "${DIAG_HF[@]}")" &
}

stage_diag-zoo() {
  [[ -f $ZOO-diag/index.json ]] && { touch "$DIAG_ZOO_DONE"; echo "-- diagnosis zoo exported before"; return 0; }
  zoo_in_background "$ZOO-diag" "$DIAG_ZOO_DONE" diag_parts
}

stage_host-syncs() {
  wait_for "$DIAG_ZOO_DONE" "the diagnosis zoo's export" 600
  log "host reads and CUDA-graph capture of ${DIAG_TIMM[*]} ${DIAG_HF[*]}"
  $PY scripts/host_sync_sites.py "$ZOO-diag"/*/* > "$LOGS/host-syncs.log" 2>&1
  cut -c1-700 "$LOGS/host-syncs.log" | head -400
}

TRAIN_ZOO_DONE=$LOGS/.train-zoo-done
# The suites of TRAIN_SUITES only (default both).
train_parts() {
  export OMP_NUM_THREADS=4
  [[ " ${TRAIN_SUITES:-timm_models torchbench} " == *" timm_models "* ]] &&
    export_part train-timm --suite timm_models --batch-size 8 --training -k "$(regex_of "${TIMM_TRAINED[@]}")" &
  [[ " ${TRAIN_SUITES:-timm_models torchbench} " == *" torchbench "* ]] &&
    export_part train-tb --suite torchbench --batch-size 8 --training -k '^(resnet50|text_encoder_bert_dropout)$' &
}

stage_train-zoo() {
  [[ -f $ZOO-train/index.json ]] && { touch "$TRAIN_ZOO_DONE"; echo "-- training zoo exported before"; return 0; }
  zoo_in_background "$ZOO-train" "$TRAIN_ZOO_DONE" train_parts
}

# Training side by side: one invocation per suite, checks two at a time (training holds more
# memory than inference), then the timings alone. TRAIN_SUITES and TRAIN_BACKENDS narrow it
# (a call that measures one change on the torchbench pair); TRAIN_RUN names the result folders
# (compile-train-<suite> by default), so a new measurement does not resume an older one.
stage_compile-train() {
  wait_for "$TRAIN_ZOO_DONE" "the training zoo's export" 600
  local zoo=$ZOO-train suite
  [[ -f $zoo/index.json ]] || { echo "no training zoo: run the train-zoo stage first"; return 2; }
  for suite in ${TRAIN_SUITES:-timm_models torchbench}; do
    run_zb "${TRAIN_RUN:-compile-train}-$suite" 30 --resume --zoo "$zoo" --suite "$suite" --training --accuracy --performance \
      --devices "$(one_worker_per_gpu)" --cpu-affinity "0-$((JOBS - 1))" --accuracy-workers 2 \
      --keep-compile-cache --repeat "${REPEAT:-10}" --timeout "${MODEL_TIMEOUT:-600}" \
      --backend "${TRAIN_BACKENDS:-python_eager,jit,cudagraphs,inductor,inductor:reduce-overhead}"
  done
  zb report "$RESULTS/${TRAIN_RUN:-compile-train}"-*/*.csv --markdown "$RESULTS/${TRAIN_RUN:-compile-train}.md" > /dev/null
}

# One change re-measured on a few models, in a result folder of its own: RETIME_SUITE (huggingface),
# RETIME_MODELS (names, required), RETIME_BACKENDS (python_eager,jit,cudagraphs), RETIME_RUN
# (retime). The models are exported beside the build (zoo $ZOO-retime, one exporter per model),
# without packages unless RETIME_AOTI_OPTIONS is set: then with packages compiled with those
# Inductor options (JSON, e.g. '{"force_shape_pad": true}'; "{}" for the defaults);
# RETIME_EXPORT_FLAGS adds exporter flags ("--aoti", "--aoti-numerics default"); accuracy and
# performance, timings alone.
RETIME_ZOO_DONE=$LOGS/.retime-zoo-done
stage_retime-zoo() {
  [[ -n ${RETIME_MODELS:-} ]] || { echo "RETIME_MODELS names no model"; return 2; }
  retime_parts() {
    local extra=()
    [[ -n ${RETIME_AOTI_OPTIONS:-} ]] && extra=(--aoti --aoti-options "$RETIME_AOTI_OPTIONS")
    # shellcheck disable=SC2206  # RETIME_EXPORT_FLAGS: exporter flags, e.g. "--aoti --aoti-numerics default"
    extra+=(${RETIME_EXPORT_FLAGS:-})
    # One exporter per model, side by side: a package's compile takes 1-3 minutes, and a
    # retime is a few models.
    local model
    for model in $RETIME_MODELS; do
      export_part "retime-$model" --suite "${RETIME_SUITE:-huggingface}" -k "$(regex_of "$model")" "${extra[@]}" &
    done
  }
  zoo_in_background "$ZOO-retime" "$RETIME_ZOO_DONE" retime_parts
}

stage_retime() {
  wait_for "$RETIME_ZOO_DONE" "the re-timed models' export" 600
  [[ -f $ZOO-retime/index.json ]] || { echo "no retime zoo: run the retime-zoo stage first"; return 2; }
  run_zb "${RETIME_RUN:-retime}" 40 --resume --zoo "$ZOO-retime" --suite "${RETIME_SUITE:-huggingface}" \
    --accuracy --performance --devices "$(one_worker_per_gpu)" --cpu-affinity "0-$((JOBS - 1))" \
    --accuracy-workers "${ACCURACY_WORKERS:-3}" --keep-compile-cache --repeat "${REPEAT:-10}" \
    --timeout "${MODEL_TIMEOUT:-600}" --backend "${RETIME_BACKENDS:-python_eager,jit,cudagraphs}"
}

stage_capture-check() {
  wait_for "$DIAG_ZOO_DONE" "the diagnosis zoo's export" 600
  run_zb capture-check 40 --zoo "$ZOO-diag" --suite all --accuracy --devices cuda \
    --backend jit,cudagraphs --timeout 300
  grep -h "" "$RESULTS"/capture-check/*accuracy.csv 2>/dev/null | cut -d, -f1-5,22-23 | head -20
}

stage_dropout() {
  log "bench_dropout on CUDA"
  # Short: each timed iteration is 20 queued calls between CUDA events, but its wall time is
  # much longer than that (a min_time of 0.2 s and 5 repetitions took 265 s on 2026-12-01).
  "$BUILD/bench/bench_dropout" --benchmark_filter='/cuda/' --benchmark_min_time=0.02 \
    --benchmark_repetitions=3 --benchmark_report_aggregates_only=true > "$LOGS/bench-dropout-cuda.txt" 2>&1
  grep -E "median|Benchmark" "$LOGS/bench-dropout-cuda.txt" | head -20
}

# Needs the build's bench_training_package_runner for the package sides (Python's loader crashed
# on the package; the runner is LibTorch's C++ loader). A few minutes a model (the
# package's compile and torch.compile's are the bulk). ZB_DEADLINE ends it 30 s early, so the
# pack stage after it still runs; the sides already done are in the model's .txt.
stage_training-package() {
  local model rc=0 left
  for model in ${TRAINING_PACKAGE_MODELS:-text_encoder_bert_dropout}; do
    left=$((${ZB_DEADLINE:-$(($(date +%s) + 3600))} - $(date +%s) - 30))
    ((left > 60)) || { echo "-- training-package: $model not started, the call's deadline is near (${left}s left)"; rc=1; continue; }
    log "training step as one package: $model (at most ${left}s)"
    timeout "$left" "$PY" bench/training_package.py --model "$model" --runner "$BUILD/bench/bench_training_package_runner" \
      --sides "${TRAINING_PACKAGE_SIDES:-eager,inductor:reduce-overhead,package,package_graph}" \
      ${TRAINING_PACKAGE_FLAGS:-} > "$LOGS/training-package-$model.txt" 2> "$LOGS/training-package-$model.log" || rc=1
    cat "$LOGS/training-package-$model.txt"
  done
  return $rc
}

# The test plants the fault itself (tests/integration/planted_inductor_fault/) and makes its own
# one-model zoo; about twenty checks, each a child that compiles the model: a few minutes.
stage_compiler-bisect() {
  log "compiler bisector: zoobench bisect --backend inductor finds a planted wrong lowering (CompilerBisectorOnCuda)"
  local left=$((${ZB_DEADLINE:-$(($(date +%s) + 900))} - $(date +%s) - 30))
  ((left > 120)) || { echo "-- compiler-bisect: not started, the call's deadline is near (${left}s left)"; return 0; }
  # Whether the plant takes, in seconds rather than the test's minutes: relu compiled by Inductor
  # on CUDA must come out as abs in a Python with the plant, and as relu without it.
  local probe='import torch; x = torch.tensor([-2.0, 3.0], device="cuda"); y = torch.compile(torch.relu)(x); print("-- plant probe: relu(-2, 3) ->", y.tolist())'
  (PYTHONPATH="$ROOT/tests/integration/planted_inductor_fault${PYTHONPATH:+:$PYTHONPATH}" ZOOBENCH_TEST_PLANT_INDUCTOR_FAULT=relu_as_abs \
    timeout 120 $PY -c "$probe" 2>&1 | tail -3)
  (cd "$BUILD" && ctest -R '^CompilerBisectorOnCuda\.' --timeout "$left" --verbose > "$LOGS/compiler-bisect.log" 2>&1)
  local rc=$?
  grep -q "No tests were found" "$LOGS/compiler-bisect.log" && { echo "-- no CompilerBisectorOnCuda test: build integration_gpu_tests"; return 1; }
  grep -E "compiler bisector|-> [a-z_]+|Passed|Failed|Skipped|Not Run|tests passed|tests failed|Failure|Expected|Which is" \
    "$LOGS/compiler-bisect.log" | head -60
  return $rc
}

stage_bisect() {
  wait_for "$DIAG_ZOO_DONE" "the diagnosis zoo's export" 600
  log "zoobench bisect: AllenaiLongformerBase, jit, cuda"
  local left=$((${ZB_DEADLINE:-$(($(date +%s) + 900))} - $(date +%s) - 30))
  ((left > 60)) || { echo "-- bisect: not started, the call's deadline is near (${left}s left)"; return 0; }
  # The suite keeps freeze off for this model (zoobench.switches_off); the stage looks at the fault.
  timeout -k 30 -s INT "$left" "$BUILD/zoobench" bisect --zoo "$ZOO-diag" --suite huggingface --only AllenaiLongformerBase --backend jit \
    --ignore-suite-switches --devices cuda --timeout 300 --output-directory "$RESULTS/bisect-longformer" > "$LOGS/bisect-longformer.log" 2>&1
  local rc=$?
  grep -v "^zoobench info" "$LOGS/bisect-longformer.log" | tail -40
  symbolize_crashes "$LOGS/bisect-longformer.log" "$RESULTS"/bisect-longformer/submodules/level*/capture.log
  # The repro as a user would check it: the two commands the report printed, with this build.
  local record=$RESULTS/bisect-longformer/bisect.json line n=0
  [[ -f $record ]] || return $rc
  du -sh "$($PY -c 'import json,sys;print(json.load(open(sys.argv[1]))["divergence"]["repro"] or ".")' "$record")"
  while IFS= read -r line; do
    [[ $line == zoobench\ * ]] || continue
    n=$((n + 1))
    echo "-- repro command $n: $line"
    eval "$BUILD/$line" > "$LOGS/bisect-repro-$n.log" 2>&1
    echo "-- rc $?"; grep -v "^zoobench info" "$LOGS/bisect-repro-$n.log" | tail -6
  done < <($PY -c 'import json,sys;print(json.load(open(sys.argv[1]))["divergence"]["repro_command"])' "$record")
  # When freezing is the switch: the first node of the repro's frozen graph that differs from the
  # unfrozen graph's (tools/zoo_diag/frozen_graph_diff.py), for the report upstream.
  local repro
  repro=$($PY -c 'import json,sys;d=json.load(open(sys.argv[1]));print(d["divergence"]["repro"] if "freeze" in d["fix"] else "")' "$record")
  if [[ -n $repro && -f $repro/eval.pt ]]; then
    echo "-- frozen graph diff of the repro"
    timeout 300 $PY tools/zoo_diag/frozen_graph_diff.py --model "$repro/eval.pt" --inputs "$repro/inputs.pt" --device cuda \
      --json "$RESULTS/bisect-longformer/frozen-graph-diff.json" > "$LOGS/frozen-graph-diff.log" 2>&1
    echo "-- rc $?"; tail -25 "$LOGS/frozen-graph-diff.log"
  fi
  return $rc
}

stage_overhead() {
  log "the Python backends' bridge cost: C++ -> Python call vs a Python loop (bench_python_bridge)"
  timeout 240 "$BUILD/bench/bench_python_bridge" --benchmark_format=json > "$LOGS/bench-python-bridge.json" 2> "$LOGS/bench-python-bridge.err"
  echo "-- bench_python_bridge rc $?"
  grep -E '"name"|"real_time"' "$LOGS/bench-python-bridge.json" | paste - - | grep median
}

# The three lists (scripts/gpu-lists.sh: its parts in LISTS_PARTS, default export run); the
# TorchBench checkout travels as .torchbench (a copy of ../shared/torchbench, carried).
stage_lists() {
  # Its own limit from the call's deadline (lists-beside sets one), else gpu-lists.sh's default.
  local limit=${LISTS_LIMIT_S:-}
  [[ -z $limit && -n ${ZB_DEADLINE:-} ]] && limit=$((ZB_DEADLINE - $(date +%s) - 30))
  TORCHBENCH_DIR=${TORCHBENCH_DIR:-$ROOT/.torchbench} ZOO=$ZOO RESULTS=$RESULTS LOGS=$LOGS PY=$PY BUILD=$BUILD OUT=$OUT \
    LISTS_LIMIT_S=${limit:-540} bash scripts/gpu-lists.sh ${LISTS_PARTS:-export run}
}

# The lists beside other work: their own GPU (the last) and the upper half of the CPUs
# (LISTS_BESIDE_CPUS: a taskset list, or "all" when nothing else will need them once the build is
# done), limited by ZB_DEADLINE; `pack` waits for them. Exports start at once (they need no build).
LISTS_DONE=$LOGS/.lists-beside-done
stage_lists-beside() {
  local last cpus limit
  last=$(($(physical_gpus) - 1)) cpus=${LISTS_BESIDE_CPUS:-$((JOBS / 2))-$((JOBS - 1))}
  limit=$((${ZB_DEADLINE:-$(($(date +%s) + 540))} - $(date +%s) - 30))
  rm -f "$LISTS_DONE"
  log "lists beside: GPU $last, CPUs $cpus, ${limit}s (log: $LOGS/lists-beside.log)"
  (
    [[ $cpus != all ]] && command -v taskset > /dev/null && taskset -cp "$cpus" $BASHPID > /dev/null
    LISTS_GPUS=$last LISTS_LIMIT_S=$limit stage_lists > "$LOGS/lists-beside.log" 2>&1
    touch "$LISTS_DONE"
  ) &
}

# Judged accuracy cases: PyTorch's own torch._dynamo.utils.same on real timm models (eager vs
# torch.compile vs bf16 vs noise); `judged` asks `zoobench same` the same questions.
stage_judged-cases() {
  log "judged cases from real timm models (torch.compile, bf16, noise)"
  rm -rf "$ROOT/judged-gpu"
  $PY tests/gpu/accuracy/generate_judged_cases.py --out "$ROOT/judged-gpu" --device cuda > "$LOGS/judged-generate.log" 2>&1
  tail -3 "$LOGS/judged-generate.log"
}

stage_judged() {
  log "judged cases: zoobench same vs PyTorch's torch._dynamo.utils.same"
  [[ -f $ROOT/judged-gpu/cases.json ]] || { echo "no judged cases: run the judged-cases stage first"; return 2; }
  $PY tests/gpu/accuracy/check_judged_cases.py "$ROOT/judged-gpu" --zoobench "$BUILD/zoobench" --require-upstream -j 4 2>&1 | tail -8
}

# The 14 timm models, inference, batch 8, fp32, one backend: accuracy + performance.
run_timm() {
  local backend=$1; shift
  log "timm_models inference with $backend"
  run_zb "timm-$backend" 20 --resume --zoo "$ZOO" --suite timm_models --accuracy --performance --devices cuda \
    --backend "$backend" --repeat "${REPEAT:-15}" --timeout 300 "$@"
}

stage_run() {
  zb list --zoo "$ZOO" --suite all --devices cuda | tail -30
  run_timm eager  # the reference against itself: accuracy against float64, speedup ~1.0
  run_timm aot_inductor
  run_timm jit
  run_timm cudagraphs
}

# zoobench's eager latency vs a Python loop timing the same TorchScript file with CUDA events.
# Three runs of each, alternating (Python, zoobench, Python, ...), so drift hits both sides;
# every process on one CPU (LATENCY_CPU; docs/performance.md says why).
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
# built), each in several processes, on one pinned CPU and unpinned.
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

stage_train() {
  # Peak memory: eager_peak_mem with the patch vs without; accuracy: jit (patched) vs eager.
  log "packed dropout: BERT-style encoder training step with and without the patch"
  local patches backend
  for patches in "" --no-patches; do
    ls "$RESULTS/dropout${patches:+-off}"/*_performance.json > /dev/null 2>&1 && { echo "-- done before: dropout$patches"; continue; }
    run_zb "dropout${patches:+-off}" 4 --zoo "$ZOO" --suite torchbench --only text_encoder_bert_dropout --training \
      --accuracy --performance --devices cuda --backend jit --disable-cudagraphs --repeat 10 $patches
  done
  for backend in eager jit cudagraphs; do
    log "training: 3 timm models with $backend"
    run_zb "train-$backend" 6 --resume --zoo "$ZOO" --suite timm_models --training --accuracy --performance \
      --devices cuda --backend "$backend" -k "$(regex_of "${TIMM_TRAINED[@]}")" --repeat 10 --timeout 300
  done
}

stage_layouts() {
  log "input-layout fuzzing of the compiled backends on timm models (two workers)"
  local backend
  for backend in ${LAYOUT_BACKENDS:-aot_inductor jit}; do
    run_zb "layouts-$backend" 8 --resume --zoo "$ZOO" --suite timm_models --accuracy --devices "${WORKER_DEVICES:-$(two_workers)}" \
      --backend "$backend" -k "$(regex_of "${LAYOUT_TIMM[@]}")" --input-layouts contiguous,transposed,gapped,overlapping,expanded
  done
}

# WORKER_DEVICES overrides the devices (cuda:1 alone: one worker, in a child pinned to GPU 1).
stage_extras() {
  local devices=${WORKER_DEVICES:-$(two_workers)}
  log "HuggingFace and torchbench extras (vision_maskrcnn, resnet50, BERT dropout) with jit on $devices: accuracy"
  run_zb hf-jit 8 --resume --zoo "$ZOO" --suite huggingface --accuracy --devices "$devices" --backend jit --timeout 300
  run_zb tb-jit 8 --resume --zoo "$ZOO" --suite torchbench --accuracy --devices "$devices" --backend jit --timeout 300
}

stage_workers() {
  log "two workers ($(two_workers)): timm accuracy with jit"
  run_zb two-workers 6 --resume --zoo "$ZOO" --suite timm_models --accuracy --devices "$(two_workers)" --backend jit
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

# ---- measure: two lanes in parallel. The timing lane runs one model at a time; the checking
# lane runs accuracy-only work beside it. With two GPUs the timing lane has GPU 0 to itself and
# the checking lane's one-GPU work runs on GPU 1; with one GPU the checking lane waits for the
# timing lane's quiet part (latency and micro-benchmarks want the GPU to themselves).
QUIET_DONE=$LOGS/.quiet-part-done
TIMING_DONE=$LOGS/.timing-lane-done
stage_timing_lane() {
  [[ $(physical_gpus) -ge 2 ]] && export CUDA_VISIBLE_DEVICES=0
  timed stage_latency; timed stage_bench; touch "$QUIET_DONE"; timed stage_run; touch "$TIMING_DONE"
}

stage_checking_lane() {
  export OMP_NUM_THREADS=${CHECKING_THREADS:-4}
  if [[ $(physical_gpus) -ge 2 ]]; then
    (export CUDA_VISIBLE_DEVICES=1; timed stage_train; timed stage_layouts)
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
  [[ -f $LISTS_DONE || ! -f $LOGS/lists-beside.log ]] || { wait_for "$LISTS_DONE" "the lists" 600; tail -25 "$LOGS/lists-beside.log"; }
  tar czf "$OUT/gpu-check.tar.gz" --exclude="*.pt" --exclude="*.pt2" "$LOGS" "$RESULTS" "$ZOO/index.json" \
    "$ZOO"/*/*/manifest.json "$ZOO-table"/*/*/manifest.json $(ls -d "$ZOO-lists" 2>/dev/null) 2>/dev/null
  ls -la "$OUT"
}

# --- dispatch: the plan's order; measure's parts and the lanes only when named ---------------
wanted() {
  local s
  for s in "${STAGES[@]}"; do [[ $s == "$1" || ($s == full && " ${PLAN[*]} " == *" $1 "*) ]] && return 0; done
  return 1
}
status=0
for stage in "${PLAN[@]}" latency noise bench run train layouts extras workers judged timing_lane checking_lane; do
  wanted "$stage" || continue
  case $stage in
    timing_lane|checking_lane) "stage_$stage" ;;
    build) timed stage_build || { log "build failed"; exit 1; } ;;
    *) timed "stage_$stage" || status=1 ;;
  esac
done
log "done (status $status)"
exit $status
