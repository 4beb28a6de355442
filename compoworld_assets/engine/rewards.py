"""The Completion-Focused Rubric Reward (CFRR), a pure GRPO reward that follows the rubric.

A group is ``n`` rollouts of one task, each scored on the task's criteria. ``P`` are the
positive criteria (kinds ``state`` and ``answer``) with rubric weights ``w_j``, ``N`` the
negative ones (traps, ``no_collateral``). For rollout ``i``:

* ``clean_i = all(passed_ij for j in N)``: negatives are gates, never credit;
* ``x_ij = clean_i and passed_ij`` for ``j`` in ``P``: a violator counts as having passed
  nothing, exactly as :func:`~compoworld_assets.engine.tasks.rubrics.rubric_score` zeroes it;
* ``p_j = mean_i x_ij``, the group's pass rate of positive criterion ``j``;
* ``focus_j = epsilon + (1 - p_j)`` when ``p_j > 0``, else ``epsilon``;
* ``omega_j = focus_j * w_j / sum_{k in P} focus_k * w_k``;
* ``reward_i = sum_{j in P} omega_j * x_ij + bonus_i``, where ``bonus_i`` is
  ``full_completion_bonus`` when rollout ``i`` passed every criterion (every positive one and
  no negative violated: the rubric's full success) and 0 otherwise.

A criterion few rollouts passed weighs more, which concentrates the learning signal on the
parts of the task the group has only begun to solve. A criterion no rollout passed, like one
every rollout passed, separates no rollouts, so it keeps only the floor weight ``epsilon``.
Hence, whenever the group agrees on every positive criterion (a single rollout, or identical
rollouts), or all positive criteria share one pass rate, the weights are the rubric's own and
the reward is ``rubric_score`` plus the bonus. Consequences: a rollout that passed no positive
criterion (doing nothing, whatever negatives it passed by inaction) or violated any negative
criterion scores exactly 0; every reward lies in ``[0, 1 + full_completion_bonus]``; full
completion is the best outcome in any group.

The paper's ablation replaces CFRR by the plain rubric fraction: ``focus=False`` (reward name
``rubric`` in :data:`REWARDS`) keeps the rubric's own weights whatever the group's pass rates, so each
rollout scores ``rubric_score`` plus the bonus, with the same gates.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any, Literal, get_args

from compoworld_assets.engine.tasks.rubrics import POSITIVE_KINDS

CRITERION_RESULTS_COLUMN = "criterion_results"
CRITERION_WEIGHTS_COLUMN = "criterion_weights"
CRITERION_KINDS_COLUMN = "criterion_kinds"
NEGATIVE_KIND = "negative"
# GRPO's reward functions by name: the Completion-Focused Rubric Reward and the plain rubric fraction.
RewardName = Literal["cfrr", "rubric"]
REWARDS: tuple[str, ...] = get_args(RewardName)


def completion_focused_reward(group: list[list[bool]], weights: Sequence[float] | None = None,
                              kinds: Sequence[str] | None = None, *, epsilon: float = 0.05,
                              full_completion_bonus: float = 0.1, focus: bool = True) -> list[float]:
    """CFRR for one group (formula in the module docstring): ``group[i][j]`` says whether rollout
    ``i`` passed criterion ``j``.

    ``weights`` are the criteria's rubric weights (all 1 when None) and ``kinds`` their rubric
    kinds, ``state``, ``answer`` or ``negative`` (all positive when None). A negative criterion's
    weight is ignored: it only gates. A group without positive criteria gives every rollout 0,
    as ``rubric_score`` does. ``focus=False`` is the plain rubric fraction (module docstring).
    """
    if epsilon <= 0:
        raise ValueError("epsilon must be positive so that every criterion keeps some weight")
    if full_completion_bonus < 0:
        raise ValueError("full_completion_bonus must not be negative")
    if not group:
        return []
    n_criteria = len(group[0])
    if any(len(row) != n_criteria for row in group):
        raise ValueError("every rollout of a group must be scored on the same criteria")
    own = [1.0] * n_criteria if weights is None else [float(w) for w in weights]
    kind_of = ["state"] * n_criteria if kinds is None else list(kinds)
    if len(own) != n_criteria or len(kind_of) != n_criteria:
        raise ValueError(f"{len(own)} weights and {len(kind_of)} kinds for {n_criteria} criteria")
    if unknown := set(kind_of) - POSITIVE_KINDS - {NEGATIVE_KIND}:
        raise ValueError(f"unknown criterion kinds {sorted(unknown)}")
    positive = [j for j, kind in enumerate(kind_of) if kind != NEGATIVE_KIND]
    negative = [j for j, kind in enumerate(kind_of) if kind == NEGATIVE_KIND]
    if not positive:
        return [0.0] * len(group)
    if any(w < 0 or not math.isfinite(w) for w in own) or not any(own[j] > 0 for j in positive):
        raise ValueError("criterion weights must be finite, non-negative and not all zero on positive criteria")
    gated = [[bool(row[j]) and all(bool(row[k]) for k in negative) for j in positive] for row in group]
    rates = [sum(row[c] for row in gated) / len(group) for c in range(len(positive))]
    raw = [(_focus(rate, epsilon) if focus else 1.0) * own[j] for rate, j in zip(rates, positive, strict=True)]
    total = math.fsum(raw)
    rewards = []
    for row, passes in zip(group, gated, strict=True):
        fraction = min(1.0, math.fsum(r for r, passed in zip(raw, passes, strict=True) if passed) / total)
        rewards.append(fraction + (full_completion_bonus if all(row) else 0.0))
    return rewards


def _focus(pass_rate: float, epsilon: float) -> float:
    """``epsilon + 1 - pass_rate``, but only ``epsilon`` for a criterion no rollout passed: like one
    every rollout passed, it separates no rollouts, and so a group that agrees on every criterion
    keeps the rubric's own weights."""
    return epsilon + (1.0 - pass_rate) if pass_rate > 0 else epsilon


