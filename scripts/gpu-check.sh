#!/usr/bin/env bash
# Runs on the GPU machine (H200, PyTorch 2.11 + CUDA 13; nothing can be installed there):
# builds zoobench against the machine's PyTorch, runs every test including the `gpu`-labelled
# ones, exports the timm / HuggingFace models on CUDA and runs them through zoobench.
#
#   scripts/gpu-check.sh [STAGE...]     stages: env build test smoke zoo run all (default: all)
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
  log "ctest (all labels but browser)"
  (cd "$BUILD" && ctest -j 8 --timeout 600 --label-exclude browser --output-on-failure > "$OUT/ctest.log" 2>&1)
  grep -E "tests passed|tests failed|\*\*\*Failed|Not Run|\(Failed\)|Timeout" "$OUT/ctest.log" | head -60
}

# Exports run in parallel into separate zoos (the exporter's index is per zoo), then are merged.
export_part() {
  local name=$1; shift
  $PY tools/export_zoo.py --zoo "$ZOO.parts/$name" --device cuda "$@" > "$OUT/export-$name.log" 2>&1
  tail -5 "$OUT/export-$name.log"
}

stage_zoo() {
  log "export timm_models (bs 8) and HuggingFace models on cuda"
  mkdir -p "$ZOO.parts"
  export_part timm --suite timm_models --batch-size 8 --training &
  export_part hf --suite huggingface --batch-size 8 --training \
    -k '^(BertForMaskedLM|GPT2ForSequenceClassification|T5ForConditionalGeneration|AllenaiLongformerBase)$' &
  export_part tb --suite torchbench --batch-size 8 --training -k '^(resnet50|vision_maskrcnn|text_encoder_bert_dropout)$' &
  export_part aoti --suite timm_models --batch-size 8 --aoti -k '^(resnet50|mobilenetv3_large_100|repvgg_a2|tf_efficientnet_b0)$' &
  wait
  $PY - "$ZOO" "$ZOO.parts" <<'PYEOF'
import json, os, shutil, sys
zoo, parts = sys.argv[1], sys.argv[2]
models = {}
for part in sorted(os.listdir(parts)):
    root = os.path.join(parts, part)
    for suite in os.listdir(root):
        if not os.path.isdir(os.path.join(root, suite)): continue
        for model in os.listdir(os.path.join(root, suite)):
            src, dst = os.path.join(root, suite, model), os.path.join(zoo, suite, model)
            if os.path.exists(dst):
                # The aoti part adds packages to models exported elsewhere: merge its artifacts.
                m_dst, m_src = json.load(open(os.path.join(dst, "manifest.json"))), json.load(open(os.path.join(src, "manifest.json")))
                for role, art in m_src["artifacts"].items():
                    if role.startswith("aoti.") and role not in m_dst["artifacts"]:
                        shutil.copy(os.path.join(src, art["path"]), os.path.join(dst, art["path"]))
                        m_dst["artifacts"][role] = art
                json.dump(m_dst, open(os.path.join(dst, "manifest.json"), "w"), indent=1)
            else:
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                shutil.copytree(src, dst)
    index = os.path.join(root, "index.json")
    if os.path.exists(index):
        for entry in json.load(open(index)).get("models", []):
            key = (entry.get("suite"), entry.get("name"))
            if entry.get("status") == "exported" or key not in models: models[key] = entry
os.makedirs(zoo, exist_ok=True)
json.dump({"format": "zoobench-index/1", "models": list(models.values())}, open(os.path.join(zoo, "index.json"), "w"), indent=1)
print("zoo:", sum(1 for m in models.values() if m.get("status") == "exported"), "exported,",
      sum(1 for m in models.values() if m.get("status") == "failed"), "failed")
for m in models.values():
    if m.get("status") == "failed": print("  failed:", m.get("suite"), m.get("name"), "-", str(m.get("reason"))[:300])
PYEOF
}

zb() { "$BUILD/zoobench" "$@"; }

stage_smoke() {
  log "smoke: one timm model and resnet18 exported on cuda, run through zoobench"
  $PY tools/export_zoo.py --zoo "$ZOO-smoke" --device cuda --training --batch-size 8 \
    --suite timm_models --only mobilenetv3_large_100 2>&1 | tail -3
  $PY tools/export_zoo.py --zoo "$ZOO-smoke" --device cuda --training --batch-size 8 \
    --suite torchbench --only resnet18 2>&1 | tail -3
  for mode in --inference --training; do
    zb run --zoo "$ZOO-smoke" --suite all --accuracy --performance --devices cuda --backend jit $mode \
      --repeat 10 --timeout 300 --output-directory "$RESULTS/smoke" 2>&1 | tail -25
  done
}

stage_run() {
  log "zoobench run on cuda"
  zb list --zoo "$ZOO" --suite all --devices cuda | tail -30
  for backend in jit cudagraphs aot_inductor; do
    timed zb run --zoo "$ZOO" --suite timm_models --accuracy --performance --devices cuda --backend "$backend" \
      --repeat 20 --timeout 300 --output-directory "$RESULTS/timm-$backend" 2>&1 | tail -30
  done
}

want env && stage_env
want build && { timed stage_build || exit 1; }
want test && timed stage_test
want smoke && timed stage_smoke
want zoo && timed stage_zoo
want run && timed stage_run
log "done"
