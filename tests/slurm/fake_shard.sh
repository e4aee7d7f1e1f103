#!/usr/bin/env bash
# A stand-in for `shard convert`/`shard merge` that proves the Slurm plumbing
# (array tasks, their environment, the afterok dependency) without the real
# converter. convert writes OUT/fake-task-I.txt (I from the Slurm array
# environment, as the real convert takes it); merge checks that every task's
# file is there and writes OUT/fake-merged.txt. FAKE_SHARD_FAIL_TASK=I makes
# task I fail.
set -euo pipefail
case "${1:-}" in
  convert)
    if [ $# -lt 4 ] || [ "$3" != -o ]; then
      echo "fake shard: usage: convert INPUT -o OUT ..." >&2
      exit 2
    fi
    input=$2 out=$4
    shift 4
    index=$((SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN))
    count=$SLURM_ARRAY_TASK_COUNT
    echo "fake shard: convert task $index of $count"
    if [ "${FAKE_SHARD_FAIL_TASK:-}" = "$index" ]; then
      echo "fake shard: failing task $index as asked" >&2
      exit 1
    fi
    [ -d "$input" ] || { echo "fake shard: $input: not a folder" >&2; exit 1; }
    mkdir -p "$out"
    echo "task $index of $count options $* job $SLURM_ARRAY_JOB_ID" > "$out/fake-task-$index.txt"
    ;;
  merge)
    out=$2
    first=$(head -n 1 "$out/fake-task-0.txt") || { echo "fake shard: task 0 missing" >&2; exit 1; }
    read -r _ _ _ count _ <<< "$first"
    : > "$out/fake-merged.txt.tmp"
    for ((i = 0; i < count; i++)); do
      [ -f "$out/fake-task-$i.txt" ] || { echo "fake shard: task $i of $count missing" >&2; exit 1; }
      cat "$out/fake-task-$i.txt" >> "$out/fake-merged.txt.tmp"
    done
    mv "$out/fake-merged.txt.tmp" "$out/fake-merged.txt"
    echo "fake shard: merged $count tasks"
    ;;
  *) echo "fake shard: convert or merge only" >&2; exit 2 ;;
esac
