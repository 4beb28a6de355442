"""Runs survive being killed, and a signal ends a CLI run that waits for the ``duckdb`` pool.

Before: a ``compoworld run`` SIGKILLed in a stage holding the only ``duckdb`` slot (the services stage,
then) kept it, and the next run waited at "importing specs" for ever, ignoring SIGTERM. Service builds now
write Delta partitions and hold no slot; the catalog-and-graph stage still does.
"""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import dagster as dg
import pytest
from dagster._utils.interrupts import capture_interrupts

from compoworld_assets.interrupts import interruptible_run

REPO = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "compoworld_assets.cli"]


def wait_for(condition, process: subprocess.Popen, what: str, attempts: int = 1500) -> None:
    """Poll ``condition`` every 0.2 s while ``process`` runs (at most ``attempts`` times)."""
    for _ in range(attempts):
        if condition():
            return
        assert process.poll() is None, f"the CLI exited (rc {process.returncode}) before {what}"
        time.sleep(0.2)
    raise AssertionError(f"gave up waiting for {what}")


def duckdb_pool(instance):
    return instance.event_log_storage.get_concurrency_info("duckdb")


@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_a_run_killed_while_holding_the_duckdb_slot_is_failed_and_the_next_run_completes(project_env, tmp_path):
    instance = dg.DagsterInstance.from_config(project_env["DAGSTER_HOME"])
    data = str(tmp_path / "data")
    command = [*CLI, "run", "--tasks", "12", "--data-dir", data]
    first = subprocess.Popen(command, cwd=REPO, env=project_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: any(s.step_key in ("tool_catalog", "dependency_graph")
                             for s in duckdb_pool(instance).claimed_slots), first,
                 "a catalog-and-graph step claimed the duckdb slot")
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=60)
    [killed] = [slot.run_id for slot in duckdb_pool(instance).claimed_slots]
    assert instance.get_run_by_id(killed).status == dg.DagsterRunStatus.STARTED
    assert instance.get_run_by_id(killed).tags["compoworld/pid"] == str(first.pid)

    again = subprocess.run(command, cwd=REPO, env=project_env, capture_output=True, text=True, timeout=900,
                           check=False)
    assert again.returncode == 0, (again.stdout + again.stderr)[-4000:]
    assert f"run {killed}: its process (pid {first.pid}) is gone; marked failed, pool slots freed" in again.stderr
    assert "CompoWorld main job finished" in again.stdout
    assert instance.get_run_by_id(killed).status == dg.DagsterRunStatus.FAILURE
    pool = duckdb_pool(instance)
    assert pool.claimed_slots == [] and pool.pending_steps == []
    by_first = [r.status for r in instance.get_runs() if r.tags["compoworld/pid"] == str(first.pid)]
    assert by_first == [dg.DagsterRunStatus.FAILURE, *[dg.DagsterRunStatus.SUCCESS] * 2], \
        "killed catalog and graph; services, import"
    by_second = [r.status for r in instance.get_runs() if r.tags["compoworld/pid"] != str(first.pid)]
    assert by_second == [dg.DagsterRunStatus.SUCCESS] * 5, "one run per stage"


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_ends_a_run_waiting_for_the_pool(project_env, tmp_path, signum):
    """The pool's one slot is taken by a holder that never lets go; the CLI's run waits, and a signal ends it."""
    instance = dg.DagsterInstance.from_config(project_env["DAGSTER_HOME"])
    storage = instance.event_log_storage
    storage.initialize_concurrency_limit_to_default("duckdb")
    assert storage.claim_concurrency_slot("duckdb", "holder", "holder_step").is_claimed
    waiting = subprocess.Popen([*CLI, "materialize", "service_specs", "quarantined_specs",
                                "--data-dir", str(tmp_path / "data")],
                               cwd=REPO, env=project_env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: any(p.run_id != "holder" for p in duckdb_pool(instance).pending_steps), waiting,
                 "the CLI's step queued for the slot")
        waiting.send_signal(signum)
        _, stderr = waiting.communicate(timeout=120)
    finally:
        if waiting.poll() is None:
            waiting.kill()
    assert waiting.returncode == 130, stderr[-3000:]
    [run] = instance.get_runs()
    assert run.status == dg.DagsterRunStatus.FAILURE
    assert [p.run_id for p in duckdb_pool(instance).pending_steps] == ["holder"], "the waiting claim is withdrawn"


def test_a_signal_dagster_swallowed_becomes_keyboard_interrupt():
    """Inside ``capture_interrupts`` (as during a Dagster run) SIGINT only sets a flag; the watcher acts on it."""
    looked = 0
    with pytest.raises(KeyboardInterrupt), capture_interrupts(), interruptible_run(poll_s=0.02, grace_s=0.1):
        os.kill(os.getpid(), signal.SIGINT)
        for looked in range(1, 500):  # a wait that never looks at the flag, like Dagster's pool wait
            time.sleep(0.02)
    assert 0 < looked < 499
