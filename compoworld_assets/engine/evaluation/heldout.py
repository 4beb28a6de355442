"""CompoWorld held-out tasks: unseen service combinations rolled out with an LLM policy and verified.

Every sampled held-out task is rolled out once per seed (the seed rides on every model call),
then each trajectory is replayed on a fresh world and scored on its rubric. Metrics per item:

* ``success``: the replay is identical and every rubric criterion passes;
* ``rubric_completion``: the rubric score (weighted share of positive criteria, zero on a trap);
* ``made_tool_call``: the episode contains at least one tool call (format competence);
* ``first_call_exact``: the episode's first service call is the oracle's first (same service, tool and
  arguments, compared as canonical JSON): the right start, before any tool result could help;
* ``success[<capability>]``: ``success`` restricted to tasks exercising that capability.

Budgets (assistant turns, tokens per turn) come from the tasks: :func:`heldout_budget` measures the
oracle (the task's own plan) in the same environment and adds slack (``rollout/budgets.py``); a
limit set explicitly takes its place. The self-test rolls the oracle out on the same tasks under
the same budget the model gets: every episode must fit it, replay identically and pass.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Sequence

from compoworld_assets.engine.agents.interface import DiscoverMode
from compoworld_assets.engine.agents.world import WorldFactory
from compoworld_assets.engine.canonical import canonical_json
from compoworld_assets.engine.evaluation.results import BenchmarkRun, ModelEndpoint, SelfTest
from compoworld_assets.engine.rollout.budgets import (
    DEFAULT_SLACK,
    EpisodeBudget,
    Slack,
    TokenCounter,
    derive_budget,
    episode_need,
    estimated_tokens,
    exceeded,
    oracle_needs,
    oracle_trajectories,
    with_overrides,
)
from compoworld_assets.engine.rollout.engine import run_rollouts
from compoworld_assets.engine.rollout.llm import CompletionFn, litellm_completion
from compoworld_assets.engine.rollout.verify import VerifiedTrajectory, verify_trajectory
from compoworld_assets.engine.tasks.model import Task, ToolCallRecord, Trajectory

BENCHMARK = "compoworld_heldout"


def select_heldout(tasks: Sequence[Task], n: int | None, seed: int = 0) -> list[Task]:
    """Up to ``n`` held-out tasks (all when ``n`` is None), a seeded sample in task id order."""
    heldout = sorted((t for t in tasks if t.split == "heldout"), key=lambda t: t.task_id)
    if n is not None and n < len(heldout):
        heldout = sorted(random.Random(seed).sample(heldout, n), key=lambda t: t.task_id)
    return heldout


def is_success(verified: VerifiedTrajectory) -> bool:
    return verified.replay_identical and bool(verified.criteria) and all(c.passed for c in verified.criteria)


def call_key(call: ToolCallRecord) -> tuple[str, str, str]:
    return call.service_id, call.tool, canonical_json(call.arguments)


def first_call_keys(trajectories: Sequence[Trajectory]) -> dict[str, tuple[str, str, str] | None]:
    """Each trajectory's first service call (``call_key``), ``None`` when it made none, by task id."""
    return {t.task_id: call_key(t.calls[0]) if t.calls else None for t in trajectories}


def heldout_budget(tasks: Sequence[Task], world_factory: WorldFactory, mode: DiscoverMode = "direct",
                   count_tokens: TokenCounter = estimated_tokens, slack: Slack = DEFAULT_SLACK, *,
                   max_steps: int | None = None, max_tokens: int | None = None) -> EpisodeBudget:
    """The oracle's needs on ``tasks`` plus ``slack``; ``max_steps``/``max_tokens``, when set, take their place."""
    derived = derive_budget(oracle_needs(tasks, world_factory, mode, count_tokens), slack)
    return with_overrides(derived, max_steps=max_steps, max_tokens=max_tokens)


def evaluate_heldout(tasks: Sequence[Task], world_factory: WorldFactory, endpoint: ModelEndpoint,
                     seeds: Sequence[int], *, mode: DiscoverMode = "direct", budget: EpisodeBudget | None = None,
                     concurrency: int = 1, episode_timeout_s: float = 900.0,
                     completion_fn: CompletionFn = litellm_completion) -> BenchmarkRun:
    """Roll ``tasks`` out with ``endpoint`` under every seed and score each trajectory by replay.

    ``budget`` defaults to :func:`heldout_budget` (the endpoint's ``max_tokens``, when set, in its place).
    """
    if budget is None:
        budget = heldout_budget(tasks, world_factory, mode, max_tokens=endpoint.max_tokens)
    run = BenchmarkRun(benchmark=BENCHMARK, model=endpoint.name, seeds=list(seeds),
                       details={"mode": mode, "budget": budget.as_dict(), "finish_reasons": {}})
    oracle_first = first_call_keys(oracle_trajectories(tasks, world_factory, mode, concurrency=max(concurrency, 1)))
    for seed in seeds:
        def policy_factory(task: Task, _mode: DiscoverMode, seed: int = seed):
            return endpoint.policy(seed, completion_fn, max_tokens=budget.max_tokens)

        trajectories = asyncio.run(run_rollouts(list(tasks), policy_factory, world_factory, mode=mode,
                                                concurrency=concurrency, episode_timeout_s=episode_timeout_s,
                                                max_steps=budget.max_steps, max_retries=1))
        for task, trajectory in zip(tasks, trajectories, strict=True):
            verified = verify_trajectory(task, trajectory, world_factory)
            success = is_success(verified)
            run.add("success", task.task_id, success)
            run.add("rubric_completion", task.task_id, verified.rubric_score)
            run.add("made_tool_call", task.task_id, bool(trajectory.calls))
            first = oracle_first[task.task_id]
            run.add("first_call_exact", task.task_id,
                    first is not None and bool(trajectory.calls) and call_key(trajectory.calls[0]) == first)
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
                      budget: EpisodeBudget | None = None, count_tokens: TokenCounter = estimated_tokens,
                      concurrency: int = 1) -> SelfTest:
    """The oracle on ``tasks`` under ``budget`` (default: :func:`heldout_budget`), the limits the model gets:
    every episode must fit them, replay identically and pass every criterion.

    A failure reads ``<task id>: <why>``, e.g. ``a turn needs 140 tokens > max_tokens 96``.
    """
    if budget is None:
        budget = heldout_budget(tasks, world_factory, mode, count_tokens)
    trajectories = oracle_trajectories(tasks, world_factory, mode, max_steps=budget.max_steps,
                                       concurrency=concurrency)
    failures = []
    for task, trajectory in zip(tasks, trajectories, strict=True):
        reasons = exceeded(episode_need(trajectory, count_tokens), budget)
        if not is_success(verify_trajectory(task, trajectory, world_factory)):
            reasons.append(f"the oracle failed (finish: {trajectory.finish_reason})")
        if reasons:
            failures.append(f"{task.task_id}: {'; '.join(reasons)}")
    return SelfTest(name="oracle_replay", passed=len(tasks) - len(failures), total=len(tasks), failures=failures)
