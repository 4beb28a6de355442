"""Runs whose process was SIGKILLed are marked failed and their ``duckdb`` pool slot freed; live runs are left alone.

A child process executes a one-op job in pool ``duckdb`` that holds the slot until killed, on an
instance with the project's dagster.yaml (pool limit 1).
"""

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import dagster as dg
import psutil
import pytest
from dagster._core.test_utils import create_run_for_test

from sensors.stale_runs import (
    HOST_TAG,
    PID_TAG,
    PROCESS_STARTED_TAG,
    dead_run_reaper,
    launcher_tags,
    reap_dead_runs,
)

REPO = Path(__file__).resolve().parents[2]
HOLDER = textwrap.dedent("""
    import sys, time
    import dagster as dg
    from sensors.stale_runs import launcher_tags

    @dg.op(pool="duckdb")
    def hold():
        time.sleep(600)

    @dg.job
    def holding_job():
        hold()

    instance = dg.DagsterInstance.from_config(sys.argv[1])
    holding_job.execute_in_process(instance=instance, tags=launcher_tags() if sys.argv[2] == "tagged" else {})
""")


@pytest.fixture
def home(tmp_path) -> Path:
    folder = tmp_path / "dagster_home"
    folder.mkdir()
    shutil.copy(REPO / "dagster.yaml", folder / "dagster.yaml")
    return folder


@pytest.fixture
def instance(home):
    with dg.DagsterInstance.from_config(str(home)) as instance:
        yield instance


def slot_holders(instance) -> list[str]:
    return [slot.run_id for slot in instance.event_log_storage.get_concurrency_info("duckdb").claimed_slots]


def killed_holder(home: Path, instance, tagged: bool) -> str:
    """Start a run holding the pool slot, check it is left alone while alive, SIGKILL it; its run id."""
    child = subprocess.Popen([sys.executable, "-c", HOLDER, str(home), "tagged" if tagged else "untagged"],
                             cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        for _ in range(300):
            if slot_holders(instance):
                break
            assert child.poll() is None, "the holding job exited early"
            time.sleep(0.2)
        [run_id] = slot_holders(instance)
        assert reap_dead_runs(instance) == [], "a live run must be left alone"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    assert instance.get_run_by_id(run_id).status == dg.DagsterRunStatus.STARTED
    assert slot_holders(instance) == [run_id]
    return run_id


def assert_failed_and_freed(instance, run_id: str) -> None:
    assert instance.get_run_by_id(run_id).status == dg.DagsterRunStatus.FAILURE
    [failure] = instance.all_logs(run_id, of_type=dg.DagsterEventType.RUN_FAILURE)
    assert "is gone" in failure.message
    assert failure.dagster_event.event_specific_data.failure_reason.value == "UNEXPECTED_TERMINATION"
    info = instance.event_log_storage.get_concurrency_info("duckdb")
    assert info.claimed_slots == [] and info.pending_steps == []


@pytest.mark.slow
def test_a_killed_tagged_run_is_failed_and_its_slot_freed(home, instance):
    run_id = killed_holder(home, instance, tagged=True)
    [reaped] = reap_dead_runs(instance)
    assert (reaped.run_id, reaped.marked_failed) == (run_id, True)
    assert_failed_and_freed(instance, run_id)
    assert reap_dead_runs(instance) == []


@pytest.mark.slow
def test_the_sensor_reaps_an_untagged_run_by_the_pid_dagster_logged(home, instance):
    run_id = killed_holder(home, instance, tagged=False)
    assert PID_TAG not in instance.get_run_by_id(run_id).tags
    skip = dead_run_reaper(dg.build_sensor_context(instance=instance))
    assert isinstance(skip, dg.SkipReason) and skip.skip_message.startswith("1 run(s)")
    assert_failed_and_freed(instance, run_id)


def test_other_hosts_are_left_alone_and_a_reused_pid_counts_as_gone(instance):
    mine = launcher_tags()
    elsewhere = create_run_for_test(instance, status=dg.DagsterRunStatus.STARTED,
                                    tags={**mine, HOST_TAG: "another-host", PID_TAG: "999999999"})
    reused = create_run_for_test(instance, status=dg.DagsterRunStatus.STARTED,
                                 tags={**mine, PROCESS_STARTED_TAG: f"{psutil.Process().create_time() - 3600:.3f}"})
    alive = create_run_for_test(instance, status=dg.DagsterRunStatus.STARTED, tags=mine)
    assert [r.run_id for r in reap_dead_runs(instance)] == [reused.run_id]
    statuses = {run.run_id: instance.get_run_by_id(run.run_id).status for run in (elsewhere, reused, alive)}
    assert statuses == {elsewhere.run_id: dg.DagsterRunStatus.STARTED, reused.run_id: dg.DagsterRunStatus.FAILURE,
                        alive.run_id: dg.DagsterRunStatus.STARTED}


def test_a_re_execution_is_not_judged_by_the_launcher_tags_it_copied(instance):
    """The UI re-executes a CLI run with the CLI run's tags; the CLI process being gone says nothing of it."""
    gone = {**launcher_tags(), PROCESS_STARTED_TAG: f"{psutil.Process().create_time() - 3600:.3f}"}
    parent = create_run_for_test(instance, status=dg.DagsterRunStatus.SUCCESS, tags=gone)
    child = create_run_for_test(instance, status=dg.DagsterRunStatus.STARTED, tags=gone,
                                parent_run_id=parent.run_id, root_run_id=parent.run_id)
    assert reap_dead_runs(instance) == []
    assert instance.get_run_by_id(child.run_id).status == dg.DagsterRunStatus.STARTED
