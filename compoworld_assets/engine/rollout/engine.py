"""The async rollout engine: many episodes in flight, each on its own copy of the world.

An episode: the world factory mounts a fresh world holding the task's initial state, the
agent interface lists the tools, and the policy and the world take turns until the policy
calls ``submit_answer`` (``finish_reason="submitted"``), answers without a tool call
(``"stop"``), runs out of steps (``"max_steps"``) or time (``"timeout"``), or the model keeps
failing (``"model_error"``). Tool calls run in worker threads (world calls block on the
sandbox), the model calls on the event loop. Transient model errors are retried with
exponential backoff and recorded in ``meta["retries"]``.

A trajectory holds only what the episode did, never how long it took: the same tasks, policy and
worlds give byte-identical trajectories (callers time ``run_rollouts`` themselves, as the
``trajectories`` asset does in its Dagster metadata).
"""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from compoworld_assets.engine.agents.interface import AgentInterface, DiscoverMode
from compoworld_assets.engine.agents.world import (
    MountedWorld,
    WorldFactory,
    close_world,
    environment_versions,
)
from compoworld_assets.engine.rollout.llm import is_transient
from compoworld_assets.engine.rollout.policy import Policy, PolicyFactory
from compoworld_assets.engine.tasks.model import Task, ToolCallRecord, Trajectory


@dataclass(frozen=True)
class RolloutSettings:
    mode: DiscoverMode = "gateway"
    rollouts_per_task: int = 1
    concurrency: int = 8
    episode_timeout_s: float = 300.0
    max_retries: int = 3
    retry_backoff_s: float = 1.0
    max_steps: int = 40


@dataclass
class _Episode:
    """What an episode has produced so far (kept outside the coroutine so a timeout can read it)."""

    task: Task
    rollout_idx: int
    mode: DiscoverMode
    policy_name: str = ""
    messages: list[dict[str, Any]] = field(default_factory=list)
    tools: list[dict[str, Any]] = field(default_factory=list)
    calls: list[ToolCallRecord] = field(default_factory=list)
    answer: dict[str, Any] | None = None
    finish_reason: str = "stop"
    final_state_hash: str = ""
    meta: dict[str, Any] = field(default_factory=lambda: {"retries": []})

    def trajectory(self) -> Trajectory:
        return Trajectory(task_id=self.task.task_id, policy=self.policy_name, rollout_idx=self.rollout_idx,
                          messages=self.messages, tools=self.tools, calls=self.calls,
                          final_answer=self.answer or {}, final_state_hash=self.final_state_hash,
                          finish_reason=self.finish_reason, discover_mode=self.mode, meta=self.meta)


async def run_rollouts(tasks: list[Task], policy_factory: PolicyFactory, runtime_factory: WorldFactory, *,
                       mode: DiscoverMode = "gateway", rollouts_per_task: int = 1, concurrency: int = 8,
                       episode_timeout_s: float = 300.0, max_retries: int = 3, retry_backoff_s: float = 1.0,
                       max_steps: int = 40) -> list[Trajectory]:
    """Roll out every task ``rollouts_per_task`` times; trajectories come back in task, then rollout order."""
    settings = RolloutSettings(mode=mode, rollouts_per_task=rollouts_per_task, concurrency=concurrency,
                               episode_timeout_s=episode_timeout_s, max_retries=max_retries,
                               retry_backoff_s=retry_backoff_s, max_steps=max_steps)
    semaphore = asyncio.Semaphore(concurrency)
    with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="cw-world") as threads:
        async def bounded(task: Task, rollout_idx: int) -> Trajectory:
            async with semaphore:
                return await run_episode(task, rollout_idx, policy_factory, runtime_factory, settings, threads)

        jobs = [bounded(task, k) for task in tasks for k in range(rollouts_per_task)]
        return list(await asyncio.gather(*jobs))


async def run_episode(task: Task, rollout_idx: int, policy_factory: PolicyFactory, runtime_factory: WorldFactory,
                      settings: RolloutSettings, threads: ThreadPoolExecutor) -> Trajectory:
    loop = asyncio.get_running_loop()
    episode = _Episode(task=task, rollout_idx=rollout_idx, mode=settings.mode)
    world = await loop.run_in_executor(threads, runtime_factory, task)
    in_flight: list[asyncio.Future[Any]] = []
    try:
        await asyncio.wait_for(_play(episode, world, policy_factory, settings, threads, in_flight),
                               settings.episode_timeout_s)
    except TimeoutError:
        episode.finish_reason = "timeout"
    finally:
        for future in in_flight:
            await asyncio.gather(future, return_exceptions=True)
        episode.final_state_hash = await loop.run_in_executor(threads, _state_hash, world)
        await loop.run_in_executor(threads, close_world, world)
    return episode.trajectory()


def _state_hash(world: MountedWorld) -> str:
    return world.world_state().content_hash()


async def _play(episode: _Episode, world: MountedWorld, policy_factory: PolicyFactory, settings: RolloutSettings,
                threads: ThreadPoolExecutor, in_flight: list[asyncio.Future[Any]]) -> None:
    loop = asyncio.get_running_loop()
    interface = AgentInterface(episode.task, world, settings.mode)
    policy = policy_factory(episode.task, settings.mode)
    episode.policy_name = policy.name
    episode.tools = interface.tools
    episode.meta["environment"] = environment_versions(world)
    episode.messages.extend(interface.initial_messages())
    for turn in range(settings.max_steps):
        message = await _ask(policy, episode, interface.tools, turn, settings)
        if message is None:
            episode.finish_reason = "model_error"
            return
        episode.messages.append(message)
        if not message.get("tool_calls"):
            episode.finish_reason = "stop"
            return
        for call in message["tool_calls"]:
            function = call["function"]
            future = loop.run_in_executor(threads, interface.execute, function["name"], function["arguments"])
            in_flight.append(future)
            outcome = await asyncio.shield(future)
            in_flight.remove(future)
            if outcome.record is not None:
                episode.calls.append(outcome.record)
            if outcome.answer is not None and episode.answer is None:
                episode.answer = outcome.answer
            episode.messages.append({"role": "tool", "tool_call_id": call["id"], "name": function["name"],
                                     "content": json.dumps(outcome.result, ensure_ascii=False)})
        if episode.answer is not None:
            episode.finish_reason = "submitted"
            return
    episode.finish_reason = "max_steps"


async def _ask(policy: Policy, episode: _Episode, tools: list[dict[str, Any]], turn: int,
               settings: RolloutSettings) -> dict[str, Any] | None:
    """The policy's next message, transient errors retried; None when the model keeps failing."""
    for attempt in range(settings.max_retries + 1):
        try:
            return await policy.next_message(list(episode.messages), tools)
        except Exception as exc:  # noqa: BLE001 - classified below, recorded in the trajectory
            record = {"turn": turn, "attempt": attempt, "error": f"{type(exc).__name__}: {exc}"[:500]}
            if not is_transient(exc) or attempt == settings.max_retries:
                episode.meta["model_error"] = record
                return None
            episode.meta["retries"].append(record)
            await asyncio.sleep(settings.retry_backoff_s * 2 ** attempt)
    return None
