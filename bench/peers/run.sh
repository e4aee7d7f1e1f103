#!/usr/bin/env bash
# libshard side by side with its peers, one run on one machine (issue 43).
#   bench/peers/run.sh PHOTOS_DIR [--out DIR] [--smoke] [--peers a,b,...] [--rounds N]
#                      [--cache DIR] [--install-only] [--reinstall PEER] [--wheel FILE] [--env VENV]
# PHOTOS_DIR: an image folder with a folder per class (bench/peers/make_photos.py makes one).
# Steps: (1) a venv per peer under the cache (default ~/.cache/libshard-peers), made once;
# (2) libshard's wheel, built from this checkout's HEAD with tools/build_wheels.sh (or --wheel FILE, a
#     cp312 wheel already built: the table then names its commit from FILE.commit if present), into its venv;
# (3) `shard convert` of the photos (shorter side 256, JPEG q90): the same bytes for everyone;
# (4) each peer's `write` puts those bytes into its own format and checks a sample by SHA-256;
# (5) each peer's `convert` times its own writer on the raw photos;
# (6) reads: eval and train, every peer once per round, rounds interleaved so the machine's
#     load cannot favour one peer; then a cold-cache eval epoch per peer when root;
# (7) table.py writes OUT/peers.md from the JSON records. Exit 1 when a check fails
#     (libshard's own always; any peer's in --smoke).
# --smoke: libshard and tf.data, 320 photos, batch 32, one round, one timed epoch: for CI.
# --env VENV: one venv that already holds libshard and every peer asked for (tools/test_today.sh passes
#     today's stack with the wheel installed): nothing is installed, steps (1) and (2) are skipped.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
all_peers=libshard,torchvision,tfdata,dali,mds,litdata,wds,ffcv,grain

photos="" out=$PWD/peers-out smoke=0 peers="" rounds=2 install_only=0 reinstall="" wheel_opt="" env_opt=""
cache=${LIBSHARD_PEERS_CACHE:-$HOME/.cache/libshard-peers}
while (($#)); do
  case $1 in
    --out) out=$2; shift 2 ;;
    --smoke) smoke=1; shift ;;
    --peers) peers=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --cache) cache=$2; shift 2 ;;
    --install-only) install_only=1; shift ;;
    --reinstall) reinstall=$2; shift 2 ;;
    --wheel) wheel_opt=$(realpath "$2"); shift 2 ;;
    --env) env_opt=$(realpath "$2"); shift 2 ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    -*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
    *) photos=$1; shift ;;
  esac
done
if ((smoke)); then peers=${peers:-libshard,tfdata}; rounds=1; else peers=${peers:-$all_peers}; fi
((install_only)) || [[ ,$peers, == *,libshard,* ]] || peers=libshard,$peers  # every ratio is against libshard's row
if ((!install_only)) && [ ! -d "$photos" ]; then echo "run.sh: PHOTOS_DIR '$photos' is not a folder" >&2; exit 2; fi
mkdir -p "$cache" "$out"/{results,logs,sheets,versions}
out=$(cd "$out" && pwd)
python=$(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.12.* 2>/dev/null | sort -V | tail -n 1)/bin/python
[ -x "$python" ] || python=$(command -v python3.12) || { echo "run.sh: needs Python 3.12" >&2; exit 2; }
log() { echo "[$(date +%H:%M:%S)] $*" >&2; }
venv_of() { if [ -n "$env_opt" ]; then echo "$env_opt"; else echo "$cache/venv-$1"; fi; }  # venv_of PEER

