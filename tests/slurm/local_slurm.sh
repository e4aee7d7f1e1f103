#!/usr/bin/env bash
# Starts a real single-node Slurm cluster on localhost, runs a command against
# it, and tears the cluster down again, whatever happens.
#
# Usage: tests/slurm/local_slurm.sh COMMAND [ARGS...]
#
# Everything lives in a private temporary folder: a fresh munge key, munged on
# its own socket, a minimal slurm.conf (this machine's CPUs and memory as
# `slurmd -C` reports them, one partition, free TCP ports picked at start,
# linuxproc process tracking, no cgroups, no accounting database), slurmctld
# and slurmd in the foreground as root. Nothing under /etc is read or changed
# and a system munged or Slurm, if any, is left alone. COMMAND runs once the
# node is idle, with these variables exported:
#   SLURM_CONF        the private slurm.conf (sbatch, squeue, scontrol use it)
#   LOCAL_SLURM_DIR   the private folder (logs: slurmctld.log, slurmd.log,
#                     munged.log; finished jobs: jobcomp.txt)
#   LOCAL_SLURM_NODE  the node's name
# The script exits with COMMAND's status.
#
# When the machine cannot run Slurm (not root, a program missing, a daemon that
# does not come up within LOCAL_SLURM_START_TIMEOUT seconds, default 60) it
# says why and exits 77, which ctest counts as skipped; with
# LOCAL_SLURM_REQUIRED=1 (CI, which installs Slurm) it exits 1 instead.
#
# Clean-up: where the kernel allows it (root, util-linux unshare) the cluster
# runs in its own PID namespace, so every daemon, job step and job process
# dies with it even if this script is killed with SIGKILL. Elsewhere an EXIT
# trap cancels the jobs and stops the daemons it started, by process id.
# LOCAL_SLURM_KEEP=1 keeps the folder for a post-mortem.
set -euo pipefail

skip() {
  if [ "${LOCAL_SLURM_REQUIRED:-0}" = 1 ]; then
    echo "local_slurm: FAILED (LOCAL_SLURM_REQUIRED=1): $*" >&2
    exit 1
  fi
  echo "local_slurm: SKIPPED: $*" >&2
  exit 77
}

