#!/usr/bin/env bash
# The three model lists of the Ascend suite on the GPU machine (two H200s): export torchbench,
# huggingface and timm_models on CUDA, then accuracy with jit on two workers; optionally
# AOTInductor packages and accuracy with aot_inductor. A stage of scripts/gpu-check.sh.
#
#   scripts/gpu-lists.sh [PART...]   parts, in this order: export run aoti run-aoti stream pack
#                                    (default: export run pack; stream: every model of the
#                                    lists with its AOTInductor package, a few at a time)
#
# Resumable, to fit device calls of 10 minutes: every call goes on where the last one stopped
# (the exporters leave out models already exported, `zoobench run --resume` models already
# run), and stops itself after LISTS_LIMIT_S seconds, letting the running exporter or zoobench
# finish cleanly (SIGINT). Call it again until it says "all parts done".
#
# GPU memory: one exporter process per GPU (CUDA_VISIBLE_DEVICES), never two on one: the
# HuggingFace list lost two models when eight exporters shared one GPU. GPU 0 exports the
# torchbench list, GPU 1 huggingface then timm_models, each into a zoo of its own (the
# exporter's index is per zoo; no merge, so no copy of multi-GB models):
#   $LISTS_ZOO/torchbench, $LISTS_ZOO/huggingface-timm
# zoobench runs each zoo on both GPUs (--devices cuda:0,cuda:1, one model per process).
#
# Environment, as gpu-check.sh: PY (python3), BUILD (build-gpu), ZOO (zoo-gpu: the lists go to
# $ZOO-lists unless LISTS_ZOO says otherwise), RESULTS (results-gpu: CSVs in
# $RESULTS/lists-jit, $RESULTS/lists-aot_inductor), LOGS (gpu-logs), OUT (gpu-out: `pack`
# writes $OUT/gpu-lists.tar.gz). Also TORCHBENCH_DIR (default: shared/torchbench, else
# ../shared/torchbench), LISTS_LIMIT_S (default 540), AOTI_FILTER (the models that get
# AOTInductor packages: compiling takes a minute or more each; '.' for every model), LISTS_GPUS
# (default: every GPU of the machine; one GPU, e.g. "1", when the other one times something
# beside: both exporters and the runs then share that GPU).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
ROOT=$PWD
PY=${PY:-python3}
BUILD=${BUILD:-build-gpu}
ZOO=${ZOO:-zoo-gpu}
LISTS_ZOO=${LISTS_ZOO:-$ZOO-lists}
RESULTS=${RESULTS:-results-gpu}
LOGS=${LOGS:-$ROOT/gpu-logs}
OUT=${OUT:-$ROOT/gpu-out}
LIMIT_S=${LISTS_LIMIT_S:-540}
AOTI_FILTER=${AOTI_FILTER:-'^(adv_inception_v3|beit_base_patch16_224|convnextv2_nano.fcmae_ft_in22k_in1k|deit_base_distilled_patch16_224|deit_tiny_patch16_224.fb_in1k|ghostnet_100|mobilenetv2_100|mobilenetv3_large_100|mobilevit_s|nfnet_l0|repvgg_a2|tf_efficientnet_b0|visformer_small|vit_base_patch16_siglip_256|resnet18|resnet50|mobilenet_v2|dcgan|phlippe_resnet|lennard_jones|timm_efficientnet|BertForMaskedLM|GPT2ForSequenceClassification|T5ForConditionalGeneration)$'}
if [[ -z ${TORCHBENCH_DIR:-} ]]; then
  TORCHBENCH_DIR=shared/torchbench
  [[ -d $TORCHBENCH_DIR/torchbenchmark ]] || TORCHBENCH_DIR=../shared/torchbench
fi
# Default: every GPU of the machine (a one-GPU machine given "0 1" would send half the work to
# a GPU it does not have).
if [[ -z ${LISTS_GPUS:-} ]]; then
  LISTS_GPUS=$(nvidia-smi -L 2>/dev/null | awk '{ printf "%s%d", (NR > 1 ? " " : ""), NR - 1 }')
  LISTS_GPUS=${LISTS_GPUS:-0}
