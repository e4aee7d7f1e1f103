#!/usr/bin/env bash
# Converts INPUT into shards in OUT as a Slurm array job of TASKS tasks
# (default 3), followed by a merge job that runs only if every task succeeded.
# Prints "ARRAY_JOB_ID MERGE_JOB_ID" on stdout.
#
# Usage: deploy/slurm/submit.sh INPUT OUT [TASKS [CONVERT_OPTIONS...]]
#   SHARD         the shard program (default: `shard` on PATH); made absolute
#   SLURM_LOGS    folder for the jobs' output files (default: the current one)
#   SBATCH_ARGS   extra sbatch options for both jobs, e.g. "--partition=cpu"
# INPUT, OUT and SHARD must be visible at the same paths on every node.
# Follow the jobs with `squeue -j ARRAY_JOB_ID,MERGE_JOB_ID`; if a task fails,
# the merge job is cancelled (--kill-on-invalid-dep) instead of waiting forever.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [ $# -lt 2 ]; then
  echo "usage: $0 INPUT OUT [TASKS [CONVERT_OPTIONS...]]" >&2
  exit 2
fi
input=$(realpath -m -- "$1")
out=$(realpath -m -- "$2")
tasks=${3:-3}
shift $(($# < 3 ? $# : 3))
case "$tasks" in
  '' | *[!0-9]* | 0*) echo "$0: TASKS must be a positive whole number, not '$tasks'" >&2; exit 2 ;;
esac
[ -d "$input" ] || { echo "$0: $input: not a folder" >&2; exit 2; }

shard=${SHARD:-shard}
case "$shard" in
  */*) shard=$(realpath -- "$shard") ;;
  *) shard=$(command -v "$shard") || { echo "$0: '$shard' not found on PATH (set SHARD)" >&2; exit 2; } ;;
esac
export SHARD=$shard
logs=$(realpath -m -- "${SLURM_LOGS:-.}")
mkdir -p "$logs"
read -r -a extra <<< "${SBATCH_ARGS:-}"

# --parsable prints "JOBID" or "JOBID;CLUSTER".
array_job=$(sbatch --parsable "${extra[@]}" --array="0-$((tasks - 1))" \
  --output="$logs/shard-convert-%A_%a.out" "$here/convert.sbatch" "$input" "$out" "$@")
array_job=${array_job%%;*}
merge_job=$(sbatch --parsable "${extra[@]}" --dependency="afterok:$array_job" --kill-on-invalid-dep=yes \
  --output="$logs/shard-merge-%j.out" "$here/merge.sbatch" "$out")
merge_job=${merge_job%%;*}
echo "submit: convert array job $array_job ($tasks tasks), merge job $merge_job; logs in $logs" >&2
echo "$array_job $merge_job"
