"""The Completion-Focused Rubric Reward (CFRR), a pure GRPO reward over rubric criteria.

For a group of rollouts of one task, each scored on the task's criteria, a criterion weighs
more the more rarely the group passed it: ``raw_j = (1 - pass_rate_j + epsilon) * weight_j``,
normalised to sum to one. A rollout's reward is the weighted fraction of criteria it passed,
plus ``full_completion_bonus`` when it passed every criterion. The rare criteria are where
the group disagrees, so this concentrates the learning signal on the parts of the task the
policy has not learned yet, while the bonus keeps full completion the best outcome.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

CRITERION_RESULTS_COLUMN = "criterion_results"
CRITERION_WEIGHTS_COLUMN = "criterion_weights"


def completion_focused_reward(group: list[list[bool]], weights: list[float] | None = None,
                              epsilon: float = 0.05, full_completion_bonus: float = 0.1) -> list[float]:
    """CFRR for one group: ``group[i][j]`` says whether rollout ``i`` passed criterion ``j``.

    ``weights`` are the criteria's own rubric weights (all 1 when None). Every reward lies in
    ``[0, 1 + full_completion_bonus]``. A task with no criteria gives every rollout 0.
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
    if n_criteria == 0:
        return [0.0] * len(group)
    own = [1.0] * n_criteria if weights is None else [float(w) for w in weights]
    if len(own) != n_criteria:
        raise ValueError(f"{len(own)} weights for {n_criteria} criteria")
    if any(w < 0 or not math.isfinite(w) for w in own) or not any(w > 0 for w in own):
        raise ValueError("criterion weights must be finite, non-negative and not all zero")
    pass_rates = [sum(bool(row[j]) for row in group) / len(group) for j in range(n_criteria)]
    raw = [(1.0 - rate + epsilon) * w for rate, w in zip(pass_rates, own, strict=True)]
    total = math.fsum(raw)
    normalised = [r / total for r in raw]
    rewards = []
    for row in group:
        fraction = min(1.0, math.fsum(w for w, passed in zip(normalised, row, strict=True) if passed))
        rewards.append(fraction + (full_completion_bonus if all(row) else 0.0))
    return rewards


def cfrr_reward(prompts: list[Any], completions: list[Any], completion_ids: list[Any] | None = None,
                **kwargs: Any) -> list[float]:
    """A TRL-shaped reward function (``GRPOTrainer(reward_funcs=[cfrr_reward])``).

    Reads, per completion, the column ``criterion_results`` (a list of booleans, or of
    ``{"id", "passed"}`` mappings / ``CriterionResult`` objects, aligned by id) and optionally
    ``criterion_weights`` (the rubric weights: a list in the booleans' order, or an id → weight
    mapping).
    Completions are grouped into contiguous blocks of equal ``task_id`` when that column is
    present, else into blocks of ``num_generations`` (bind it with ``functools.partial``), else
    the whole batch is one group. ``epsilon`` and ``full_completion_bonus`` may be passed too.
    """
    results = kwargs.get(CRITERION_RESULTS_COLUMN)
    if results is None:
        raise ValueError(f"cfrr_reward needs the {CRITERION_RESULTS_COLUMN!r} column")
    if len(results) != len(completions):
        raise ValueError(f"{len(results)} criterion results for {len(completions)} completions")
    weights_column = kwargs.get(CRITERION_WEIGHTS_COLUMN)
    options = {k: kwargs[k] for k in ("epsilon", "full_completion_bonus") if k in kwargs}
    rewards: list[float] = []
    for start, stop in _group_bounds(len(completions), kwargs.get("task_id"), kwargs.get("num_generations")):
        ids, group = _aligned_group(results[start:stop], start)
        weights = None if weights_column is None else _ordered_weights(weights_column[start], ids)
        rewards.extend(completion_focused_reward(group, weights, **options))
    return rewards


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


def _ordered_weights(weights: Sequence[float] | Mapping[str, float], ids: list[str] | None) -> list[float]:
    if isinstance(weights, Mapping):
        if ids is None:
            raise ValueError("weights given by criterion id need criterion results that carry ids")
        return [float(weights[i]) for i in ids]
    return [float(w) for w in weights]


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
