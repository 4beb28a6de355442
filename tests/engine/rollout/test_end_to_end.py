"""End to end: built-in services built offline, tasks from the task factory, oracle rollouts in both
modes on sandboxed services, every trajectory verified by replay, and a mutated one rejected."""

import asyncio

import pytest

from compoworld_assets.engine.rollout.engine import run_rollouts
from compoworld_assets.engine.rollout.library_world import build_library
from compoworld_assets.engine.rollout.policy import OraclePolicy
from compoworld_assets.engine.rollout.verify import criterion_pass_rates, verify_trajectory

SERVICES = ("crm", "helpdesk", "mail", "invoicing", "calendar")


@pytest.fixture(scope="module")
def factory_and_tasks():
    library = build_library(SERVICES)
    tasks, _ = library.sample_tasks(6, seed=3)
    assert len(tasks) >= 3
    with library.world_factory() as factory:
        yield factory, tasks


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["gateway", "direct"])
def test_oracle_rollouts_verify_by_replay(factory_and_tasks, mode):
    factory, tasks = factory_and_tasks
    trajectories = asyncio.run(run_rollouts(tasks, OraclePolicy, factory, mode=mode, concurrency=3))
    assert [t.finish_reason for t in trajectories] == ["submitted"] * len(tasks)
    assert all(t.meta["environment"].keys() == set(SERVICES) for t in trajectories)
    verified = [verify_trajectory(task, t, factory) for task, t in zip(tasks, trajectories, strict=True)]
    assert [(v.passed, v.mismatches) for v in verified] == [(True, [])] * len(tasks)
    assert set(criterion_pass_rates(v.criteria for v in verified).values()) == {1.0}


@pytest.mark.slow
def test_a_mutated_argument_fails_verification(factory_and_tasks):
    factory, tasks = factory_and_tasks
    task = tasks[0]
    [trajectory] = asyncio.run(run_rollouts([task], OraclePolicy, factory, mode="direct"))
    mutated = trajectory.model_copy(deep=True)
    call = next(c for c in reversed(mutated.calls) if any(isinstance(v, str) for v in c.arguments.values()))
    name = next(k for k, v in sorted(call.arguments.items()) if isinstance(v, str))
    call.arguments[name] += "-mutated"
    verified = verify_trajectory(task, mutated, factory)
    assert not verified.replay_identical and not verified.passed
    assert verify_trajectory(task, trajectory, factory).passed
