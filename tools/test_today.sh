#!/usr/bin/env bash
# The Python suite on today's stack (issue 42), as a user installs libshard:
#   1. the cp312 wheel, from the sdist, by tools/build_wheels.sh (pip's build
#      isolation: pybind11 >= 2.12 from PyPI; auditwheel repair);
#   2. that wheel into a plain new venv (no system site packages), with pip as
#      a user runs it (numpy from the index, or pip's cache): timed, then
#      `shard --version` and an import from it;
#   3. python/tests and python/interop_tests (tf.data, DALI, Keras, JAX,
#      torchvision detection) against the wheel installed in a fresh venv that
#      sees the pinned stack python/stacks/today.txt (tools/pystack.sh today;
#      made once, reused while the lock is unchanged).
#   4. python/engine_tests (Spark, Ray, Beam; datasets and Parquet tables) against the wheel, in a venv that
#      sees python/stacks/engines.txt (tools/pystack.sh engines);
#   5. bench/peers/run.sh --smoke (libshard and tf.data, a few batches, every
#      output checked) in a venv that sees that stack, with the wheel.
# Usage: tools/test_today.sh [BUILD_DIR]   (default build; the wheels go to
# BUILD_DIR/wheels; BUILD_DIR/tools/shard and the test servers are used by
# the tests that need the build tree, as on Debian's stack)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
shared=${LIBSHARD_SHARED_DIR:-$root/../shared}

t0=$(date +%s)
"$root/tools/build_wheels.sh" -o "$build/wheels" 3.12
wheel=$(ls "$build"/wheels/libshard-*-cp312-*.whl)
echo "test_today: wheel $(basename "$wheel") built in $(( $(date +%s) - t0 )) s"

t0=$(date +%s)
stack=$("$root/tools/pystack.sh" today)
echo "test_today: stack $stack ready in $(( $(date +%s) - t0 )) s"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
t0=$(date +%s)
"$("$root/tools/pystack.sh" --python 3.12)" -m venv "$work/plain"
"$work/plain/bin/pip" install -q --disable-pip-version-check "$wheel"
installed=$(( $(date +%s) - t0 ))
(cd "$work" && PATH=$work/plain/bin:$PATH shard --version)
(cd "$work" && "$work/plain/bin/python" -c "import libshard, numpy; print('test_today: libshard', libshard.__version__,
'with numpy', numpy.__version__, 'from', libshard.__file__)")
echo "test_today: the wheel installed into a plain venv in $installed s"

t0=$(date +%s)
rc=0
LIBSHARD_BUILD_DIR=$build LIBSHARD_SHARED_DIR=$shared "$stack/bin/python" "$root/python/tests/run_installed.py" \
  --source "$root" --build "$build" --work "$build/python/today_test" --wheel "$wheel" --stack "$stack" \
  --also interop_tests || rc=$?
echo "test_today: the Python suite on today's stack took $(( $(date +%s) - t0 )) s (exit $rc)"

# The engine tests (issue 48: Spark, Ray and Beam run conversions from samples; Hugging Face datasets and
# Parquet tables), against the same wheel, in a venv that sees python/stacks/engines.txt (apart from today's:
# Beam and TensorFlow pin protobuf apart).
t0=$(date +%s)
engines_rc=0
engines=$("$root/tools/pystack.sh" engines)
LIBSHARD_BUILD_DIR=$build LIBSHARD_SHARED_DIR=$shared "$engines/bin/python" "$root/python/tests/run_installed.py" \
  --source "$root" --build "$build" --work "$build/python/engines_test" --wheel "$wheel" --stack "$engines" \
  --only engine_tests || engines_rc=$?
echo "test_today: the engine tests (Spark, Ray, Beam) took $(( $(date +%s) - t0 )) s (exit $engines_rc)"
((rc)) || rc=$engines_rc

# The peers benchmark's smoke mode (bench/peers/run.sh --smoke: libshard and tf.data, a few batches, every
# output checked), so that the script cannot rot: in a venv that sees today's stack (torch, tensorflow-cpu)
# with the wheel installed, on 320 photos cut from Debian's wallpapers (tools/setup.sh --wallpapers).
t0=$(date +%s)
peers_rc=0
"$stack/bin/python" -m venv "$work/peers-env"
site=$("$work/peers-env/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
"$stack/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])" > "$site/_libshard_stack.pth"
"$work/peers-env/bin/pip" install -q --no-deps --disable-pip-version-check "$wheel"
"$work/peers-env/bin/python" "$root/bench/peers/make_photos.py" "$work/photos" --count 320 --classes 4
"$root/bench/peers/run.sh" "$work/photos" --smoke --env "$work/peers-env" --out "$work/peers-out" || peers_rc=$?
echo "test_today: the peers benchmark's smoke mode took $(( $(date +%s) - t0 )) s (exit $peers_rc)"
((rc)) || rc=$peers_rc
exit $rc