def cfrr_reward(prompts: list[Any], completions: list[Any], completion_ids: list[Any] | None = None,
                **kwargs: Any) -> list[float]:
    """A TRL-shaped reward function (``GRPOTrainer(reward_funcs=[cfrr_reward])``).

    Reads, per completion, the column ``criterion_results`` (a list of booleans, or of
    ``{"id", "passed"}`` mappings / ``CriterionResult`` objects, aligned by id), the column
    ``criterion_kinds`` (each criterion's rubric kind, required because negative criteria gate
    instead of counting) and optionally ``criterion_weights`` (the rubric weights); kinds and
    weights are lists in the booleans' order or id → value mappings.
    Completions are grouped into contiguous blocks of equal ``task_id`` when that column is
    present, else into blocks of ``num_generations`` (bind it with ``functools.partial``), else
    the whole batch is one group. ``epsilon``, ``full_completion_bonus`` and ``focus`` may be passed too.
    """
    results = kwargs.get(CRITERION_RESULTS_COLUMN)
    kinds_column = kwargs.get(CRITERION_KINDS_COLUMN)
    for name, column in ((CRITERION_RESULTS_COLUMN, results), (CRITERION_KINDS_COLUMN, kinds_column)):
        if column is None:
            raise ValueError(f"cfrr_reward needs the {name!r} column")
    if len(results) != len(completions):
        raise ValueError(f"{len(results)} criterion results for {len(completions)} completions")
    weights_column = kwargs.get(CRITERION_WEIGHTS_COLUMN)
    options = {k: kwargs[k] for k in ("epsilon", "full_completion_bonus", "focus") if k in kwargs}
    rewards: list[float] = []
    for start, stop in _group_bounds(len(completions), kwargs.get("task_id"), kwargs.get("num_generations")):
        ids, group = _aligned_group(results[start:stop], start)
        weights = None if weights_column is None else [float(w) for w in _ordered(weights_column[start], ids)]
        kinds = [str(k) for k in _ordered(kinds_column[start], ids)]
        rewards.extend(completion_focused_reward(group, weights, kinds, **options))
    return rewards


def reward_function(name: str, *, epsilon: float = 0.05, full_completion_bonus: float = 0.1) -> Any:
    """The TRL reward function called ``name`` (:data:`REWARDS`): ``cfrr`` or the plain ``rubric`` fraction."""
    if name not in REWARDS:
        raise ValueError(f"unknown reward {name!r}: one of {', '.join(REWARDS)}")
    reward = partial(cfrr_reward, epsilon=epsilon, full_completion_bonus=full_completion_bonus, focus=name == "cfrr")
    reward.__name__ = name  # TRL logs each reward function's metrics under its name
    return reward


def _group_bounds(n: int, task_ids: Sequence[Any] | None, num_generations: int | None) -> list[tuple[int, int]]:
    if task_ids is not None:
        bounds, start = [], 0
        for i in range(1, n + 1):
            if i == n or task_ids[i] != task_ids[start]:
                bounds.append((start, i))
                start = i
        return bounds
    if num_generations:
        if n % num_generations:
            raise ValueError(f"{n} completions are not a multiple of num_generations={num_generations}")
        return [(s, s + num_generations) for s in range(0, n, num_generations)]
    return [(0, n)] if n else []


def _ordered(values: Sequence[Any] | Mapping[str, Any], ids: list[str] | None) -> list[Any]:
    """Per-criterion values in the group's criterion order: a list as given, a mapping by id."""
    if isinstance(values, Mapping):
        if ids is None:
            raise ValueError("values given by criterion id need criterion results that carry ids")
        return [values[i] for i in ids]
    return list(values)


def _aligned_group(results: Sequence[Sequence[Any]], offset: int) -> tuple[list[str] | None, list[list[bool]]]:
    """Criterion ids (None for plain booleans) in the first row's order, and every row aligned to them."""
    first = results[0]
    if all(isinstance(r, bool) for r in first):
        return None, [[bool(p) for p in row] for row in results]
    ids = [_id_and_pass(r)[0] for r in first]
    group = []
    for i, row in enumerate(results):
        passes = dict(_id_and_pass(r) for r in row)
        if sorted(passes) != sorted(ids):
            raise ValueError(f"completions {offset} and {offset + i} were scored on different criteria")
        group.append([passes[c] for c in ids])
    return ids, group


def _id_and_pass(result: Any) -> tuple[str, bool]:
    if isinstance(result, Mapping):
        return str(result["id"]), bool(result["passed"])
    return str(result.id), bool(result.passed)
