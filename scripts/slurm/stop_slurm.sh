#!/usr/bin/env bash
# Stop the cluster started by start_slurm.sh: cancel its jobs, then stop its daemons by the
# pids in their pid files (never by name).
#   stop_slurm.sh           keep state under $SLURM_LOCAL_ROOT (the next start recovers it)
#   stop_slurm.sh --purge   and delete $SLURM_LOCAL_ROOT
set -uo pipefail
ROOT=${SLURM_LOCAL_ROOT:-/tmp/compoworld-slurm}
export SLURM_CONF=$ROOT/etc/slurm.conf
log() { echo "[stop_slurm] $*"; }

running() {  # running PID: exists and is not a zombie
  local st
  st=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
  [[ -n $st && $st != Z ]]
}
live_pid() {  # live_pid PIDFILE COMM: print the pid when it names a live process with that name
  local pf=$1 comm=$2 pid
  [[ -s $pf ]] || return 1
  pid=$(<"$pf")
  [[ -r /proc/$pid/comm && $(</proc/$pid/comm) == "$comm"* ]] && running "$pid" && echo "$pid"
}

# Cancel jobs first so no slurmstepd outlives slurmd.
if live_pid "$ROOT/run/slurmctld.pid" slurmctld >/dev/null && [[ -f $SLURM_CONF ]]; then
  jobs=$(squeue -h -o %A 2>/dev/null | tr '\n' ' ')
  if [[ -n ${jobs// /} ]]; then
    log "cancelling jobs: $jobs"
    # shellcheck disable=SC2086
    scancel $jobs 2>/dev/null
    for _ in $(seq 1 100); do [[ -z $(squeue -h -o %A 2>/dev/null) ]] && break; sleep 0.1; done
  fi
fi

for spec in run/slurmd.pid:slurmd run/slurmctld.pid:slurmctld run/munged.pid:munged; do
  pf=$ROOT/${spec%%:*} comm=${spec##*:}
  if pid=$(live_pid "$pf" "$comm"); then
    kill -TERM "$pid"
    for _ in $(seq 1 200); do running "$pid" || break; sleep 0.05; done
    running "$pid" && { log "$comm ($pid) ignored TERM; sending KILL"; kill -KILL "$pid"; }
    log "stopped $comm (pid $pid)"
  fi
  rm -f "$pf"
done

if [[ ${1:-} == --purge ]]; then rm -rf "$ROOT" && log "purged $ROOT"; fi
exit 0
