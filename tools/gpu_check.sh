#!/bin/bash
# Issue 29's checks on a CUDA machine, from the project root: the pinned-memory and device-path scenarios
# (python/tests/gpu_scenarios.py, one process each), the GPU-less tests that also run in CI, the numpy-2 import
# check, ../shared/gpu's pinned scenarios and numpy check, and a short python -m libshard.bench.
#
#   bash tools/gpu_check.sh [SHARDS_DIR [FOLDER]]
#     SHARDS_DIR: converted shards for python -m libshard.bench (default: the small PNG shards, resnet18 only);
#     FOLDER: the same images as class folders, for the bench's torchvision row (--compare-folder)
#
# The package comes from .gpu/py (what ../shared/gpu/prepare.sh packs: a cp312 build with pybind11 2.13, its
# shared libraries in .gpu/lib), else from PYTHONPATH / the installed one. pytest is used where installed; the
# scenarios run without it. Output goes to $OUT (or /tmp/gpu-check) too; exit status: 0 when every check passed.
# About two minutes on one H100.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd); cd "$ROOT" || exit 2
O=${OUT:-/tmp/gpu-check}; mkdir -p "$O"
if [ -d .gpu/py ]; then
  export LD_LIBRARY_PATH=$ROOT/.gpu/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} PYTHONPATH=$ROOT/.gpu/py
fi
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
W=$(mktemp -d /tmp/gpu-check-work.XXXXXX); trap 'rm -rf "$W"' EXIT
exec > >(tee "$O/gpu_check.log") 2>&1
failed=()
run() {  # NAME COMMAND...: runs it under a time limit, records a failure
  echo "== $1"; local name=$1; shift
  timeout 300 "$@" || failed+=("$name")
}

python3 - <<'EOF' || exit 2
import sys, numpy, torch, libshard
print("python", sys.version.split()[0], "torch", torch.__version__, "numpy", numpy.__version__, "libshard",
      libshard.__version__, "pybind11", libshard._libshard._pybind11_version, "from", libshard.__file__)
print("cuda:", torch.cuda.is_available() and torch.cuda.get_device_name(0))
EOF
PYTHONPATH=${PYTHONPATH:-}${PYTHONPATH:+:}$ROOT/python/tests python3 -c "
from shard_fixtures import write_shard
write_shard('$W/d-0.tfrecord', 14, 0); write_shard('$W/d-1.tfrecord', 11, 14)" || exit 2
SHARDS="$W/d-*.tfrecord"

if python3 -c "import pytest" 2>/dev/null; then  # the GPU tests run the scenarios; the others run as in CI
  run "pytest" python3 -m pytest -q -rs -p no:cacheprovider python/tests/test_gpu_pinned.py \
    python/tests/test_gpu_device.py python/tests/test_pinned.py python/tests/test_device.py \
    python/tests/test_numpy_abi.py python/tests/test_handoff.py python/tests/test_torch.py
else
  echo "== pytest not installed: the scenarios alone (the CI tests need pytest)"
  for s in w0-w4 persistent-validation killed-worker registered-elsewhere device-w0 device-w2; do
    run "scenario $s" env CUDA_LAUNCH_BLOCKING=1 python3 python/tests/gpu_scenarios.py "$SHARDS" "$s"
  done
fi
S=../shared/gpu; [ -d "$S" ] || S=.gpu
if [ -f "$S/repro_pinned.py" ]; then
  R=${1:-$W}  # its scenarios take batches of 64: real shards (SHARDS_DIR) exercise them, the small ones barely
  for s in register w0 w4 w4p buffers; do
    echo "== shared repro_pinned.py $s"
    out=$(CUDA_LAUNCH_BLOCKING=1 timeout 120 python3 "$S/repro_pinned.py" "$R" "$s" 2>&1); echo "$out" | tail -14
    # 'register' calls cudaHostRegister twice on one range itself, outside libshard: it shows the driver's
    # answer (and torch's pending error), not libshard's; the others go through libshard.
    if [ "$s" != register ] && echo "$out" | grep -qE "BROKEN|Traceback"; then failed+=("repro_pinned $s"); fi
  done
  run "shared np2_check.py" python3 "$S/np2_check.py" "$R"
fi
if [ $# -ge 1 ]; then
  for m in resnet50 resnet18; do
    run "python -m libshard.bench $m" python3 -m libshard.bench "$1" --model "$m" --batch-size 256 --seconds 3 \
      --warmup 8 --threads 1,4,"$(nproc)" ${2:+--compare-folder "$2"} --json "$O/bench-$m.json"
  done
else
  run "python -m libshard.bench" python3 -m libshard.bench "$W" --model resnet18 --batch-size 128 --seconds 2 \
    --warmup 3 --threads 1,"$(nproc)" --json "$O/bench.json"
fi

if [ ${#failed[@]} -eq 0 ]; then echo "gpu_check: all passed"; exit 0; fi
printf 'gpu_check: FAILED: %s\n' "${failed[@]}"; exit 1
