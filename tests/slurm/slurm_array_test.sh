#!/usr/bin/env bash
# Proves the local Slurm harness and the sample job scripts without the real
# converter: deploy/slurm/submit.sh with SHARD=fake_shard.sh submits a 3-task
# array job and a dependent merge job; every task must run once with its own
# index, the merge must run after all of them and see their outputs. Then a
# second submission whose task 1 fails must leave the merge job cancelled.
# Environment (ctest sets it): LIBSHARD_SOURCE_DIR, LIBSHARD_TEST_TMPDIR.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
[ -n "${LOCAL_SLURM_DIR:-}" ] || exec bash "$here/local_slurm.sh" bash "$0" "$@"
# shellcheck source=tests/slurm/lib.sh
source "$here/lib.sh"

src=${LIBSHARD_SOURCE_DIR:-$here/../..}
work=${LIBSHARD_TEST_TMPDIR:-$LOCAL_SLURM_DIR}/slurm_array_test
rm -rf "$work"
mkdir -p "$work"
export SHARD=$here/fake_shard.sh SLURM_LOGS=$work/logs
submit=$src/deploy/slurm/submit.sh

# 1. Three tasks and a merge, all succeeding.
read -r array merge < <("$submit" "$src/samples/images" "$work/out" 3 --size 64)
[ -n "$merge" ] || fail "submit.sh printed no job ids"
slurm_wait_jobs 120 "$array" "$merge"
slurm_expect_state COMPLETED "$array" "$merge"
[ "$(slurm_job_field "$array" JobId | wc -l)" -eq 3 ] || fail "array job $array does not have 3 tasks"
for i in 0 1 2; do
  want="task $i of 3 options --size 64 job $array"
  [ "$(cat "$work/out/fake-task-$i.txt")" = "$want" ] || fail "task $i wrote '$(cat "$work/out/fake-task-$i.txt")', expected '$want'"
  grep -q "fake shard: convert task $i of 3" "$work/logs/shard-convert-${array}_$i.out" || fail "no log for task $i"
done
[ "$(wc -l < "$work/out/fake-merged.txt")" -eq 3 ] || fail "merge did not combine 3 tasks"
grep -q "fake shard: merged 3 tasks" "$work/logs/shard-merge-$merge.out" || fail "no merge log"
merge_start=$(slurm_job_field "$merge" StartTime)
last_end=$(slurm_job_field "$array" EndTime | sort | tail -n 1)
[[ ! "$merge_start" < "$last_end" ]] || fail "merge started at $merge_start, before the last task ended at $last_end"
echo "ok: array job $array (3 tasks) then merge job $merge (started $merge_start, last task ended $last_end)"

# 2. Task 1 fails: the merge job must not run.
read -r array merge < <(FAKE_SHARD_FAIL_TASK=1 "$submit" "$src/samples/images" "$work/out-fail" 3)
slurm_wait_jobs 120 "$array" "$merge"
states=$(paste -d ' ' <(slurm_job_field "$array" ArrayTaskId) <(slurm_job_field "$array" JobState) |
  sort -n | tr '\n' ' ')
[ "$states" = "0 COMPLETED 1 FAILED 2 COMPLETED " ] ||
  fail "failing submission: array tasks ended as '$states', expected only task 1 FAILED"
slurm_expect_state CANCELLED "$merge"
[ ! -e "$work/out-fail/fake-merged.txt" ] || fail "merge ran although task 1 failed"
echo "ok: task 1 failed, merge job $merge cancelled"
echo "slurm_array_test: 2 passed, 0 failed"
