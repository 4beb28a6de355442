"""The isolated runner: results in order, a job that kills its process costs only that job."""

from __future__ import annotations

from pathlib import Path

import pytest

from compoworld_assets.engine.workers import WorkerLost, run_isolated


@pytest.fixture
def faults(monkeypatch):
    monkeypatch.syspath_prepend(str(Path(__file__).parent))  # the workers import the jobs' module by name
    import worker_faults

    return worker_faults


@pytest.mark.parametrize("batch", [1, 4])
def test_results_come_back_in_order_whatever_order_they_start_in(faults, batch):
    jobs = [0, 1, 2, 4, 6, 7]
    assert run_isolated(jobs, faults.exit_on, 2, faults.start_nothing, order=[5, 4, 3, 2, 1, 0], batch=batch) == \
        [j * j for j in jobs]


@pytest.mark.parametrize("batch", [1, 3])
def test_a_job_that_kills_its_worker_is_lost_alone_and_a_raising_one_says_why(faults, batch):
    """Also in batches: the dying job's batch neighbours are run again alone and come back."""
    results = run_isolated(list(range(8)), faults.exit_on, 2, faults.start_nothing, batch=batch)
    assert results[3] == WorkerLost("BrokenProcessPool", "the worker process died (killed or out of memory)")
    assert results[5] == WorkerLost("ValueError", "five is refused")
    assert [r for i, r in enumerate(results) if i not in (3, 5)] == [0, 1, 4, 16, 36, 49]


def test_a_result_that_cannot_come_back_costs_only_its_job_not_its_batch(faults):
    results = run_isolated(list(range(5)), faults.unpicklable_on_two, 2, faults.start_nothing, batch=3)
    assert results[:2] == [0, 1] and results[3:] == [3, 4]
    assert isinstance(results[2], WorkerLost)


def test_each_result_is_replaced_by_what_is_kept_of_it_as_it_arrives(faults):
    kept: list[int] = []

    def keep(result: int) -> str:
        kept.append(result)
        return f"<{result}>"

    results = run_isolated(list(range(7)), faults.exit_on, 2, faults.start_nothing, keep=keep, batch=2)
    assert sorted(kept) == [0, 1, 4, 16, 36]  # every result once; lost jobs are not results
    assert results[:3] == ["<0>", "<1>", "<4>"] and results[4] == "<16>" and results[6] == "<36>"
    assert isinstance(results[3], WorkerLost) and isinstance(results[5], WorkerLost)


def test_executors_a_worker_leaves_open_are_released_when_it_exits(faults, tmp_path):
    """Workers end by ``os._exit``: their open sandboxes' processes and scratch folders must not outlive them."""
    assert run_isolated([1, 2, 3], faults.open_executor, 2, faults.hold_scratch_root, (str(tmp_path),)) == [1, 2, 3]
    assert list(tmp_path.iterdir()) == []


def test_a_worker_dying_while_the_results_before_it_are_kept_costs_only_its_job(faults):
    """Keeping results takes time (a task is hashed as it is kept): a worker may die meanwhile, and the next
    batch handed out then meets a broken pool, which must count as that worker's death, not end the run."""
    import time

    def keep(result: int) -> int:
        time.sleep(0.3)
        return result

    results = run_isolated(list(range(8)), faults.exit_on, 2, faults.start_nothing, keep=keep)
    assert results[3] == WorkerLost("BrokenProcessPool", "the worker process died (killed or out of memory)")
    assert results[5] == WorkerLost("ValueError", "five is refused")
    assert [r for i, r in enumerate(results) if i not in (3, 5)] == [0, 1, 4, 16, 36, 49]
