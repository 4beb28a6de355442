"""Replay verification: identical replays pass, mutated trajectories and failed rubrics do not."""

import asyncio

import pytest
from toy_world import toy_task, toy_world_factory

from compoworld_assets.engine.rollout.engine import run_rollouts
from compoworld_assets.engine.rollout.policy import OraclePolicy
from compoworld_assets.engine.rollout.verify import (
    criterion_pass_rates,
    verify_trajectories,
    verify_trajectory,
)


@pytest.fixture(scope="module")
def oracle_trajectory():
    return asyncio.run(run_rollouts([toy_task()], OraclePolicy, toy_world_factory, mode="direct"))[0]


def verify(trajectory, threshold=1.0):
    return verify_trajectory(toy_task(), trajectory, toy_world_factory, threshold)


def test_the_oracle_trajectory_verifies(oracle_trajectory):
    verified = verify(oracle_trajectory)
    assert verified.replay_identical and verified.mismatches == [] and verified.passed
    assert [c.id for c in verified.criteria] == ["step1_created", "answer_ticket_id", "no_collateral"]
    assert all(c.passed for c in verified.criteria)


def test_a_changed_argument_fails_the_replay(oracle_trajectory):
    mutated = oracle_trajectory.model_copy(deep=True)
    mutated.calls[1].arguments["priority"] = "low"
    verified = verify(mutated)
    assert not verified.replay_identical and not verified.passed
    assert verified.mismatches == ["call 1 (helpdesk_open_ticket): result differs", "final state hash differs"]
    assert {c.id: c.passed for c in verified.criteria}["step1_created"] is False


def test_a_forged_result_fails_the_replay(oracle_trajectory):
    forged = oracle_trajectory.model_copy(deep=True)
    forged.calls[0].result["data"]["count"] = 99
    assert verify(forged).mismatches == ["call 0 (crm_search_contacts): result differs"]


def test_a_replayable_trajectory_below_the_threshold_is_not_kept(oracle_trajectory):
    no_answer = oracle_trajectory.model_copy(update={"final_answer": {}})
    verified = verify(no_answer)
    assert verified.replay_identical and verified.rubric_score == pytest.approx(1 / 2) and not verified.passed
    assert verify(no_answer, threshold=0.5).passed


def test_the_task_must_match(oracle_trajectory):
    with pytest.raises(ValueError, match="verified against"):
        verify_trajectory(toy_task("other"), oracle_trajectory, toy_world_factory, 1.0)


def test_criterion_pass_rates_across_a_batch(oracle_trajectory):
    batch = [oracle_trajectory, oracle_trajectory.model_copy(update={"final_answer": {}})]
    results = verify_trajectories({"toy-1": toy_task()}, batch, toy_world_factory)
    rates = {"answer_ticket_id": 0.5, "no_collateral": 1.0, "step1_created": 1.0}
    assert criterion_pass_rates(r.criteria for r in results) == rates
    assert criterion_pass_rates([]) == {}


def test_a_batch_verified_concurrently_and_kept_as_rows_gives_the_same_verdicts_in_order(oracle_trajectory):
    batch = [oracle_trajectory.model_copy(update={"final_answer": {} if k % 2 else oracle_trajectory.final_answer,
                                                  "rollout_idx": k}) for k in range(6)]
    tasks = {"toy-1": toy_task()}
    alone = verify_trajectories(tasks, batch, toy_world_factory)
    rows = verify_trajectories(tasks, batch, toy_world_factory, concurrency=3, order=[5, 4, 3, 2, 1, 0],
                               keep=lambda task, verdict: (task.task_id, verdict.trajectory.rollout_idx, verdict.passed))
    assert rows == [("toy-1", k, v.passed) for k, v in enumerate(alone)]
    assert [v.passed for v in alone] == [True, False] * 3
    with pytest.raises(ValueError, match="every trajectory once"):
        verify_trajectories(tasks, batch, toy_world_factory, order=[0, 0, 1, 2, 3, 4])


def test_concurrent_replays_run_in_lanes_of_consecutive_ones(oracle_trajectory):
    """Each thread starts on its own half of the order (a pool then sees the same services again and again);
    replays taken from one queue alternated between the pools."""
    import threading

    batch = [oracle_trajectory.model_copy(update={"rollout_idx": k}) for k in range(6)]
    by_thread: dict[str, list[int]] = {}
    both_started = threading.Barrier(2, timeout=30)  # neither lane runs out (and takes the other's) before both start

    def keep(task, verdict):
        name = threading.current_thread().name
        if name not in by_thread:
            by_thread[name] = []
            both_started.wait()
        by_thread[name].append(verdict.trajectory.rollout_idx)
        return verdict.passed

    assert verify_trajectories({"toy-1": toy_task()}, batch, toy_world_factory, concurrency=2,
                               order=list(range(6)), keep=keep) == [True] * 6
    assert sorted(run[0] for run in by_thread.values()) == [0, 3]
    assert sorted(k for run in by_thread.values() for k in run) == list(range(6))


def test_a_replay_that_raises_ends_a_concurrent_batch(oracle_trajectory):
    batch = [oracle_trajectory.model_copy(update={"rollout_idx": k}) for k in range(8)]
    replayed: list[int] = []

    def keep(task, verdict):
        replayed.append(verdict.trajectory.rollout_idx)
        if verdict.trajectory.rollout_idx in (0, 4):  # the first of each lane
            raise RuntimeError("a defect in keeping a verdict")
        return verdict.passed

    with pytest.raises(RuntimeError, match="defect"):
        verify_trajectories({"toy-1": toy_task()}, batch, toy_world_factory, concurrency=2, order=list(range(8)),
                            keep=keep)
    assert len(replayed) <= 2, "no lane took another replay once one had raised"
