#!/usr/bin/env bash
# The main job on the bundled sample folders: convert them into TFRecord
# shards (indices, manifest.json, rejects.tsv), verify the shards against
# their manifest as CI would, summarize a shard, and read the Fashion-MNIST
# shards back as shuffled, augmented training batches (samples/train_loop).
# `shard convert --report` also writes OUT/fashion/report.html, a page to open
# in a browser (class balance, statistics, thumbnails, rejects).
#   samples/images  Fashion-MNIST PNGs, SPLIT/CLASS/*.png (labels from folders)
#   samples/photos  five photos (flat folder: unlabeled), resized to 224x224
# Usage: samples/demo.sh [BUILD_DIR] [OUT_DIR]   (defaults: build, build/samples-out)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build}
out=${2:-$build/samples-out}
shard=$build/tools/shard
rm -rf "$out"
"$shard" convert "$here/images" -o "$out/fashion" --records-per-shard 32 --seed 1 --report
"$shard" convert "$here/photos" -o "$out/photos" --size 224 --resize-mode center-crop
"$shard" verify "$out/fashion" "$out/photos"
"$shard" inspect -n 1 "$out"/fashion/images-train-00000-of-00003.tfrecord
# Read the shards back for training: shuffled, augmented uint8 batches.
"$build/samples/train_loop" --epochs 4 --split train "$out/fashion/manifest.json"
