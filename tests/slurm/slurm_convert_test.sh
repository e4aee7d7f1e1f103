#!/usr/bin/env bash
# The Slurm evidence for distributed conversion: deploy/slurm/submit.sh
# converts samples/images as a 3-task array job plus a dependent merge job on a
# real local Slurm (local_slurm.sh); both must end COMPLETED, and the merged
# output must equal a single-process `shard convert` with the same options:
# every .tfrecord and .idx byte for byte, manifest.json apart from its `run`.
# The merged folder is then what readers see: `shard verify OUT` exits 0 (no
# task manifest taken for a shard), and the Python Loader (when the module is
# built: LIBSHARD_PYTHONPATH) reads every sample of the manifest exactly once.
# Environment (ctest sets it): SHARD (the shard program), LIBSHARD_SOURCE_DIR,
# LIBSHARD_TEST_TMPDIR, LIBSHARD_PYTHONPATH; SLURM_CONVERT_OPTIONS overrides the
# convert options.
# Skips (77) while `shard convert`/`shard merge` do not exist yet.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
export SHARD=${SHARD:-shard}
if [ -z "${LOCAL_SLURM_DIR:-}" ]; then
  # `shard SUB --help` for an unknown SUB prints the general help and exits 0,
  # so look for the subcommands in that and for --num-tasks in convert's.
  # (Captured first: `grep -q` in a pipe may close it before the help ends,
  # and the SIGPIPE would read as a failure under pipefail.)
  commands=$("$SHARD" --help 2>&1) || true
  convert_help=$("$SHARD" convert --help 2>&1) || true
  if ! grep -qE '^ +convert ' <<< "$commands" || ! grep -qE '^ +merge ' <<< "$commands" ||
     ! grep -q -- '--num-tasks' <<< "$convert_help"; then
    # CI (LOCAL_SLURM_REQUIRED=1) must not pass by skipping.
    if [ "${LOCAL_SLURM_REQUIRED:-0}" = 1 ]; then
      echo "slurm_convert_test: FAILED: $SHARD has no 'convert --num-tasks' and 'merge'" >&2
      exit 1
    fi
    echo "slurm_convert_test: SKIPPED: $SHARD has no 'convert --num-tasks' and 'merge' yet" >&2
    exit 77
  fi
  exec bash "$here/local_slurm.sh" bash "$0" "$@"
fi
# shellcheck source=tests/slurm/lib.sh
source "$here/lib.sh"

src=${LIBSHARD_SOURCE_DIR:-$here/../..}
work=${LIBSHARD_TEST_TMPDIR:-$LOCAL_SLURM_DIR}/slurm_convert_test
# Small shards, so that each of the 3 tasks gets several.
read -r -a options <<< "${SLURM_CONVERT_OPTIONS:---size 64 --records-per-shard 8}"
rm -rf "$work"
mkdir -p "$work"

read -r array merge < <(SLURM_LOGS=$work/logs "$src/deploy/slurm/submit.sh" \
  "$src/samples/images" "$work/slurm" 3 "${options[@]}")
[ -n "$merge" ] || fail "submit.sh printed no job ids"
slurm_wait_jobs 600 "$array" "$merge"
tail -n 3 "$work"/logs/*.out
slurm_expect_state COMPLETED "$array" "$merge"

# The same conversion in one process, outside any Slurm job.
env -u SLURM_ARRAY_TASK_ID -u SLURM_ARRAY_TASK_COUNT -u SLURM_ARRAY_TASK_MIN -u JOB_COMPLETION_INDEX \
  "$SHARD" convert "$src/samples/images" -o "$work/single" "${options[@]}" > "$work/single.log" 2>&1 ||
  { cat "$work/single.log" >&2; fail "single-process shard convert failed"; }

list() { (cd "$1" && find . -type f \( -name '*.tfrecord' -o -name '*.idx' \) | sort); }
[ -n "$(list "$work/single")" ] || fail "the single run wrote no shards"
[ "$(list "$work/slurm")" = "$(list "$work/single")" ] ||
  fail "shard files differ:"$'\n'"$(diff <(list "$work/slurm") <(list "$work/single"))"
count=0
while read -r f; do
  cmp "$work/slurm/$f" "$work/single/$f" || fail "$f differs"
  count=$((count + 1))
done < <(list "$work/single")

"$LIBSHARD_PYTHON" - "$work/slurm/manifest.json" "$work/single/manifest.json" << 'PY' || fail "manifest.json differs"
import json, sys
merged, single = (json.load(open(p)) for p in sys.argv[1:])
for m in (merged, single):
    m.pop("run", None)
if merged != single:
    keys = sorted(k for k in set(merged) | set(single) if merged.get(k) != single.get(k))
    print("manifest.json fields that differ (apart from run):", ", ".join(keys), file=sys.stderr)
    sys.exit(1)
PY

[ ! -e "$work/slurm/manifest.task-00000-of-00003.json" ] || fail "a task manifest beside the shards"
[ -f "$work/slurm/.libshard/manifest.task-00000-of-00003.json" ] || fail "no task manifest in .libshard/"
"$SHARD" verify "$work/slurm" > "$work/verify.log" 2>&1 ||
  { cat "$work/verify.log" >&2; fail "shard verify of the merged folder failed"; }
loader=skipped
if compgen -G "${LIBSHARD_PYTHONPATH:-/nonexistent}/libshard/_libshard*.so" > /dev/null; then
  PYTHONPATH=$LIBSHARD_PYTHONPATH "$LIBSHARD_PYTHON" - "$work/slurm" << 'PY' || fail "the Loader on the merged folder"
import json, sys
import libshard
out = sys.argv[1]
want = int(json.load(open(out + "/manifest.json"))["stats"]["converted"])
loader = libshard.Loader([out], 4, image_size=(16, 16), threads=1, split="*")
assert loader.num_samples == want, (loader.num_samples, want)
seen = sum(len(labels) for _, labels in loader)
assert seen == want, (seen, want)
print("loader: %d samples, as the manifest lists" % seen)
PY
  loader=ok
fi
echo "ok: array job $array (3 tasks) + merge job $merge == single run: $count shard and index files identical, manifests equal apart from run; shard verify ok; Loader $loader"
echo "slurm_convert_test: 1 passed, 0 failed"
