"""The async rollout engine: many episodes in flight, each in its own :class:`ToolEnvironment`.

An episode is the environment's (``rollout/environment.py``): the policy and the environment take
turns until the policy calls ``submit_answer`` (``finish_reason="submitted"``), answers without a
tool call (``"stop"``) or runs out of steps (``"max_steps"``); the engine adds the limits that need a
clock or a model: time (``"timeout"``) and a model that keeps failing (``"model_error"``). Steps run
in worker threads (world calls block on the sandbox), the model calls on the event loop. Transient
model errors are retried with exponential backoff and recorded in ``meta["retries"]``.

A trajectory holds only what the episode did, never how long it took: the same tasks, policy and
worlds give byte-identical trajectories (callers time ``run_rollouts`` themselves, as the
``trajectories`` asset does in its Dagster metadata).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from compoworld_assets.engine.agents.interface import DiscoverMode
from compoworld_assets.engine.agents.world import WorldFactory
from compoworld_assets.engine.lanes import cut_into_lanes, next_job
from compoworld_assets.engine.rollout.environment import DEFAULT_MAX_STEPS, Observation, ToolEnvironment
from compoworld_assets.engine.rollout.llm import is_transient
from compoworld_assets.engine.rollout.policy import Policy, PolicyFactory
from compoworld_assets.engine.runtime.mount_order import reuse_order
from compoworld_assets.engine.tasks.model import Task, Trajectory


@dataclass(frozen=True)
class RolloutSettings:
    mode: DiscoverMode = "gateway"
    rollouts_per_task: int = 1
    concurrency: int = 8
    episode_timeout_s: float = 300.0
    max_retries: int = 3
    retry_backoff_s: float = 1.0
    max_steps: int = DEFAULT_MAX_STEPS


async def run_rollouts(tasks: Sequence[Task], policy_factory: PolicyFactory, runtime_factory: WorldFactory, *,
                       mode: DiscoverMode = "gateway", rollouts_per_task: int = 1, concurrency: int = 8,
                       episode_timeout_s: float = 300.0, max_retries: int = 3, retry_backoff_s: float = 1.0,
                       max_steps: int = DEFAULT_MAX_STEPS, order: Sequence[int] | None = None,
                       keep: Callable[[Trajectory], Any] | None = None) -> list[Any]:
    """Roll out every task ``rollouts_per_task`` times; trajectories come back in task, then rollout order.

    Episodes start in ``order`` (indices into ``tasks``; default: :func:`reuse_order` of the tasks' services, so
    that the world factory's pools reuse their processes), cut into ``concurrency`` lanes of consecutive episodes,
    each run one episode at a time (:mod:`compoworld_assets.engine.lanes`). Each episode reads its task
    (``tasks[i]``) when it starts, so a sequence that parses tasks when read (``task_tables.StoredTasks``) is held
    a few tasks at a time; ``keep`` maps each trajectory, as it ends, to what is returned in its place (a table
    row, say), so that a round's trajectories are not all held as objects."""
    settings = RolloutSettings(mode=mode, rollouts_per_task=rollouts_per_task, concurrency=concurrency,
                               episode_timeout_s=episode_timeout_s, max_retries=max_retries,
                               retry_backoff_s=retry_backoff_s, max_steps=max_steps)
    if order is None:
        order = reuse_order([task.services for task in tasks])
    if sorted(order) != list(range(len(tasks))):
        raise ValueError("order must name every task once")
    lanes = cut_into_lanes([(i, k) for i in order for k in range(rollouts_per_task)], concurrency)
    done: dict[tuple[int, int], Any] = {}
    with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="cw-world") as threads:
        async def lane(own: deque[tuple[int, int]]) -> None:
            while (job := next_job(lanes, own)) is not None:
                trajectory = await run_episode(tasks[job[0]], job[1], policy_factory, runtime_factory, settings,
                                               threads)
                done[job] = trajectory if keep is None else keep(trajectory)

        await asyncio.gather(*[lane(own) for own in lanes])
    return [done[(i, k)] for i in range(len(tasks)) for k in range(rollouts_per_task)]


async def run_episode(task: Task, rollout_idx: int, policy_factory: PolicyFactory, runtime_factory: WorldFactory,
                      settings: RolloutSettings, threads: ThreadPoolExecutor) -> Trajectory:
    loop = asyncio.get_running_loop()
    env = ToolEnvironment(runtime_factory, settings.mode, settings.max_steps)
    observation = await loop.run_in_executor(threads, env.reset, task)
    policy = policy_factory(task, settings.mode)
    meta: dict[str, Any] = {"retries": []}
    in_flight: list[asyncio.Future[Any]] = []
    try:
        try:
            await asyncio.wait_for(_play(env, observation, policy, meta, settings, threads, in_flight),
                                   settings.episode_timeout_s)
        except TimeoutError:
            for future in in_flight:
                await asyncio.gather(future, return_exceptions=True)
            env.end("timeout")
        return await loop.run_in_executor(threads, env.trajectory, policy.name, rollout_idx, meta)
    finally:
        await loop.run_in_executor(threads, env.close)


async def _play(env: ToolEnvironment, observation: Observation, policy: Policy, meta: dict[str, Any],
                settings: RolloutSettings, threads: ThreadPoolExecutor, in_flight: list[asyncio.Future[Any]]) -> None:
    loop = asyncio.get_running_loop()
    for turn in range(settings.max_steps):
        message = await _ask(policy, env.messages, observation.tools, meta, turn, settings)
        if message is None:
            env.end("model_error")
            return
        future = loop.run_in_executor(threads, env.step, message)
        in_flight.append(future)
        result = await asyncio.shield(future)
        in_flight.remove(future)
        if result.done:
            return


async def _ask(policy: Policy, messages: list[dict[str, Any]], tools: list[dict[str, Any]], meta: dict[str, Any],
               turn: int, settings: RolloutSettings) -> dict[str, Any] | None:
    """The policy's next message, transient errors retried; None when the model keeps failing."""
    for attempt in range(settings.max_retries + 1):
        try:
            return await policy.next_message(messages, tools)
        except Exception as exc:  # noqa: BLE001 - classified below, recorded in the trajectory
            record = {"turn": turn, "attempt": attempt, "error": f"{type(exc).__name__}: {exc}"[:500]}
            if not is_transient(exc) or attempt == settings.max_retries:
                meta["model_error"] = record
                return None
            meta["retries"].append(record)
            await asyncio.sleep(settings.retry_backoff_s * 2 ** attempt)
    return None