[ $# -ge 1 ] || { echo "usage: $0 COMMAND [ARGS...]" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || skip "needs root (Slurm runs here as SlurmUser=root)"
for tool in munged slurmctld slurmd sbatch squeue sinfo scontrol scancel python3 timeout; do
  command -v "$tool" > /dev/null || skip "'$tool' not found; install with: tools/setup.sh --slurm"
done

# Into a private PID namespace first, when the kernel lets us (and we are not
# in it already). --kill-child makes the namespace die with this process.
if [ -z "${LOCAL_SLURM_NS:-}" ] && command -v unshare > /dev/null &&
   unshare --pid --fork --mount-proc true 2> /dev/null; then
  export LOCAL_SLURM_NS=1
  exec unshare --pid --fork --mount-proc --kill-child bash "${BASH_SOURCE[0]}" "$@"
fi
[ -n "${LOCAL_SLURM_NS:-}" ] ||
  echo "local_slurm: no PID namespace here; cleaning up by process id" >&2

start_timeout=${LOCAL_SLURM_START_TIMEOUT:-60}
dir=$(mktemp -d "${TMPDIR:-/tmp}/local-slurm.XXXXXX")
# munged insists that every folder above its socket is searchable by all.
chmod 755 "$dir"
mkdir -m 700 "$dir/state" "$dir/spool" "$dir/munge-key"
pids=()  # daemons we started, newest last

log_tails() {
  local f
  for f in "$dir"/munged.log "$dir"/slurmctld.log "$dir"/slurmd.log; do
    [ -s "$f" ] || continue
    echo "---- last lines of $(basename "$f") ----" >&2
    tail -n 25 "$f" >&2
  done
}

teardown() {
  local status=$? pid i
  trap - EXIT INT TERM
  if [ -n "${SLURM_CONF:-}" ] && [ -f "$SLURM_CONF" ] && ((${#pids[@]} >= 2)); then
    timeout 15 scancel --quiet --user=root 2> /dev/null || true
    for ((i = 0; i < 20; i++)); do
      [ -z "$(timeout 10 squeue -h -o %i 2> /dev/null)" ] && break
      sleep 0.5
    done
  fi
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
    kill -TERM "${pids[i]}" 2> /dev/null || true
  done
  for pid in "${pids[@]}"; do
    for ((i = 0; i < 50; i++)); do
      kill -0 "$pid" 2> /dev/null || break
      sleep 0.2
    done
    kill -KILL "$pid" 2> /dev/null || true
    wait "$pid" 2> /dev/null || true
  done
  if [ "$status" -ne 0 ] && [ "$status" -ne 77 ]; then log_tails; fi
  if [ "${LOCAL_SLURM_KEEP:-0}" = 1 ]; then
    echo "local_slurm: kept $dir" >&2
  else
    rm -rf "$dir"
  fi
  exit "$status"
}
trap teardown EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# A few seconds' wait for CONDITION (a command), polling.
wait_for() {
  local seconds=$1 i
  shift
  for ((i = 0; i < seconds * 4; i++)); do
    "$@" && return 0
    sleep 0.25
  done
  return 1
}

# munge: a fresh key and a private socket.
if command -v mungekey > /dev/null; then
  mungekey --create --keyfile="$dir/munge-key/munge.key"
else
  dd if=/dev/urandom of="$dir/munge-key/munge.key" bs=1024 count=1 status=none
fi
chmod 400 "$dir/munge-key/munge.key"
munged --foreground --key-file="$dir/munge-key/munge.key" --socket="$dir/munge.socket" \
  --pid-file="$dir/munged.pid" --seed-file="$dir/munged.seed" --num-threads=2 \
  > "$dir/munged.log" 2>&1 &
pids+=($!)
wait_for "$start_timeout" test -S "$dir/munge.socket" ||
  { log_tails; skip "munged did not create its socket within ${start_timeout}s"; }

# Two free TCP ports on localhost, for slurmctld and slurmd.
read -r ctld_port slurmd_port < <(python3 -c '
import socket
socks = [socket.socket() for _ in range(2)]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(*(s.getsockname()[1] for s in socks))')

node_line=$(timeout 30 slurmd -C | head -n 1)
case "$node_line" in
  NodeName=*) ;;
  *) skip "'slurmd -C' did not describe this machine: $node_line" ;;
esac
node=${node_line%% *}
node=${node#NodeName=}

export SLURM_CONF=$dir/slurm.conf
: > "$dir/plugstack.conf"
cat > "$SLURM_CONF" << EOF
# Written by tests/slurm/local_slurm.sh for one test run.
ClusterName=libshard-test
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge.socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
PlugStackConfig=$dir/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$dir/jobcomp.txt
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=2,bf_interval=2
MpiDefault=none
ReturnToService=2
# Finished jobs stay visible to scontrol for this long (there is no slurmdbd).
MinJobAge=3600
$node_line NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=local Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF

slurmctld -D -f "$SLURM_CONF" > "$dir/slurmctld.stderr" 2>&1 &
pids+=($!)
wait_for "$start_timeout" bash -c 'timeout 10 scontrol ping 2> /dev/null | grep -q "is UP"' ||
  { log_tails; skip "slurmctld did not answer within ${start_timeout}s"; }

slurmd -D -f "$SLURM_CONF" -N "$node" > "$dir/slurmd.stderr" 2>&1 &
pids+=($!)
node_idle() {
  case "$(timeout 10 sinfo -h -N -n "$node" -o %T 2> /dev/null)" in
    idle*) return 0 ;;
  esac
  return 1
}
wait_for "$start_timeout" node_idle ||
  { log_tails; skip "node $node did not become idle within ${start_timeout}s ($(sinfo -h -N -o '%T %E' 2>&1))"; }

echo "local_slurm: node $node idle (slurmctld port $ctld_port, slurmd port $slurmd_port, $dir)" >&2
export LOCAL_SLURM_DIR=$dir LOCAL_SLURM_NODE=$node
status=0
"$@" || status=$?
exit "$status"
