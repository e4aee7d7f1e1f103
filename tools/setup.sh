#!/usr/bin/env bash
# Installs what is missing on a Debian 12 machine (apt-get), then configures
# and builds what the main job needs into BUILD_DIR (default: build): the
# library, `shard` and the samples' programs, Release, without the test suite,
# the benchmarks or the Python module (README command 1; tools/test.sh builds
# the rest). Only the build's packages are installed for it.
# Usage: tools/setup.sh [BUILD_DIR] [extra cmake args...]
#        tools/setup.sh --deps-only  the build's and the test suite's packages
#                                  (GoogleTest, clang, Debian's Python stack:
#                                  python3-numpy, python3-torch, ..., and the
#                                  JVM pyspark runs on: openjdk-17-jre-headless)
#        tools/setup.sh --slurm    only Slurm and munge, for the Slurm tests
#                                  (tests/slurm/; they start their own daemons)
#        tools/setup.sh --browser  only Chromium, for the report browser test
#                                  (tests/report/; headless, no network)
#        tools/setup.sh --wallpapers  Debian's plasma-workspace-wallpapers, the
#                                  real pictures of the leak check's accuracy
#                                  test (tests/convert/leak_accuracy_test.cc)
#        tools/setup.sh --s3       the servers of the object-storage tests
#                                  (tests/store/): nginx-light, python3-boto3,
#                                  and s3rver from npm (tools/s3rver, pinned by
#                                  its package-lock.json); Node.js must be there
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

# What the library and `shard` build with.
build_packages=(
  build-essential cmake ninja-build pkg-config
  libjpeg62-turbo-dev libpng-dev libwebp-dev zlib1g-dev libzstd-dev
  libdeflate-dev libspng-dev libtiff-dev libgif-dev
  libprotobuf-dev protobuf-compiler libtbb-dev libcli11-dev libssl-dev
  libcurl4-openssl-dev libexpat1-dev
)
# What the test suite, the benchmarks, the fuzzers, the Python module and the
# wheels add: Debian's Python stack (python/stacks/debian12.txt) among them.
test_packages=(
  clang libclang-rt-14-dev libturbojpeg0-dev libgtest-dev libgmock-dev ccache
  pybind11-dev python3-dev python3-numpy python3-pil python3-pytest python3-protobuf python3-yaml
  python3-pip python3-venv python3-setuptools python3-wheel
  python3-torch python3-torchvision python3-tqdm
  openjdk-17-jre-headless
)
sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo

# install_missing PACKAGE...: apt-get installs those not installed yet.
install_missing() {
  local p missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  echo "setup: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

# no_service_starts: the packages' scripts would start system daemons (and
# slurmctld fails without /etc/slurm/slurm.conf); the tests run private ones
# instead, so keep the services from starting where no policy-rc.d says
# otherwise.
no_service_starts() {
  policy=/usr/sbin/policy-rc.d
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" > /dev/null
    $sudo chmod 755 "$policy"
    trap '$sudo rm -f "$policy"' EXIT
  fi
}

if [ "${1:-}" = "--slurm" ]; then
  no_service_starts
  install_missing slurm-wlm munge
  exit 0
fi

if [ "${1:-}" = "--browser" ]; then
  install_missing chromium
  exit 0
fi

if [ "${1:-}" = "--wallpapers" ]; then
  install_missing plasma-workspace-wallpapers
  exit 0
fi

if [ "${1:-}" = "--s3" ]; then
  no_service_starts
  install_missing nginx-light python3-boto3 openssl
  command -v npm > /dev/null || { echo "setup: --s3 needs Node.js 20 and npm on PATH" >&2; exit 1; }
  (cd "$root/tools/s3rver" && npm ci --no-audit --no-fund --loglevel=error)
  exit 0
fi

if [ "${1:-}" = "--deps-only" ]; then
  install_missing "${build_packages[@]}" "${test_packages[@]}"
  exit 0
fi
install_missing "${build_packages[@]}"

build=${1:-$root/build}
shift || true
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLIBSHARD_BUILD_TESTS=OFF \
  -DLIBSHARD_BUILD_BENCH=OFF -DLIBSHARD_BUILD_PYTHON=OFF -DLIBSHARD_BUILD_TOOLS=ON "$@"
cmake --build "$build" -j "$(nproc)"