# --- (1) venvs -----------------------------------------------------------------
# What each peer's venv holds. torch comes first from the cache's wheelhouse (one
# download of the several-GB CUDA wheels, plain PyPI) where a peer needs it.
declare -A needs_torch=([libshard]=1 [torchvision]=1 [mds]=1 [litdata]=1 [wds]=1 [ffcv]=1)
declare -A spec=(
  [libshard]="numpy pillow"
  [torchvision]="numpy pillow"
  [tfdata]="tensorflow-cpu numpy pillow"
  [dali]="nvidia-dali-cuda120 numpy pillow"
  [mds]="mosaicml-streaming pillow"          # it pins numpy<2.2 itself
  [litdata]="litdata pillow"
  [wds]="webdataset pillow"
  [ffcv]="ffcv==1.0.2 numba opencv-python-headless pillow"  # builds against libopencv-dev, libturbojpeg0-dev
  [grain]="grain array-record numpy pillow"
)
declare -A package=([libshard]=libshard [torchvision]=torchvision [tfdata]=tensorflow-cpu [dali]=nvidia-dali-cuda120
  [mds]=mosaicml-streaming [litdata]=litdata [wds]=webdataset [ffcv]=ffcv [grain]=grain)
torch_spec="torch torchvision"

wheelhouse() {  # the torch wheels, downloaded once (pip's own cache does not keep them here)
  [ -f "$cache/wheels/.complete" ] && return 0
  log "downloading torch and torchvision into $cache/wheels (once)"
  "$python" -m pip download -q -d "$cache/wheels" $torch_spec > "$cache/wheels.log" 2>&1 &&
    touch "$cache/wheels/.complete"
}

ensure_venv() {  # ensure_venv PEER: 0 when its venv is ready, else its error's first line in $out/logs
  local p=$1 v=$cache/venv-$1 want
  want="$(${needs_torch[$p]:+echo $torch_spec}) ${spec[$p]}"
  [ "$reinstall" = "$p" ] && rm -rf "$v"
  [ -f "$v/.peers-ok" ] && [ "$(cat "$v/.peers-ok")" = "$want" ] && return 0
  if [ -f "$v/.peers-failed" ] && [ "$(head -n 1 "$v/.peers-failed")" = "$want" ]; then
    return 1  # failed before with the same spec: --reinstall PEER tries again
  fi
  log "installing $p: $want"
  rm -rf "$v" && "$python" -m venv "$v" && "$v/bin/pip" install -q --upgrade pip > /dev/null 2>&1
  local ilog=$out/logs/install-$p.log ok=1
  if [ -n "${needs_torch[$p]:-}" ]; then
    wheelhouse && "$v/bin/pip" install --no-index --find-links "$cache/wheels" $torch_spec > "$ilog" 2>&1 || ok=0
  fi
  ((ok)) && { "$v/bin/pip" install ${spec[$p]} >> "$ilog" 2>&1 || ok=0; }
  if ((ok)); then echo "$want" > "$v/.peers-ok"; return 0; fi
  { echo "$want"; grep -m 1 -E "^ERROR|error:|Error" "$ilog" || tail -n 1 "$ilog"; } > "$v/.peers-failed"
  return 1
}

# --- (2) libshard's wheel from HEAD ---------------------------------------------
libshard_commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo "?")
libshard_wheel() {
  local commit dist=$cache/dist src
  commit=$libshard_commit
  if [ -n "$wheel_opt" ]; then
    commit=$(cat "$wheel_opt.commit" 2>/dev/null || basename "$wheel_opt")
    libshard_commit="$commit (given wheel)"
    dist=$(dirname "$wheel_opt")
  elif ! ls "$dist"/libshard-*-cp312-*.whl.$commit > /dev/null 2>&1; then
    # Built from HEAD exported into a scratch folder: a work tree mid-edit and the
    # checkout's own build/ stay untouched.
    src=$cache/src-$commit
    rm -rf "$src" && mkdir -p "$src" && git -C "$root" archive HEAD | tar -x -C "$src"
    log "building libshard's cp312 wheel from $commit (tools/build_wheels.sh; minutes on 2 cores)"
    rm -f "$dist"/libshard-*-cp312-*.whl*
    nice "$src/tools/build_wheels.sh" -o "$dist" 3.12 > "$out/logs/wheel.log" 2>&1 || return 1
    for w in "$dist"/libshard-*-cp312-*.whl; do touch "$w.$commit"; done
    rm -rf "$src"
  fi
  local wheel; wheel=${wheel_opt:-$(ls "$dist"/libshard-*-cp312-*.whl | head -n 1)}
  if [ "$(cat "$cache/venv-libshard/.peers-wheel" 2>/dev/null)" != "$wheel.$commit" ]; then
    "$cache/venv-libshard/bin/pip" install -q --force-reinstall --no-deps "$wheel" > "$out/logs/install-wheel.log" 2>&1 || return 1
    echo "$wheel.$commit" > "$cache/venv-libshard/.peers-wheel"
  fi
}

