#!/usr/bin/env bash
# Installs what is missing on a Debian 12 machine (apt-get), then configures
# and builds libshard into BUILD_DIR (default: build).
# Usage: tools/setup.sh [BUILD_DIR] [extra cmake args...]
#        tools/setup.sh --deps-only
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

packages=(
  build-essential cmake ninja-build pkg-config clang libclang-rt-14-dev
  libturbojpeg0-dev libjpeg62-turbo-dev libpng-dev zlib1g-dev libzstd-dev
  libprotobuf-dev protobuf-compiler libtbb-dev libgtest-dev libgmock-dev libcli11-dev
  pybind11-dev python3-dev python3-numpy python3-pil python3-pytest python3-protobuf
  python3-torch python3-torchvision
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  echo "setup: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
[ "${1:-}" = "--deps-only" ] && exit 0

build=${1:-$root/build}
shift || true
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@"
cmake --build "$build" -j "$(nproc)"
