"""Runs of this instance whose process is gone: marked failed, their pool slots freed.

A run executed in process (``compoworld run`` / ``compoworld materialize``) that is killed with
SIGKILL stays ``STARTED`` for ever and keeps the ``duckdb`` pool slot its step had claimed; with the
pool limited to 1 (dagster.yaml) every later run then waits on it. Dagster's own run monitoring
cannot tell that such a process died (the default run launcher has no worker health check) and
frees the slots of *finished* runs only. So the CLI, on start, and ``dead_run_reaper``, every
minute under the daemon, find in-progress runs (and finished runs still holding slots) whose
process is gone, report them failed (``instance.report_run_failed``) and free their slots
(``free_concurrency_slots_for_run``).

Which process ran a run: the CLI tags each run with its host, pid and process start time
(:func:`launcher_tags`); the start time tells a reused pid apart. A run without those tags (launched
from the UI or by a sensor), or with tags copied from the run it re-executes, is judged by the pid Dagster logged for it ("Executing steps in process
(pid …)", "Started process for run (pid …)"), only when the instance keeps its runs in local SQLite
files (the default ``$DAGSTER_HOME``), where that pid is one of this machine's.
"""

from __future__ import annotations

import socket
from dataclasses import dataclass

import dagster as dg
import psutil
from dagster._core.events import DagsterEventType, JobFailureData, RunFailureReason
from dagster._core.storage.dagster_run import IN_PROGRESS_RUN_STATUSES
from dagster._core.storage.runs import InMemoryRunStorage, SqliteRunStorage

HOST_TAG = "compoworld/host"
PID_TAG = "compoworld/pid"
PROCESS_STARTED_TAG = "compoworld/process_started"
# Process start times are read from /proc in clock ticks; two readings of one process agree within this.
START_TIME_TOLERANCE_S = 1.0
# The first engine events of a run carry the pid of the process executing it.
FIRST_ENGINE_EVENTS = 5


def launcher_tags() -> dict[str, str]:
    """Run tags naming this process: host, pid and start time (epoch seconds)."""
    me = psutil.Process()
    return {HOST_TAG: socket.gethostname(), PID_TAG: str(me.pid), PROCESS_STARTED_TAG: f"{me.create_time():.3f}"}


@dataclass(frozen=True)
class Launcher:
    """The process that executes a run: ``started`` is its start time, or (``exact=False``) a time it had started by."""

    pid: int
    started: float
    exact: bool

    def is_gone(self) -> bool:
        try:
            process = psutil.Process(self.pid)
            if process.status() == psutil.STATUS_ZOMBIE:
                return True
            created = process.create_time()
        except psutil.NoSuchProcess:
            return True
        if self.exact:
            return abs(created - self.started) > START_TIME_TOLERANCE_S
        return created > self.started + START_TIME_TOLERANCE_S  # the pid now belongs to a newer process


@dataclass(frozen=True)
class ReapedRun:
    run_id: str
    pid: int
    marked_failed: bool


def launcher_of(instance: dg.DagsterInstance, run: dg.DagsterRun) -> Launcher | None:
    """The process executing ``run`` when it is one of this machine's; None when that cannot be known."""
    tags = run.tags
    if PID_TAG in tags and not _inherited_launcher_tags(instance, run):
        if tags.get(HOST_TAG) != socket.gethostname():
            return None
        return Launcher(int(tags[PID_TAG]), float(tags[PROCESS_STARTED_TAG]), exact=True)
    if not isinstance(instance.run_storage, SqliteRunStorage | InMemoryRunStorage):
        return None
    records = instance.get_records_for_run(run.run_id, of_type=DagsterEventType.ENGINE_EVENT,
                                           limit=FIRST_ENGINE_EVENTS).records
    for record in records:
        data = record.event_log_entry.dagster_event.engine_event_data
        pid = data.metadata.get("pid") if data else None
        if pid is not None:
            return Launcher(int(pid.value), record.event_log_entry.timestamp, exact=False)
    return None


def _inherited_launcher_tags(instance: dg.DagsterInstance, run: dg.DagsterRun) -> bool:
    """Whether ``run`` carries its parent's launcher tags: a re-execution (from the UI) copies the
    tags of the CLI run it re-executes, and those name the CLI's process, not the one running it."""
    if run.parent_run_id is None:
        return False
    parent = instance.get_run_by_id(run.parent_run_id)
    launcher = (HOST_TAG, PID_TAG, PROCESS_STARTED_TAG)
    return parent is not None and all(parent.tags.get(t) == run.tags.get(t) for t in launcher)


def reap_dead_runs(instance: dg.DagsterInstance) -> list[ReapedRun]:
    """Mark every in-progress run whose process is gone failed and free the pool slots such runs hold."""
    in_progress = instance.get_runs(filters=dg.RunsFilter(statuses=IN_PROGRESS_RUN_STATUSES))
    storage = instance.event_log_storage
    holders = storage.get_concurrency_run_ids() if storage.supports_global_concurrency_limits else set()
    known = {run.run_id for run in in_progress}
    finished_holders = instance.get_runs(filters=dg.RunsFilter(run_ids=sorted(holders - known))) if holders - known else []
    reaped = []
    for run in [*in_progress, *finished_holders]:
        launcher = launcher_of(instance, run)
        if launcher is None or not launcher.is_gone():
            continue
        marked = not run.is_finished
        if marked:
            instance.report_run_failed(
                run, f"The process that executed this run (pid {launcher.pid}) is gone; marked failed and its "
                     "pool slots freed by compoworld.",
                JobFailureData(error=None, failure_reason=RunFailureReason.UNEXPECTED_TERMINATION))
        if storage.supports_global_concurrency_limits:
            storage.free_concurrency_slots_for_run(run.run_id)
        reaped.append(ReapedRun(run.run_id, launcher.pid, marked))
    return reaped


@dg.sensor(default_status=dg.DefaultSensorStatus.RUNNING, minimum_interval_seconds=60)
def dead_run_reaper(context: dg.SensorEvaluationContext) -> dg.SkipReason:
    """Fail runs whose process is gone and free their pool slots (never requests a run)."""
    reaped = reap_dead_runs(context.instance)
    for run in reaped:
        context.log.warning(f"run {run.run_id}: process {run.pid} is gone; "
                            f"{'marked failed, ' if run.marked_failed else ''}pool slots freed")
    return dg.SkipReason(f"{len(reaped)} run(s) of a gone process reaped" if reaped else "every run's process is alive")