IFS=, read -r -a peer_list <<< "$peers"
[ -n "$env_opt" ] && libshard_commit="$libshard_commit (--env $(basename "$env_opt"))"
ready=()
for p in "${peer_list[@]}"; do
  [ -n "${spec[$p]:-}" ] || { echo "run.sh: unknown peer $p (known: $all_peers)" >&2; exit 2; }
  if [ -n "$env_opt" ]; then
    [ -x "$env_opt/bin/python" ] || { echo "run.sh: --env $env_opt has no bin/python" >&2; exit 2; }
    ready+=("$p")
    # What the interpreter imports (a venv that sees a stack through a .pth file too), as pip freeze writes it.
    "$env_opt/bin/python" -c 'import importlib.metadata as m
for d in m.distributions(): print("%s==%s" % (d.metadata["Name"], d.version))' > "$out/versions/$p.txt" 2>/dev/null
  elif ensure_venv "$p"; then
    if [ "$p" = libshard ] && ! libshard_wheel; then
      echo '{"peer": "libshard", "command": "install", "error": "libshard wheel: see logs/wheel.log"}' > "$out/results/install-libshard.json"
      echo "run.sh: libshard's wheel failed to build or install: $out/logs/wheel.log" >&2; exit 1
    fi
    ready+=("$p")
    "$cache/venv-$p/bin/pip" freeze > "$out/versions/$p.txt" 2>/dev/null
  else
    err=$(sed -n 2p "$cache/venv-$p/.peers-failed" | cut -c1-240)
    log "$p: install failed: $err"
    "$(venv_of libshard)/bin/python" -c 'import json,sys; json.dump({"peer": sys.argv[1], "command": "install", "error": sys.argv[2]}, open(sys.argv[3], "w"))' \
      "$p" "pip install ${spec[$p]}: $err" "$out/results/install-$p.json" 2> /dev/null
  fi
done
((install_only)) && { log "venvs ready: ${ready[*]}"; exit 0; }

# --- (3) the same bytes: libshard's conversion ----------------------------------
data=$out/data
rm -rf "$data" && mkdir -p "$data"
if ((smoke)); then  # a small corpus: 320 photos taken across the classes
  small=$data/photos-smoke
  mkdir -p "$small"
  "$(venv_of libshard)/bin/python" - "$photos" "$small" <<'EOF'
import os, sys
src, dst = sys.argv[1:]
items = sorted((os.path.join(c, n)) for c in os.listdir(src) if os.path.isdir(os.path.join(src, c))
               for n in os.listdir(os.path.join(src, c)))
