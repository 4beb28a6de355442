"""The one CompoWorld environment: ``reset(task) → observation``, ``step(message) → observation, done``,
``score() → criterion results``.

Everything that lets an agent act on a task goes through :class:`ToolEnvironment`: the
``trajectories`` asset and the oracle (through :func:`~compoworld_assets.engine.rollout.engine.run_rollouts`),
LLM policies, held-out evaluation, GRPO's multi-turn ``rollout_func`` and the demo data. So the
prompt an agent sees, the tool results shown to it, what ends an episode and how it is scored are
the same wherever a model is trained, verified or evaluated.

An episode: ``reset`` mounts a fresh world holding the task's initial state and returns the system
and user messages plus the tools of the discovery mode. Each ``step`` takes one assistant message
(OpenAI chat format), runs its tool calls through the agent interface and returns the tool
messages; the episode is done when the agent calls ``submit_answer`` (``"submitted"``), answers
without a tool call (``"stop"``) or uses up ``max_steps`` assistant turns (``"max_steps"``).
``score`` evaluates the task's rubric on the world's state and the submitted answer; ``close``
releases the world. Methods block on the sandboxed services: async callers run them in threads.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Self

from compoworld_assets.engine.agents.interface import AgentInterface, DiscoverMode
from compoworld_assets.engine.agents.world import (
    MountedWorld,
    WorldFactory,
    close_world,
    environment_versions,
)
from compoworld_assets.engine.tasks.model import CriterionResult, Task, ToolCallRecord, Trajectory
from compoworld_assets.engine.tasks.rubrics import evaluate_rubric

DEFAULT_MAX_STEPS = 40


@dataclass(frozen=True)
class Observation:
    """What the agent is shown at the start: the opening messages and the tools it may call."""

    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]


@dataclass(frozen=True)
class StepResult:
    """The tool messages one assistant turn produced, and whether the episode is over."""

    messages: list[dict[str, Any]]
    done: bool
    finish_reason: str | None = None


@dataclass
class _EpisodeState:
    task: Task
    mounted_task: Task  # the task with the whole mounted world as its initial state (what the rubric compares)
    world: MountedWorld
    interface: AgentInterface
    messages: list[dict[str, Any]] = field(default_factory=list)
    calls: list[ToolCallRecord] = field(default_factory=list)
    answer: dict[str, Any] | None = None
    turns: int = 0
    finish_reason: str | None = None


class ToolEnvironment:
    """One episode at a time of CompoWorld tasks over worlds from ``world_factory``."""

    def __init__(self, world_factory: WorldFactory, mode: DiscoverMode = "gateway",
                 max_steps: int = DEFAULT_MAX_STEPS) -> None:
        self.world_factory = world_factory
        self.mode = mode
        self.max_steps = max_steps
        self._episode: _EpisodeState | None = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def reset(self, task: Task) -> Observation:
        """Start an episode of ``task`` on a freshly mounted world (closing the previous one)."""
        self.close()
        world = self.world_factory(task)
        try:
            interface = AgentInterface(task, world, self.mode)
            mounted_task = task.model_copy(update={"initial_state": world.world_state()})
        except BaseException:
            close_world(world)
            raise
        self._episode = _EpisodeState(task=task, mounted_task=mounted_task, world=world, interface=interface,
                                      messages=interface.initial_messages())
        return Observation(messages=list(self._episode.messages), tools=interface.tools)

    def step(self, message: dict[str, Any]) -> StepResult:
        """Record one assistant message and run its tool calls; tool messages come back in call order."""
        episode = self._require()
        if episode.finish_reason is not None:
            raise RuntimeError(f"the episode is over ({episode.finish_reason}): reset first")
        episode.messages.append(message)
        episode.turns += 1
        calls = message.get("tool_calls") or []
        if not calls:
            return self._finish("stop", [])
        shown = []
        for call in calls:
            function = call["function"]
            outcome = episode.interface.execute(function["name"], function["arguments"])
            if outcome.record is not None:
                episode.calls.append(outcome.record)
            if outcome.answer is not None and episode.answer is None:
                episode.answer = outcome.answer
            shown.append({"role": "tool", "tool_call_id": call["id"], "name": function["name"],
                          "content": json.dumps(outcome.result, ensure_ascii=False)})
        episode.messages.extend(shown)
        if episode.answer is not None:
            return self._finish("submitted", shown)
        if episode.turns >= self.max_steps:
            return self._finish("max_steps", shown)
        return StepResult(messages=shown, done=False)

    def end(self, finish_reason: str) -> None:
        """End the episode from outside (the caller's clock ran out, or its model failed)."""
        episode = self._require()
        if episode.finish_reason is None:
            episode.finish_reason = finish_reason

    def score(self) -> list[CriterionResult]:
        """The rubric on the world's current state and the submitted answer (empty when none was)."""
        episode = self._require()
        return evaluate_rubric(episode.mounted_task, episode.world.world_state(), episode.answer or {})

    def trajectory(self, policy: str, rollout_idx: int = 0, meta: dict[str, Any] | None = None) -> Trajectory:
        """What the episode did (never how long it took), with the versions of the services it ran on."""
        episode = self._require()
        return Trajectory(task_id=episode.task.task_id, policy=policy, rollout_idx=rollout_idx,
                          messages=list(episode.messages), tools=episode.interface.tools, calls=list(episode.calls),
                          final_answer=episode.answer or {},
                          final_state_hash=episode.world.world_state().content_hash(),
                          finish_reason=episode.finish_reason or "max_steps", discover_mode=self.mode,
                          meta={**(meta or {}), "environment": environment_versions(episode.world)})

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self._require().messages)

    @property
    def answer(self) -> dict[str, Any] | None:
        return self._require().answer

    def close(self) -> None:
        if self._episode is not None:
            close_world(self._episode.world)
            self._episode = None

    def _finish(self, reason: str, shown: list[dict[str, Any]]) -> StepResult:
        self._require().finish_reason = reason
        return StepResult(messages=shown, done=True, finish_reason=reason)

    def _require(self) -> _EpisodeState:
        if self._episode is None:
            raise RuntimeError("no episode: call reset(task) first")
        return self._episode
