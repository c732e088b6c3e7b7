#!/usr/bin/env bash
# Submits a zoobench run to Slurm as an array job (one partition per task, each into
# RESULTS/part<ID>/) and the job that merges and reports it once every task has ended
# (--dependency=afterany). Submitting the same command again continues: every task runs with
# --resume, so only models without rows run. See README.md, "Spreading a suite over machines".
#
#   scripts/slurm/submit.sh --partitions N --results DIR [--zoobench BIN] [--array INDICES]
#       [--sbatch OPTION]... [--merge-sbatch OPTION]... [--parsable] -- RUN_FLAGS...
#
# RUN_FLAGS are `zoobench run`'s (--zoo, --suite, --accuracy, --devices, ...) except the ones
# this script sets: --output/--output-directory, --total-partitions, --partition-id, --resume.
# --sbatch passes one option to the array job's sbatch (repeat it: --sbatch=--gres=gpu:1
# --sbatch=--partition=gpu); --merge-sbatch to the merge job's. --array re-submits only some
# tasks (Slurm's syntax, e.g. 1,3); the default is every partition. RESULTS, the zoo and the
# zoobench binary must be on a filesystem every node sees. --parsable prints only
# "ARRAY_JOB_ID MERGE_JOB_ID".
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
usage() {
  sed -n '/^#   scripts/,/^#       \[--sbatch/p' "${BASH_SOURCE[0]}" | sed 's/^# //' >&2
  echo "(see the comment at the top of ${BASH_SOURCE[0]})" >&2
  exit 2
}

partitions="" results="" array="" parsable=0
zoobench=${ZOOBENCH:-$repo/build/zoobench}
array_opts=() merge_opts=()
while (($#)); do
  case "$1" in
    --partitions) partitions=$2 && shift ;;
    --partitions=*) partitions=${1#*=} ;;
    --results) results=$2 && shift ;;
    --results=*) results=${1#*=} ;;
    --zoobench) zoobench=$2 && shift ;;
    --zoobench=*) zoobench=${1#*=} ;;
    --array) array=$2 && shift ;;
    --array=*) array=${1#*=} ;;
    --sbatch) array_opts+=("$2") && shift ;;
    --sbatch=*) array_opts+=("${1#*=}") ;;
    --merge-sbatch) merge_opts+=("$2") && shift ;;
    --merge-sbatch=*) merge_opts+=("${1#*=}") ;;
    --parsable) parsable=1 ;;
    --) shift && break ;;
    -h | --help) usage ;;
    *) echo "submit.sh: unknown option $1 (zoobench's run flags go after --)" >&2 && usage ;;
  esac
  shift
done
[[ "$partitions" =~ ^[1-9][0-9]*$ ]] || { echo "submit.sh: --partitions N (N >= 1) is required" >&2; exit 2; }
[[ -n "$results" ]] || { echo "submit.sh: --results DIR is required" >&2; exit 2; }
[[ -x "$zoobench" ]] || { echo "submit.sh: $zoobench is not an executable zoobench (--zoobench BIN)" >&2; exit 2; }
for flag in "$@"; do
  case "${flag%%=*}" in
    --output | --output-directory | --total-partitions | --partition-id | --resume)
      echo "submit.sh: $flag is set per task by partition.sbatch; leave it out of the run flags" >&2
      exit 2 ;;
  esac
done
command -v sbatch >/dev/null || { echo "submit.sh: no sbatch on PATH" >&2; exit 2; }

# The jobs start in another process, maybe on another node: absolute paths only.
mkdir -p "$results/slurm"
results=$(cd "$results" && pwd)
zoobench=$(cd "$(dirname "$zoobench")" && pwd)/$(basename "$zoobench")

array_job=$(sbatch --parsable --array="${array:-0-$((partitions - 1))}" \
  --output="$results/slurm/part%a-job%A.out" "${array_opts[@]}" \
  "$here/partition.sbatch" "$zoobench" "$results" "$partitions" "$@")
array_job=${array_job%%;*}
merge_job=$(sbatch --parsable --dependency="afterany:$array_job" \
  --output="$results/slurm/merge-job%j.out" "${merge_opts[@]}" \
  "$here/merge.sbatch" "$zoobench" "$results" "$partitions" "$@")
merge_job=${merge_job%%;*}

if ((parsable)); then
  echo "$array_job $merge_job"
else
  echo "array job $array_job: $partitions partition(s) into $results/part<ID>/ (logs: $results/slurm/)"
  echo "merge job $merge_job (after every task): $results/merged/, $results/report.md, $results/incomplete.txt"
fi