step = max(1, len(items) // 320)  # 320 = 10 batches of 32: drop_last drops nothing
for rel in items[::step][:320]:
    os.makedirs(os.path.join(dst, os.path.dirname(rel)), exist_ok=True)
    os.symlink(os.path.join(src, rel), os.path.join(dst, rel))
EOF
  photos=$small
fi
shard=$(venv_of libshard)/bin/shard
log "shard convert $photos (shorter side 256, JPEG q90)"
t0=$(date +%s.%N)
"$shard" convert "$photos" -o "$data/libshard" --size 256 --resize-mode shorter-side --quality 90 -q \
  > "$out/logs/convert-libshard.log" 2>&1
rc=$?
t1=$(date +%s.%N)
"$(venv_of libshard)/bin/python" - "$data/libshard" "$t0" "$t1" "$rc" "$out/results/convert-libshard.json" <<'EOF'
import json, sys
d, t0, t1, rc, path = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
r = {"peer": "libshard", "command": "convert", "writer": "shard convert (C++, threads = cores)"}
try:
    m = json.load(open(f"{d}/manifest.json"))
    n = sum(int(s["records"]) for s in m["splits"])
    r.update(images=n, seconds=round(t1 - t0, 3), img_s=round(n / (t1 - t0), 1))
except Exception as e:
    r["error"] = f"shard convert exit {rc}: {e}"
json.dump(r, open(path, "w"))
EOF
[ $rc -le 3 ] || { echo "run.sh: shard convert failed: $out/logs/convert-libshard.log" >&2; exit 1; }
shards=$data/libshard

# peer P COMMAND [ARGS]: peer_P.py in P's venv, its JSON record into results/.
peer() {
  local p=$1 cmd=$2 name=$3; shift 3
  local py mod=$p
  py=$(venv_of "$p")/bin/python
  [[ $p == libshard-* ]] && { py=$(venv_of libshard)/bin/python; mod=libshard; }
  ( cd "$here" && timeout 1200 "$py" "peer_$mod.py" "$cmd" --shards "$shards" --data "$data/$p" \
      --photos "$photos" --json "$out/results/$name.json" "$@" ) >> "$out/logs/$name.log" 2>&1 ||
    log "$name: failed ($(tail -n 1 "$out/logs/$name.log" | cut -c1-200))"
  [ -f "$out/results/$name.json" ] ||
    echo "{\"peer\": \"$p\", \"command\": \"$cmd\", \"error\": \"no result (timeout or crash): logs/$name.log\"}" > "$out/results/$name.json"
}

# --- (4) each peer's format from the same bytes, (5) each peer's own writer ------
for p in "${ready[@]}"; do
  [ "$p" = libshard ] && continue
  log "$p: write (libshard's bytes) and convert (its own writer on the raw photos)"
  peer "$p" write "write-$p"
  rm -rf "$data/convert-$p"
  ( peer "$p" convert "convert-$p" --data "$data/convert-$p" ) ; rm -rf "$data/convert-$p"
done

# --- (6) reads, interleaved ----------------------------------------------------
readers=(libshard libshard-loader)
for p in "${ready[@]}"; do [ "$p" = libshard ] || readers+=("$p"); done
read_args=()
((smoke)) && read_args=(--batch 32 --epochs 1)
uptime > "$out/load-before.txt"
for ((r = 1; r <= rounds; r++)); do
  # Each round starts with a different peer, so none is always first or last.
  n=${#readers[@]}; shift_by=$(( (r - 1) % n ))
  order=("${readers[@]:shift_by}" "${readers[@]:0:shift_by}")
  for w in eval train; do
    for p in "${order[@]}"; do
      log "round $r $w: $p ($(cut -d' ' -f1-3 /proc/loadavg))"
      extra=(); [ "$p" = libshard-loader ] && extra=(--variant loader --data "$data/libshard")
      peer "$p" read "read-$p-$w-r$r" --workload "$w" --round "$r" --sheet "$out/sheets/$p-$w.png" \
        "${read_args[@]}" "${extra[@]}"
      echo "$p $w $r $(cat /proc/loadavg)" >> "$out/load.txt"
    done
  done
done
if ((!smoke)) && [ "$(id -u)" = 0 ]; then
  for p in "${readers[@]}"; do
    log "cold cache eval: $p"
    extra=(); [ "$p" = libshard-loader ] && extra=(--variant loader --data "$data/libshard")
    peer "$p" read "read-$p-cold" --workload eval --cold --epochs 1 "${extra[@]}"
  done
fi
uptime > "$out/load-after.txt"

# --- (7) the table ---------------------------------------------------------------
smoke_flag=(); ((smoke)) && smoke_flag=(--smoke)
"$(venv_of libshard)/bin/python" "$here/table.py" "$out" --photos "$photos" "${smoke_flag[@]}" \
  --commit "$libshard_commit"
status=$?
log "table: $out/peers.md"
exit $status
