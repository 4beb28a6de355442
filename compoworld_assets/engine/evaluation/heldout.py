"""CompoWorld held-out tasks: unseen service combinations rolled out with an LLM policy and verified.

Every sampled held-out task is rolled out once per seed (the seed rides on every model call),
then each trajectory is replayed on a fresh world and scored on its rubric. Metrics per item:

* ``success``: the replay is identical and every rubric criterion passes;
* ``rubric_completion``: the rubric score (weighted share of positive criteria, zero on a trap);
* ``made_tool_call``: the episode contains at least one tool call (format competence);
* ``success[<capability>]``: ``success`` restricted to tasks exercising that capability.

The self-test rolls the oracle (the task's own plan) out on the same tasks: every one must pass.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Sequence

from compoworld_assets.engine.agents.interface import DiscoverMode
from compoworld_assets.engine.agents.world import WorldFactory
from compoworld_assets.engine.evaluation.results import BenchmarkRun, ModelEndpoint, SelfTest
from compoworld_assets.engine.rollout.engine import run_rollouts
from compoworld_assets.engine.rollout.llm import CompletionFn, litellm_completion
from compoworld_assets.engine.rollout.policy import OraclePolicy
from compoworld_assets.engine.rollout.verify import VerifiedTrajectory, verify_trajectory
from compoworld_assets.engine.tasks.model import Task

BENCHMARK = "compoworld_heldout"


def select_heldout(tasks: Sequence[Task], n: int | None, seed: int = 0) -> list[Task]:
    """Up to ``n`` held-out tasks (all when ``n`` is None), a seeded sample in task id order."""
    heldout = sorted((t for t in tasks if t.split == "heldout"), key=lambda t: t.task_id)
    if n is not None and n < len(heldout):
        heldout = sorted(random.Random(seed).sample(heldout, n), key=lambda t: t.task_id)
    return heldout


def is_success(verified: VerifiedTrajectory) -> bool:
    return verified.replay_identical and bool(verified.criteria) and all(c.passed for c in verified.criteria)


def evaluate_heldout(tasks: Sequence[Task], world_factory: WorldFactory, endpoint: ModelEndpoint,
                     seeds: Sequence[int], *, mode: DiscoverMode = "direct", max_steps: int = 8,
                     concurrency: int = 1, episode_timeout_s: float = 900.0,
                     completion_fn: CompletionFn = litellm_completion) -> BenchmarkRun:
    """Roll ``tasks`` out with ``endpoint`` under every seed and score each trajectory by replay."""
    run = BenchmarkRun(benchmark=BENCHMARK, model=endpoint.name, seeds=list(seeds),
                       details={"mode": mode, "max_steps": max_steps, "finish_reasons": {}})
    for seed in seeds:
        def policy_factory(task: Task, _mode: DiscoverMode, seed: int = seed):
            return endpoint.policy(seed, completion_fn)

        trajectories = asyncio.run(run_rollouts(list(tasks), policy_factory, world_factory, mode=mode,
                                                concurrency=concurrency, episode_timeout_s=episode_timeout_s,
                                                max_steps=max_steps, max_retries=1))
        for task, trajectory in zip(tasks, trajectories, strict=True):
            verified = verify_trajectory(task, trajectory, world_factory)
            success = is_success(verified)
            run.add("success", task.task_id, success)
            run.add("rubric_completion", task.task_id, verified.rubric_score)
            run.add("made_tool_call", task.task_id, bool(trajectory.calls))
            run.sample(task.task_id, seed, success, finish_reason=trajectory.finish_reason,
                       rubric_completion=verified.rubric_score,
                       calls=[f"{c.service_id}.{c.tool}({json.dumps(c.arguments, sort_keys=True)})"
                              for c in trajectory.calls][:8])
            for capability in sorted(set(task.capabilities)):
                run.add(f"success[{capability}]", task.task_id, success)
            reasons = run.details["finish_reasons"]
            reasons[trajectory.finish_reason] = reasons.get(trajectory.finish_reason, 0) + 1
    return run


def heldout_self_test(tasks: Sequence[Task], world_factory: WorldFactory, mode: DiscoverMode = "direct",
                      concurrency: int = 1) -> SelfTest:
    """The oracle policy on ``tasks``: every trajectory must replay identically and pass every criterion."""
    trajectories = asyncio.run(run_rollouts(list(tasks), OraclePolicy, world_factory, mode=mode,
                                            concurrency=concurrency))
    failures = [task.task_id for task, trajectory in zip(tasks, trajectories, strict=True)
                if not is_success(verify_trajectory(task, trajectory, world_factory))]
    return SelfTest(name="oracle_replay", passed=len(tasks) - len(failures), total=len(tasks), failures=failures)
