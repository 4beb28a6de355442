"""Episode budgets derived from the tasks: what the oracle needs, plus slack.

A limit below what a task needs cuts episodes silently: a 96-token turn ends a 140-token tool
call mid-JSON, four turns end a five-turn plan before ``submit_answer``. So the limits a model
gets (assistant turns, tokens per turn, generated tokens per episode) are measured, not guessed:
the oracle (the task's own plan) plays every task in the one :class:`ToolEnvironment`, each of
its assistant turns is counted in tokens as a model would write it, and :func:`derive_budget`
adds slack to the largest needs of the set. :func:`exceeded` names every need a given budget
does not meet, so a self-test under the model's limits detects a limit set too low.

Token counts come from the model's tokenizer where one is at hand (``count_tokens``: text →
tokens); otherwise :func:`estimated_tokens` assumes :data:`CHARS_PER_TOKEN` characters per token,
the low end measured on the oracle's own turns with SmolLM2's tokenizer (tool-call JSON is dense:
ids, braces and quotes), so an estimate errs towards a larger budget.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from compoworld_assets.engine.agents.interface import DiscoverMode
from compoworld_assets.engine.agents.world import WorldFactory
from compoworld_assets.engine.rollout.engine import run_rollouts
from compoworld_assets.engine.rollout.policy import OraclePolicy
from compoworld_assets.engine.tasks.model import Task, Trajectory

TokenCounter = Callable[[str], int]
CHARS_PER_TOKEN = 2.0
END_OF_TURN_TOKENS = 1  # the stop token that closes a turn is generated too


def estimated_tokens(text: str) -> int:
    """Tokens of ``text`` at :data:`CHARS_PER_TOKEN` characters per token, rounded up."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def assistant_text(message: dict[str, Any]) -> str:
    """What a model writes for an assistant message: its text, then each call as tagged JSON.

    The form the training chat template renders and
    :func:`~compoworld_assets.engine.rollout.llm.parse_content_tool_calls` reads back.
    """
    parts = [message.get("content") or ""]
    for call in message.get("tool_calls") or []:
        function = call.get("function", call)
        arguments = function.get("arguments")
        arguments = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
        parts.append(f'<tool_call>{{"name": {json.dumps(function["name"], ensure_ascii=False)}, '
                     f'"arguments": {arguments}}}</tool_call>')
    return "".join(parts)


@dataclass(frozen=True)
class EpisodeNeed:
    """What one finished episode took: assistant turns and generated tokens, and the tool results it was shown."""

    task_id: str
    turns: int
    max_turn_tokens: int
    completion_tokens: int
    max_tool_result_tokens: int
    finish_reason: str

    @property
    def finished(self) -> bool:
        return self.finish_reason == "submitted"


@dataclass(frozen=True)
class Slack:
    """How far budgets reach beyond the oracle: ``factor`` × its need, plus ``tokens`` per turn and episode.

    A model rarely plays the plan as tersely as the oracle: it may write a sentence before a call,
    format JSON differently or need a turn to recover from a wrong call.
    """

    factor: float = 1.5
    tokens: int = 32


DEFAULT_SLACK = Slack()


@dataclass(frozen=True)
class EpisodeBudget:
    """The limits an agent gets. ``max_tool_result_tokens`` None: tool results are shown whole."""

    max_steps: int
    max_tokens: int
    max_completion_tokens: int
    max_tool_result_tokens: int | None = None

    def as_dict(self) -> dict[str, int | None]:
        return {"max_steps": self.max_steps, "max_tokens": self.max_tokens,
                "max_completion_tokens": self.max_completion_tokens,
                "max_tool_result_tokens": self.max_tool_result_tokens}


def episode_need(trajectory: Trajectory, count_tokens: TokenCounter = estimated_tokens) -> EpisodeNeed:
    """The turns and tokens of ``trajectory``'s assistant messages and the length of its tool results."""
    turns = [count_tokens(assistant_text(m)) + END_OF_TURN_TOKENS
             for m in trajectory.messages if m.get("role") == "assistant"]
    results = [count_tokens(str(m.get("content") or "")) for m in trajectory.messages if m.get("role") == "tool"]
    return EpisodeNeed(task_id=trajectory.task_id, turns=len(turns), max_turn_tokens=max(turns, default=0),
                       completion_tokens=sum(turns), max_tool_result_tokens=max(results, default=0),
                       finish_reason=trajectory.finish_reason)


def oracle_step_bound(tasks: Sequence[Task]) -> int:
    """Turns enough for the oracle on every task in either mode (gateway: list services, then per step
    at most list tools, describe and call; then submit)."""
    return 2 + 3 * max((len(t.plan.steps) for t in tasks), default=0)


