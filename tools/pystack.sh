#!/usr/bin/env bash
# The project's pinned Python stacks (python/stacks/STACK.txt, each resolved
# from STACK.in beside it; the first line names the Python: `# python 3.12`).
#   tools/pystack.sh STACK          prints the path of a venv that holds exactly
#                                   STACK.txt, made on first use and reused
#                                   while the lock and the interpreter stay the
#                                   same (pip's own cache keeps the downloads)
#   tools/pystack.sh --lock STACK   resolves STACK.in anew in a scratch venv and
#                                   writes STACK.txt (an upgrade is a commit)
#   tools/pystack.sh --python X.Y   prints the interpreter of Python X.Y that the
#                                   stacks use (pyenv's newest X.Y.*, else
#                                   pythonX.Y on PATH)
#   tools/pystack.sh --check STACK PYTHON
#                                   exit 1 unless PYTHON's packages have the
#                                   versions STACK.txt pins (the Debian stack:
#                                   python/stacks/debian12.txt), printing them
# The venvs live in LIBSHARD_VENV_CACHE (default ~/.cache/libshard/venvs), one
# folder per lock digest; a half-made one (no .complete) is made again.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
stacks=$root/python/stacks
cache=${LIBSHARD_VENV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/libshard/venvs}

# interpreter VERSION: the newest pyenv build of that version, else pythonVERSION on PATH.
interpreter() {
  local v=$1 found
  found=$(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$v".* 2>/dev/null | sort -V | tail -n 1 || true)
  if [ -n "$found" ] && [ -x "$found/bin/python" ]; then
    echo "$found/bin/python"
  elif command -v "python$v" > /dev/null; then
    command -v "python$v"
  else
    echo "pystack: no Python $v (pyenv install $v, or put python$v on PATH)" >&2
    return 1
  fi
}

# python_of FILE: the version its first line names.
python_of() {
  sed -n '1s/^# python \([0-9][0-9.]*\)$/\1/p' "$1"
}

lock_file() {
  local f=$stacks/$1.txt
  [ -f "$f" ] || { echo "pystack: no lock $f" >&2; exit 2; }
  echo "$f"
}

case "${1:-}" in
  --python)
    interpreter "${2:?usage: tools/pystack.sh --python X.Y}"
    ;;
  --lock)
    stack=${2:?usage: tools/pystack.sh --lock STACK}
    in=$stacks/$stack.in
    version=$(python_of "$in")
    [ -n "$version" ] || { echo "pystack: $in: the first line must be '# python X.Y'" >&2; exit 2; }
    py=$(interpreter "$version")
    scratch=$(mktemp -d)
    trap 'rm -rf "$scratch"' EXIT
    "$py" -m venv "$scratch/venv"
    "$scratch/venv/bin/pip" install -q --disable-pip-version-check -r "$in"
    {
      echo "# python $version"
      echo "# $stack: $(basename "$in") resolved by tools/pystack.sh --lock $stack on $(date -u +%Y-%m-%d)"
      "$scratch/venv/bin/pip" freeze --all --exclude pip | LC_ALL=C sort -f
    } > "$stacks/$stack.txt.tmp"
    mv "$stacks/$stack.txt.tmp" "$stacks/$stack.txt"
    echo "pystack: wrote $stacks/$stack.txt"
    ;;
  --check)
    stack=${2:?usage: tools/pystack.sh --check STACK PYTHON}
    py=${3:?usage: tools/pystack.sh --check STACK PYTHON}
    "$py" - "$(lock_file "$stack")" <<'EOF'
import sys
from importlib import metadata
want = [l.split("#")[0].strip().split("==") for l in open(sys.argv[1]) if "==" in l.split("#")[0]]
wrong = 0
for name, version in want:
    try:
        got = metadata.version(name)
    except metadata.PackageNotFoundError:
        got = "missing"
    ok = got == version
    wrong += not ok
    print("pystack: %-12s %-14s%s" % (name, got, "" if ok else "  (the lock says %s)" % version))
print("pystack: Python %d.%d.%d" % sys.version_info[:3])
sys.exit(1 if wrong else 0)
EOF
    ;;
  ""|-*)
    sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
    exit 2
    ;;
  *)
    stack=$1
    lock=$(lock_file "$stack")
    version=$(python_of "$lock")
    py=$(interpreter "$version")
    digest=$( (cat "$lock"; "$py" -c 'import sys; print(sys.version)') | sha256sum | cut -c1-12)
    venv=$cache/$stack-$digest
    if [ ! -f "$venv/.complete" ]; then
      rm -rf "$venv"
      mkdir -p "$cache"
      echo "pystack: making $venv from $(basename "$lock") (downloads are cached by pip)" >&2
      "$py" -m venv "$venv" >&2
      "$venv/bin/pip" install -q --disable-pip-version-check --no-deps -r "$lock" >&2
      "$venv/bin/pip" check >&2
      touch "$venv/.complete"
    fi
    echo "$venv"
    ;;
esac
