# shellcheck shell=bash
# Helpers for the Slurm tests; sourced by scripts that run under local_slurm.sh.

# fail MESSAGE: prints it and the private cluster's job records, exits 1.
fail() {
  echo "FAIL: $*" >&2
  if [ -n "${LOCAL_SLURM_DIR:-}" ] && [ -s "$LOCAL_SLURM_DIR/jobcomp.txt" ]; then
    echo "---- jobcomp.txt ----" >&2
    cat "$LOCAL_SLURM_DIR/jobcomp.txt" >&2
  fi
  exit 1
}

# slurm_wait_jobs SECONDS JOBID...: waits until none of the jobs (array jobs
# with all their tasks) is pending, running or completing; fails after SECONDS.
slurm_wait_jobs() {
  local seconds=$1 deadline active
  shift
  deadline=$((SECONDS + seconds))
  while :; do
    active=$(timeout 20 squeue -h -o '%i %T' 2> /dev/null | grep -E "^($(IFS='|'; echo "$*"))(_|\[| )" || true)
    [ -z "$active" ] && return 0
    ((SECONDS < deadline)) || fail "jobs still active after ${seconds}s:"$'\n'"$active"
    sleep 1
  done
}

# slurm_job_field JOBID FIELD: FIELD=value of each job (each array task) of
# JOBID, one a line, from `scontrol show job` (kept for MinJobAge after the end).
slurm_job_field() {
  timeout 20 scontrol show job -o "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"
}

# slurm_expect_state STATE JOBID...: every job and array task ended in STATE,
# and, for COMPLETED, with exit code 0:0.
slurm_expect_state() {
  local want=$1 job states codes
  shift
  for job in "$@"; do
    states=$(slurm_job_field "$job" JobState | sort -u | tr '\n' ' ')
    [ "$states" = "$want " ] || fail "job $job ended as '$states', expected $want"
    if [ "$want" = COMPLETED ]; then
      codes=$(slurm_job_field "$job" ExitCode | sort -u | tr '\n' ' ')
      [ "$codes" = "0:0 " ] || fail "job $job exit codes '$codes', expected 0:0"
    fi
  done
}