def oracle_trajectories(tasks: Sequence[Task], world_factory: WorldFactory, mode: DiscoverMode,
                        max_steps: int | None = None, concurrency: int = 4) -> list[Trajectory]:
    """The oracle's episodes of ``tasks`` (at most ``max_steps`` turns each; default: enough for any plan)."""
    steps = oracle_step_bound(tasks) if max_steps is None else max_steps
    return asyncio.run(run_rollouts(list(tasks), OraclePolicy, world_factory, mode=mode, concurrency=concurrency,
                                    max_steps=steps))


def oracle_needs(tasks: Sequence[Task], world_factory: WorldFactory, mode: DiscoverMode,
                 count_tokens: TokenCounter = estimated_tokens, concurrency: int = 4) -> list[EpisodeNeed]:
    """What the oracle needs on each task in ``mode``; raises when it cannot finish one (a broken task)."""
    needs = [episode_need(t, count_tokens) for t in oracle_trajectories(tasks, world_factory, mode,
                                                                        concurrency=concurrency)]
    unfinished = [f"{n.task_id} ({n.finish_reason})" for n in needs if not n.finished]
    if unfinished:
        raise ValueError(f"the oracle did not submit an answer on {len(unfinished)} of {len(needs)} tasks: "
                         + ", ".join(unfinished[:5]))
    return needs


def derive_budget(needs: Sequence[EpisodeNeed], slack: Slack = DEFAULT_SLACK) -> EpisodeBudget:
    """One budget for a set of episodes: the largest need of each kind, times ``slack.factor``, plus tokens."""
    if not needs:
        raise ValueError("no episodes to derive a budget from")
    return EpisodeBudget(
        max_steps=math.ceil(max(n.turns for n in needs) * slack.factor),
        max_tokens=math.ceil(max(n.max_turn_tokens for n in needs) * slack.factor) + slack.tokens,
        max_completion_tokens=math.ceil(max(n.completion_tokens for n in needs) * slack.factor) + slack.tokens)


def exceeded(need: EpisodeNeed, budget: EpisodeBudget) -> list[str]:
    """Every way ``budget`` falls short of ``need`` (empty when the episode fits)."""
    shortfalls = []
    if need.turns > budget.max_steps:
        shortfalls.append(f"needs {need.turns} turns > max_steps {budget.max_steps}")
    if need.max_turn_tokens > budget.max_tokens:
        shortfalls.append(f"a turn needs {need.max_turn_tokens} tokens > max_tokens {budget.max_tokens}")
    if need.completion_tokens > budget.max_completion_tokens:
        shortfalls.append(f"needs {need.completion_tokens} generated tokens > max_completion_tokens "
                          f"{budget.max_completion_tokens}")
    if budget.max_tool_result_tokens is not None and need.max_tool_result_tokens > budget.max_tool_result_tokens:
        shortfalls.append(f"a tool result has {need.max_tool_result_tokens} tokens > max_tool_result_tokens "
                          f"{budget.max_tool_result_tokens}")
    return shortfalls


def largest_needs(needs: Sequence[EpisodeNeed]) -> dict[str, int]:
    """Per budget field, the most any of ``needs`` takes of it."""
    return {"max_steps": max((n.turns for n in needs), default=0),
            "max_tokens": max((n.max_turn_tokens for n in needs), default=0),
            "max_completion_tokens": max((n.completion_tokens for n in needs), default=0),
            "max_tool_result_tokens": max((n.max_tool_result_tokens for n in needs), default=0)}


def fit_budget(needs: Sequence[EpisodeNeed], slack: Slack = DEFAULT_SLACK, on_short: str = "extend",
               **limits: int | None) -> tuple[EpisodeBudget, list[str]]:
    """The derived budget with the limits set explicitly (``name=value``) in its place, and what was changed.

    A limit below what the oracle needs on some episode is raised to the derived value
    (``on_short="extend"``, noted in the returned list) or stops the run (``"raise"``).
    """
    if on_short not in ("extend", "raise"):
        raise ValueError(f"on_short must be 'extend' or 'raise', not {on_short!r}")
    derived = derive_budget(needs, slack)
    largest = largest_needs(needs)
    short = {name: value for name, value in limits.items() if value is not None and value < largest[name]}
    notes = [f"{name}={value} is below the oracle's need of {largest[name]}" for name, value in sorted(short.items())]
    if short and on_short == "raise":
        raise ValueError("; ".join(notes) + " (leave these limits unset to derive them from the tasks)")
    kept = {name: value for name, value in limits.items() if name not in short}
    extended = [f"{note}: using {_shown(getattr(derived, name))}" for note, name in zip(notes, sorted(short),
                                                                                      strict=True)]
    return with_overrides(derived, **kept), extended


def _shown(limit: int | None) -> str:
    return "whole results" if limit is None else str(limit)


def with_overrides(budget: EpisodeBudget, **limits: int | None) -> EpisodeBudget:
    """``budget`` with the limits set explicitly (``name=value``, value not None) taking their place."""
    return replace(budget, **{name: value for name, value in limits.items() if value is not None})
