#!/usr/bin/env bash
# Builds and runs the whole libshard test suite (GoogleTest via ctest), on
# both Python stacks.
#   tools/test.sh           release build in build/, all tests: ctest (the
#                           Python suite on Debian's stack among them), then
#                           tools/test_today.sh (the suite and the real readers
#                           of the shards on today's stack, from a wheel)
#   tools/test.sh --asan    the same tests built with ASan+UBSan in build-asan/
#   tools/test.sh --fuzz    builds the libFuzzer targets with clang in
#                           build-fuzz/ and runs each for FUZZ_SECONDS (default 30)
# The first two install what the tests need first (tools/setup.sh --deps-only,
# --slurm, --browser, --s3, --wallpapers: the build's packages, Slurm and
# munge, Chromium, the object-storage servers, the leak check's picture
# corpus) and set LOCAL_SLURM_REQUIRED, LOCAL_BROWSER_REQUIRED,
# LOCAL_S3_REQUIRED and LOCAL_WALLPAPERS_REQUIRED, so that a cluster, browser,
# server or corpus that is missing or fails to start fails its tests instead
# of skipping them: every test runs.
# Tests that need ../shared read it from LIBSHARD_SHARED_DIR (default: the
# folder beside the project root) and skip with a message when it is absent.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
mode=${1:-release}
jobs=$(nproc)
shared=${LIBSHARD_SHARED_DIR:-$root/../shared}
# Debian's numpy, torch and pytest belong to /usr/bin/python3, which may not be
# the python3 first on PATH: name it to CMake (PYTHON=... to choose another).
python=${PYTHON:-/usr/bin/python3}
pyarg=()
[ -x "$python" ] && pyarg=(-DPython3_EXECUTABLE="$python")
# ccache (tools/setup.sh --deps-only installs it): a rerun, or CI in another
# clone of the project, compiles only what changed. Paths below the project
# are hashed relative to it, so one clone's objects serve another's.
launcher=()
if command -v ccache > /dev/null; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR=$root CCACHE_NOHASHDIR=true
fi

# install_test_needs: what every test needs, installed where missing; their
# skips made failures.
install_test_needs() {
  "$root/tools/setup.sh" --deps-only
  "$root/tools/setup.sh" --slurm
  "$root/tools/setup.sh" --browser
  "$root/tools/setup.sh" --s3
  "$root/tools/setup.sh" --wallpapers
  export LOCAL_SLURM_REQUIRED=1 LOCAL_BROWSER_REQUIRED=1 LOCAL_S3_REQUIRED=1 LOCAL_WALLPAPERS_REQUIRED=1
}

# timed NAME COMMAND...: runs it and prints how long it took.
timed() {
  local name=$1 t0
  shift
  t0=$(date +%s)
  "$@"
  echo "test.sh: $name took $(( $(date +%s) - t0 )) s"
}

case "$mode" in
  release|"")
    timed "installing what the tests need" install_test_needs
    # Debian's stack is pinned too: python/stacks/debian12.txt (a drift fails here).
    if [ "$python" = /usr/bin/python3 ]; then
      "$root/tools/pystack.sh" --check debian12 "$python"
    fi
    build=$root/build
    # Every part named: tools/setup.sh (README command 1) configures build/ with tests off.
    cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLIBSHARD_WERROR=ON -DLIBSHARD_SHARED_DIR="$shared" \
      -DLIBSHARD_BUILD_TESTS=ON -DLIBSHARD_BUILD_TOOLS=ON -DLIBSHARD_BUILD_BENCH=ON -DLIBSHARD_BUILD_PYTHON=ON "${pyarg[@]}" \
      "${launcher[@]}"
    timed "the build" cmake --build "$build" -j "$jobs"
    timed "ctest" ctest --test-dir "$build" --output-on-failure -j "$jobs"
    timed "today's stack" "$root/tools/test_today.sh" "$build"
    ;;
  --asan)
    install_test_needs
    build=$root/build-asan
    cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DLIBSHARD_SANITIZE=ON -DLIBSHARD_WERROR=ON \
      -DLIBSHARD_BUILD_BENCH=OFF -DLIBSHARD_SHARED_DIR="$shared" "${pyarg[@]}" "${launcher[@]}"
    timed "the ASan+UBSan build" cmake --build "$build" -j "$jobs"
    # Left to the release run: accuracy tests over whole picture corpora and
    # brute-force equivalences at size, 15-30x slower unoptimised under ASan
    # (2,990 of the 4,110 s of test time, 2026-12-03). Each one's code runs
    # here through a smaller test of the same suite: FindsWhatComparingEveryPairFinds
    # (find_duplicates, and the index's), GoldenBitsOfManySizesAndLayouts (the hash),
    # the leak unit tests.
    heavy='WallpaperLeakAccuracyTest\.|LeakAccuracyTest\.CopiesAreFoundAndDistinctPicturesAreNot$'
    heavy+='|FindDuplicatesTest\.PlainPicturesArePairedByColourAsComparingEveryPairDoes$'
    heavy+='|FindDuplicatesTest\.EveryBandCountFindsWhatComparingEveryPairFinds$'
    heavy+='|DuplicateIndexTest\.EveryBandCountFindsWhatComparingEveryPairFinds$'
    heavy+='|PerceptualHashTest\.(GoldenBitsOfWallpaperCrops|CopiesAreCloseDistinctPicturesFar)$'
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      timed "ctest under ASan+UBSan" ctest --test-dir "$build" --output-on-failure -j "$jobs" -LE no_sanitizer \
      -E "$heavy"
    ;;
  --fuzz)
    "$root/tools/setup.sh" --deps-only
    build=$root/build-fuzz
    CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DLIBSHARD_BUILD_FUZZERS=ON -DLIBSHARD_BUILD_TESTS=OFF -DLIBSHARD_BUILD_TOOLS=OFF "${launcher[@]}"
    targets=(fuzz_record_reader fuzz_example_view fuzz_verify fuzz_image_record fuzz_raw_array fuzz_png_decode
             fuzz_image_decode fuzz_s3_xml fuzz_location fuzz_aws_profile fuzz_coco fuzz_yolo fuzz_voc)
    timed "the fuzzers' build" cmake --build "$build" -j "$jobs" --target "${targets[@]}"
    seconds=${FUZZ_SECONDS:-30}
    passed=0 failed=0
    for target in "${targets[@]}"; do
      corpus=$build/corpus/$target
      mkdir -p "$corpus"
      seeds=()
      [ -d "$shared/interop/tfrecord" ] && seeds+=("$shared/interop/tfrecord")
      [ "$target" = fuzz_png_decode ] && [ -d "$shared/interop/pngsuite" ] && seeds=("$shared/interop/pngsuite")
      # Hostile inputs found before (VOC depth and DTD bombs, GIF frames past the screen).
      [ -d "$root/tests/fuzz/seeds/$target" ] && seeds+=("$root/tests/fuzz/seeds/$target")
      echo "fuzz: $target for ${seconds}s"
      if "$build/tests/fuzz/$target" -max_total_time="$seconds" -max_len=65536 -rss_limit_mb=2048 \
          -print_final_stats=1 "$corpus" "${seeds[@]}" > "$build/$target.log" 2>&1; then
        passed=$((passed + 1))
        tail -n 6 "$build/$target.log"
      else
        failed=$((failed + 1))
        tail -n 60 "$build/$target.log"
      fi
    done
    echo "fuzz: $passed passed, $failed failed"
    [ "$failed" -eq 0 ]
    ;;
  *)
    echo "usage: tools/test.sh [--asan|--fuzz]" >&2
    exit 2
    ;;
esac
