#!/usr/bin/env bash
# The main job on the bundled sample folder: pack samples/images into TFRecord
# shards (with indices), verify them as CI would, and summarize a shard.
# Usage: samples/demo.sh [BUILD_DIR] [OUT_DIR]   (defaults: build, build/samples-out)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build}
out=${2:-$build/samples-out}
shard=$build/tools/shard
rm -rf "$out"
"$build/samples/pack_folder" "$here/images" "$out"
"$shard" verify "$out"
"$shard" inspect -n 1 "$out"/images-train-00000-of-00001.tfrecord
