"""Difficulty that means something: features of the plan and the task, and a level from them.

Features: ``length`` (calls), ``services``, ``write_steps``, ``lookups`` (list or search calls:
the agent must find a record from what it knows), ``chained_values`` (arguments taken from an
earlier result), ``user_known_values``, ``discovery`` (services the agent must find and choose
tools in itself: all of them for a goal-stated task, none for an explicit one), ``traps`` (house
rules the obvious plan breaks), ``distractors`` and the ``instruction_style``.

The level adds points: one per call beyond two, per service beyond two and per look-up, one for
a goal-stated instruction and two per trap; ``easy`` up to :data:`EASY_MAX`, ``hard`` from
:data:`HARD_MIN`. :func:`plan_level` is the same count before traps are known (a lower bound),
which the sampler uses to aim at a mix of levels.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from compoworld_assets.engine.specs.model import Effect, ServiceSpec
from compoworld_assets.engine.tasks.model import Plan, Task

LEVELS = ("easy", "medium", "hard")
EASY_MAX = 2
HARD_MIN = 6
LOOKUP_EFFECTS = frozenset({Effect.LIST, Effect.SEARCH})


def plan_features(plan: Plan, specs: Mapping[str, ServiceSpec], style: str = "goal") -> dict[str, Any]:
    tools = [specs[s.service_id].tool(s.tool) for s in plan.steps]
    bindings = [b for s in plan.steps for b in s.args.values()]
    services = len(plan.services)
    return {
        "length": len(plan.steps),
        "services": services,
        "write_steps": sum(t.changes_state for t in tools),
        "lookups": sum(t.effect in LOOKUP_EFFECTS for t in tools),
        "chained_values": sum(b.kind == "step_output" for b in bindings),
        "user_known_values": sum(b.kind == "user_known" for b in bindings),
        "discovery": services if style == "goal" else 0,
        "instruction_style": style,
    }


def task_difficulty(task: Task, specs: Mapping[str, ServiceSpec]) -> dict[str, Any]:
    """The features of ``task`` (its gold plan, style, traps and distractors) and its level."""
    features = plan_features(task.plan, specs, task.instruction_style)
    features["traps"] = len(task.traps)
    features["trap_kinds"] = sorted(t.kind for t in task.traps)
    features["distractors"] = len(task.distractor_services)
    features["points"] = points(features)
    features["level"] = level_of(features["points"])
    return features


def points(features: Mapping[str, Any]) -> int:
    return (max(features["length"] - 2, 0) + max(features["services"] - 2, 0) + features["lookups"]
            + (1 if features["instruction_style"] == "goal" else 0) + 2 * features.get("traps", 0))


def level_of(score: int) -> str:
    return "easy" if score <= EASY_MAX else "hard" if score >= HARD_MIN else "medium"


def plan_level(plan: Plan, specs: Mapping[str, ServiceSpec], style: str = "goal") -> str:
    """The level of a plan's task before traps (which can only raise it)."""
    return level_of(points(plan_features(plan, specs, style)))


def parse_mix(mix: Mapping[str, float]) -> dict[str, float]:
    """A level mix normalised to shares that sum to one; unknown levels or negative shares are errors."""
    unknown = sorted(set(mix) - set(LEVELS))
    if unknown or any(v < 0 for v in mix.values()) or not sum(mix.values()):
        raise ValueError(f"a level mix names {LEVELS} with shares >= 0, not all zero; got {dict(mix)}")
    total = sum(mix.values())
    return {level: mix.get(level, 0.0) / total for level in LEVELS}