fi
read -ra GPUS <<< "$LISTS_GPUS"
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
mkdir -p "$LOGS" "$OUT" "$RESULTS" "$LISTS_ZOO"
PARTS=("$@")
[[ ${#PARTS[@]} -eq 0 ]] && PARTS=(export run pack)
DEADLINE=$((SECONDS + LIMIT_S))
UNFINISHED=$LOGS/.lists-unfinished  # exists when something was cut short by the deadline
rm -f "$UNFINISHED"

log() { echo "== [$(date +%H:%M:%S)] lists: $*"; }
left() { echo $((DEADLINE - SECONDS)); }
# within SECONDS COMMAND...: runs COMMAND until the call's deadline; SIGINT then (the exporter
# keeps what it finished, zoobench writes its rows), SIGKILL 30 s later.
within() {
  local remaining
  remaining=$(left)
  if ((remaining < 60)); then
    echo "-- no time left in this call for: $*"
    touch "$UNFINISHED"
    return 124
  fi
  timeout -k 30 -s INT "$remaining" "$@"
  local rc=$?
  # 124: timeout stopped it; 130: the exporter's own exit on SIGINT; 137: killed
  [[ $rc == 124 || $rc == 130 || $rc == 137 ]] && touch "$UNFINISHED"
  return $rc
}

# export_on GPU NAME ARGS...: one exporter on that GPU alone, into $LISTS_ZOO/NAME.
export_on() {
  local gpu=$1 name=$2; shift 2
  CUDA_VISIBLE_DEVICES=$gpu OMP_NUM_THREADS=${EXPORT_THREADS:-8} within \
    $PY tools/export_zoo.py --zoo "$LISTS_ZOO/$name" --device cuda --skip-exported "$@" \
    >> "$LOGS/lists-export-$name.log" 2>&1
  local rc=$?
  echo "-- export $name (GPU $gpu, rc $rc): $(grep -E '^(exported|export_zoo:)' "$LOGS/lists-export-$name.log" | tail -1)"
  return $rc
}

part_export() {
  [[ -d $TORCHBENCH_DIR/torchbenchmark ]] || log "no TorchBench checkout at $TORCHBENCH_DIR: its models fail with that reason"
  local tb_gpu=${GPUS[0]} hf_gpu=${GPUS[-1]}
  log "export on CUDA (GPU $tb_gpu: torchbench; GPU $hf_gpu: huggingface, timm_models), $(left) s left"
  export_on "$tb_gpu" torchbench --suite torchbench --torchbench-dir "$TORCHBENCH_DIR" "$@" &
  (export_on "$hf_gpu" huggingface-timm --suite huggingface "$@"
    export_on "$hf_gpu" huggingface-timm --suite timm_models "$@") &
  wait
}

zb() { "$BUILD/zoobench" "$@"; }

# Started beside gpu-check's build, the exports can end before zoobench is linked.
wait_for_zoobench() {
  while [[ ! -x $BUILD/zoobench ]] && (($(left) > 60)); do sleep 5; done
}

# run_suites BACKEND FILTER: accuracy of the three lists with BACKEND, one worker per GPU.
run_suites() {
  local backend=$1 filter=$2 zoo suite devices
  devices=$(printf 'cuda:%s,' "${GPUS[@]}")
  devices=${devices%,}
  wait_for_zoobench
  for suite in torchbench huggingface timm_models; do
    zoo=$LISTS_ZOO/huggingface-timm
    [[ $suite == torchbench ]] && zoo=$LISTS_ZOO/torchbench
    [[ -f $zoo/index.json ]] || { echo "-- $suite: no zoo at $zoo yet (part export)"; continue; }
    log "$suite accuracy with $backend on $devices, $(left) s left"
    within "$BUILD/zoobench" run --resume --zoo "$zoo" --suite "$suite" --accuracy \
      --devices "$devices" --accuracy-workers "${LISTS_ACCURACY_WORKERS:-3}" --backend "$backend" --timeout 300 -k "$filter" \
      --output-directory "$RESULTS/lists-$backend" > "$LOGS/lists-run-$backend-$suite.log" 2>&1
    echo "-- $suite $backend rc $?: $(grep -vE '^zoobench (info|progress)' "$LOGS/lists-run-$backend-$suite.log" | tail -1)"
  done
}

part_aoti() {
  log "AOTInductor packages for $AOTI_FILTER, $(left) s left"
  part_export --aoti --no-check -k "$AOTI_FILTER"
}

# The lists with AOTInductor packages, without a disk for all of them at once: the packages beside
# the TorchScript files come to about twice the 72 GB the lists' files took (2026-12-01d), and the
# GPU machine has 64 GiB. STREAM_PIPELINES pipelines (default 4) take the models of every suite
# in STREAM_SUITES from one queue, in list order; each exports one model (TorchScript and
# package, into its own zoo: an exporter's index is per zoo), runs it with STREAM_BACKENDS
# (default jit,aot_inductor; accuracy), deletes its model files (its manifest, the index and the
# rows stay) and takes the next, so at most one model per pipeline is on disk, and one
# pipeline's export overlaps another's run. One queue, not a fixed share per pipeline: with every
# fourth name of the list each, the four torchbench models left at a call's start all fell to
# one pipeline, and three waited 4.5 minutes with the HuggingFace list behind them (2026-12-02e).
# Resumable: a model with a row for every backend, or whose export failed, is not taken again
# (scripts/lists_todo.py). A model whose run the deadline cut keeps its files, and the next
# call gives it to the pipeline whose zoo has them, before that pipeline takes from the queue,
# to run without exporting it again (--skip-exported); an export is not started with less than
# STREAM_EXPORT_MIN_S (120) left, since one cut is lost (they took 55-150 s on the H200,
# 2026-12-02d). Each pipeline writes its rows to $RESULTS/lists-stream/SUITE-K (one zoobench
# run per output folder). STREAM_FILTER (a
# regex) narrows the names; STREAM_EXPORT_FLAGS replaces the exporter's "--device cuda --aoti
# --no-check" (with LISTS_GPUS=cpu and STREAM_BACKENDS=jit, the mechanics run on a machine
# without a GPU: tests/python/test_gpu_lists_stream.py).
STREAM_BACKENDS=${STREAM_BACKENDS:-jit,aot_inductor}
stream_names() {  # stream_names SUITE: the names the exporter would export here (skip.device: the GPU's)
  local device=cuda
  [[ ${GPUS[0]} == cpu ]] && device=cpu
  # a row is SUITE/NAME ... export; the listing's last line counts them ("14 export", when
  # every model of the list is to be exported: the stream took "14" for a timm model, 2026-12-02f)
  $PY tools/export_zoo.py --suite "$1" --device "$device" --torchbench-dir "$TORCHBENCH_DIR" --list 2>/dev/null |
    awk 'NR > 1 && $NF == "export" && $1 ~ /\// { sub(/^[^\/]*\//, "", $1); print $1 }' | grep -E "${STREAM_FILTER:-.}"
}
# STREAM_ALSO_DONE: more result folders whose rows count as done (the side-by-side table's
# HuggingFace rows, made at the list's batch sizes: results-gpu/compile-hf).
stream_left() {  # stream_left SUITE NAME...: those without a row for every backend (or a failed export)
  local suite=$1 k dir zoos=() also=(); shift
  for ((k = 0; k < ${STREAM_PIPELINES:-4}; k++)); do zoos+=(--zoo "$LISTS_ZOO/stream-$suite-$k"); done
  for dir in ${STREAM_ALSO_DONE:-}; do also+=(--results "$dir"); done
  $PY scripts/lists_todo.py --suite "$suite" --backends "$STREAM_BACKENDS" --results "$RESULTS/lists-stream" \
    "${also[@]}" "${zoos[@]}" "$@"
}
# The pipelines share one GPU's memory, which none of them can see the others take: a step
# that runs out of it beside them (an export's trace, a check's float64 run; the HuggingFace
# list's largest batch sizes did with three checks per GPU, 2026-12-01d) is done again alone,
# once every other pipeline's step has ended and while none starts (`flock`: each step holds
# the GPU lock shared, a retry holds it exclusively; the turnstile keeps the retry from
# waiting behind a stream of new shared holders). A retried check writes its rows to
# SUITE-K-alone, read after SUITE-K's.
gpu_beside_others() {  # gpu_beside_others CMD...: CMD as one of the pipelines' steps
  mkdir -p "$LISTS_ZOO"
  (flock -x 8 && flock -s 9 && flock -u 8 && "$@") 8> "$LISTS_ZOO/.stream-gpu.turn" 9> "$LISTS_ZOO/.stream-gpu.lock"
}
gpu_alone() {  # gpu_alone CMD...: CMD with no other pipeline's step on the GPU
  mkdir -p "$LISTS_ZOO"
  (flock -x 8 && flock -x 9 && "$@") 8> "$LISTS_ZOO/.stream-gpu.turn" 9> "$LISTS_ZOO/.stream-gpu.lock"
}
if ! command -v flock > /dev/null; then  # util-linux's; without it the steps still run, unguarded
  gpu_beside_others() { "$@"; }
  gpu_alone() { "$@"; }
fi
stream_export() {  # stream_export SUITE K NAME GPU RUNNER: the model and its package into the pipeline's zoo
  CUDA_VISIBLE_DEVICES=$4 OMP_NUM_THREADS=${EXPORT_THREADS:-4} $5 within \
    $PY tools/export_zoo.py --zoo "$LISTS_ZOO/stream-$1-$2" ${STREAM_EXPORT_FLAGS:---device cuda --aoti --no-check} \
    --suite "$1" --torchbench-dir "$TORCHBENCH_DIR" --only "$3" --skip-exported >> "$LOGS/lists-stream-export-$1-$2.log" 2>&1
}
stream_run() {  # stream_run SUITE K NAME DEVICE RUNNER OUTPUT: its accuracy with STREAM_BACKENDS
  $5 within "$BUILD/zoobench" run --resume --zoo "$LISTS_ZOO/stream-$1-$2" --suite "$1" --accuracy --devices "$4" \
    --backend "$STREAM_BACKENDS" --accuracy-workers 1 --timeout 300 -k "^${3}\$" \
    --output-directory "$RESULTS/lists-stream/$6" >> "$LOGS/lists-stream-run-$1-$2.log" 2>&1
}
export_ran_out_of_memory() {  # export_ran_out_of_memory SUITE K NAME: its last export failed for memory
  grep -E "/$3: FAILED" "$LOGS/lists-stream-export-$1-$2.log" 2>/dev/null | tail -1 | grep -qi "out of memory"
}
check_ran_out_of_memory() {  # check_ran_out_of_memory SUITE K NAME: an OOM row in the pipeline's rows
  awk -F, -v name="$3" '$2 == name && $4 ~ /OOM$/ { found = 1 } END { exit !found }' \
    "$RESULTS/lists-stream/$1-$2"/*_accuracy.csv 2> /dev/null
}
# take_first QUEUE: prints its first line and removes it (nothing when it is empty). The
# pipelines take from one queue at once; mkdir is the lock (atomic, and there without flock).
take_first() {
  local tries=0
  until mkdir "$1.taking" 2> /dev/null; do
    # a pipeline killed while holding it (the next call's part_stream clears it) must not
    # keep the others waiting
    ((++tries > 150)) && { echo "-- $1 stayed locked for 30 s: this pipeline stops" >&2; return 1; }
    sleep 0.2
  done
  head -n 1 "$1"
  sed -i 1d "$1"
  rmdir "$1.taking"
}
stream_pipeline() {  # stream_pipeline K GPU OWN SHARED: the models of OWN (its kept files), then SHARED's
  local k=$1 gpu=$2 own=$3 shared=$4 item suite name zoo device=cuda:$2
  [[ $gpu == cpu ]] && device=cpu
  while [[ -s $own || -s $shared ]]; do
    (($(left) > ${STREAM_EXPORT_MIN_S:-120})) || { touch "$UNFINISHED"; break; }
    item=$(take_first "$own")
    [[ -n $item ]] || item=$(take_first "$shared")
    [[ -n $item ]] || break
    read -r suite name <<< "$item"
    zoo=$LISTS_ZOO/stream-$suite-$k
    stream_export "$suite" "$k" "$name" "$gpu" gpu_beside_others
    if export_ran_out_of_memory "$suite" "$k" "$name"; then
      echo "-- $suite/$name (pipeline $k): export out of memory beside the other pipelines; again alone"
      stream_export "$suite" "$k" "$name" "$gpu" gpu_alone
    fi
    if [[ -f $zoo/$suite/$name/manifest.json ]]; then
      wait_for_zoobench  # the first exports overlap the build
      stream_run "$suite" "$k" "$name" "$device" gpu_beside_others "$suite-$k"
      if check_ran_out_of_memory "$suite" "$k" "$name"; then
        echo "-- $suite/$name (pipeline $k): a check out of memory beside the other pipelines; again alone"
        stream_run "$suite" "$k" "$name" "$device" gpu_alone "$suite-$k-alone"
      fi
    fi
    if [[ -z $(stream_left "$suite" "$name") ]]; then
      find "$zoo/$suite/$name" -type f \( -name '*.pt' -o -name '*.pt2' \) -delete 2>/dev/null
    else
      echo "-- $suite/$name (pipeline $k): rows missing, its files kept for the next call"
    fi
    echo "-- $suite/$name (pipeline $k): $(grep -E "^\[[0-9]+/[0-9]+\] $name " "$LOGS/lists-stream-run-$suite-$k.log" 2>/dev/null | tail -2 | xargs)"
  done
}
# sample_usage: every 15 s, the machine's load and the GPU's use, into lists-stream-usage.log:
# whether the pipelines wait on the CPUs (Inductor's compiles) or on the GPU, which decides
# STREAM_PIPELINES (the pack part sums it up).
sample_usage() {
  while :; do
    echo "$(date +%H:%M:%S) load $(cut -d' ' -f1 /proc/loadavg) cpus $(nproc)" \
      "gpu $(nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader,nounits 2>/dev/null | head -1 | tr -d ' ')"
    sleep 15
  done >> "$LOGS/lists-stream-usage.log" 2>&1
}
usage_summary() {  # the means of what sample_usage wrote
  awk '{ load += $3; cpus = $5; split($7, g, ","); util += g[1]; mem += g[2]; n++ }
       END { if (n) printf "-- stream usage, %d samples: load %.1f of %d CPUs, GPU %.0f%% busy, %.1f GiB\n",
                           n, load / n, cpus, util / n, mem / n / 1024 }' "$LOGS/lists-stream-usage.log" 2> /dev/null
}
part_stream() {
  local suite names todo name k owner pipelines=${STREAM_PIPELINES:-4} queue=$LOGS/.stream-queue sampler running=()
  command -v flock > /dev/null || echo "-- no flock here: a retry after running out of memory is not alone on the GPU"
  rm -rf "$queue"* && : > "$queue"
  for ((k = 0; k < pipelines; k++)); do : > "$queue-$k"; done
  for suite in ${STREAM_SUITES:-torchbench timm_models huggingface}; do
    mapfile -t names < <(stream_names "$suite")
    mapfile -t todo < <(stream_left "$suite" "${names[@]}")
    log "$suite: ${#todo[@]} models left for $STREAM_BACKENDS, $pipelines pipelines, $(left) s left"
    for name in "${todo[@]}"; do
      owner=
      for ((k = 0; k < pipelines; k++)); do
        [[ -f $LISTS_ZOO/stream-$suite-$k/$suite/$name/manifest.json ]] && owner=$k
      done
      echo "$suite $name" >> "$queue${owner:+-$owner}"
    done
  done
  sample_usage &
  sampler=$!
  for ((k = 0; k < pipelines; k++)); do
    stream_pipeline "$k" "${GPUS[k % ${#GPUS[@]}]}" "$queue-$k" "$queue" &
    running+=($!)
  done
  wait "${running[@]}"
  kill "$sampler" 2> /dev/null
  # whatever stopped the pipelines (the deadline, a stuck lock), models still queued are unfinished
  for k in "" $(seq 0 $((pipelines - 1))); do
    [[ -s $queue${k:+-$k} ]] && touch "$UNFINISHED"
  done
}

part_pack() {
  # Where the time went, while the machine is still warm enough to act on it.
  $PY scripts/phase_times.py "$LOGS"/lists-stream-export-*.log "$RESULTS"/lists-stream --top 8 2> /dev/null
  usage_summary
  tar czf "$OUT/gpu-lists.tar.gz" --exclude="*.pt" --exclude="*.pt2" "$LOGS"/lists-* \
    "$RESULTS"/lists-* "$LISTS_ZOO"/*/index.json "$LISTS_ZOO"/*/*/*/manifest.json 2>/dev/null
  ls -la "$OUT/gpu-lists.tar.gz"
}

for part in "${PARTS[@]}"; do
  case $part in
    export) part_export ;;
    run) run_suites jit . ;;
    aoti) part_aoti ;;
    run-aoti) run_suites aot_inductor "$AOTI_FILTER" ;;
    stream) part_stream ;;
    pack) part_pack ;;
    *) echo "unknown part '$part' (parts: export run aoti run-aoti stream pack)"; exit 2 ;;
  esac
done
# Models that failed are not unfinished: their reasons are in the zoos' index and the CSVs.
if [[ -f $UNFINISHED ]]; then
  log "not finished within ${LIMIT_S}s: call again with the same parts to continue"
  exit 3
fi
log "all parts done: ${PARTS[*]}"
