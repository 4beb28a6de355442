"""The variance protocol: k seeds per item, pass^k, and seeded bootstrap confidence intervals.

Scores arrive as ``item id -> [score under seed 1, ..., score under seed k]``. Items are the
unit of resampling: the bootstrap draws items with replacement and keeps each item's k seeds
together, so the interval reflects both the item sample and the seed spread without treating
the k runs of one item as independent.

``pass^k`` (τ-bench): the chance that k independent tries of an item all succeed, estimated per
item without bias as C(c, k) / C(n, k) from c successes in n tries, then averaged over items.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

DEFAULT_RESAMPLES = 2000
DEFAULT_CONFIDENCE = 0.95


@dataclass(frozen=True)
class Estimate:
    """A mean over items with its bootstrap interval; ``n`` items, ``k`` seeds per item."""

    mean: float
    ci_low: float
    ci_high: float
    n: int
    k: int

    def as_dict(self) -> dict[str, float | int]:
        return asdict(self)

    def __str__(self) -> str:
        return f"{self.mean:.3f} [{self.ci_low:.3f}, {self.ci_high:.3f}] (n={self.n}, k={self.k})"


def mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values) if values else math.nan


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """Linear-interpolation percentile (numpy's default) of already sorted values, ``q`` in [0, 1]."""
    if not sorted_values:
        return math.nan
    position = q * (len(sorted_values) - 1)
    lower = math.floor(position)
    upper = min(lower + 1, len(sorted_values) - 1)
    return sorted_values[lower] + (sorted_values[upper] - sorted_values[lower]) * (position - lower)


def bootstrap_ci(values: Sequence[float], seed: int = 0, resamples: int = DEFAULT_RESAMPLES,
                 confidence: float = DEFAULT_CONFIDENCE) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``values``; the same seed gives the same interval.

    The bounds are widened to contain the sample mean when a skewed resample distribution puts
    it outside (rare), so ``ci_low <= mean <= ci_high`` always holds.
    """
    if not values:
        return math.nan, math.nan
    rng = random.Random(seed)
    size = len(values)
    means = sorted(mean([values[rng.randrange(size)] for _ in range(size)]) for _ in range(resamples))
    tail = (1.0 - confidence) / 2.0
    low, high = percentile(means, tail), percentile(means, 1.0 - tail)
    centre = mean(values)
    return min(low, centre), max(high, centre)


def item_means(scores: Mapping[str, Sequence[float]]) -> list[float]:
    """Each item's mean over its seeds, items in sorted id order."""
    return [mean(scores[item]) for item in sorted(scores)]


def seeds_per_item(scores: Mapping[str, Sequence[float]]) -> int:
    """k: the smallest number of seeds any item was scored under (0 without items)."""
    return min((len(v) for v in scores.values()), default=0)


def estimate(scores: Mapping[str, Sequence[float]], seed: int = 0, resamples: int = DEFAULT_RESAMPLES,
             confidence: float = DEFAULT_CONFIDENCE) -> Estimate:
    """Mean over items of each item's mean over seeds, with a bootstrap interval over items."""
    per_item = item_means(scores)
    low, high = bootstrap_ci(per_item, seed, resamples, confidence)
    return Estimate(mean=mean(per_item), ci_low=low, ci_high=high, n=len(per_item), k=seeds_per_item(scores))


def pass_hat_k_item(successes: int, tries: int, k: int) -> float:
    """Unbiased per-item estimate of P(k tries all succeed) from ``successes`` out of ``tries``."""
    if not 0 < k <= tries:
        raise ValueError(f"pass^k needs 0 < k <= tries, got k={k}, tries={tries}")
    return math.comb(successes, k) / math.comb(tries, k)


def pass_hat_k(successes: Mapping[str, Sequence[bool | float]], k: int | None = None, seed: int = 0,
               resamples: int = DEFAULT_RESAMPLES, confidence: float = DEFAULT_CONFIDENCE) -> Estimate:
    """pass^k over items (``k`` defaults to the number of seeds per item), with a bootstrap interval.

    A try counts as a success when its score is 1 (scores in between are partial credit, not success).
    """
    k = k or seeds_per_item(successes)
    per_item = [pass_hat_k_item(sum(1 for s in successes[item] if float(s) >= 1.0), len(successes[item]), k)
                for item in sorted(successes)]
    low, high = bootstrap_ci(per_item, seed, resamples, confidence)
    return Estimate(mean=mean(per_item), ci_low=low, ci_high=high, n=len(per_item), k=k)


def paired_difference(baseline: Mapping[str, Sequence[float]], candidate: Mapping[str, Sequence[float]],
                      seed: int = 0, resamples: int = DEFAULT_RESAMPLES,
                      confidence: float = DEFAULT_CONFIDENCE) -> Estimate:
    """``candidate`` minus ``baseline`` over the items both scored: the mean of the per-item differences of
    their seed means, with a bootstrap interval over those items.

    Pairing by item removes the spread between items that both models share (an easy task is easy for
    both), so the interval is narrower than comparing two independent intervals. A difference is
    significant at ``confidence`` when the interval excludes 0.
    """
    items = sorted(set(baseline) & set(candidate))
    if not items:
        raise ValueError("the two score sets share no item")
    differences = [mean(candidate[item]) - mean(baseline[item]) for item in items]
    low, high = bootstrap_ci(differences, seed, resamples, confidence)
    k = min(min(len(baseline[item]), len(candidate[item])) for item in items)
    return Estimate(mean=mean(differences), ci_low=low, ci_high=high, n=len(items), k=k)


def items_to_detect(p_a: float, p_b: float, alpha: float = 0.05, power: float = 0.8) -> int:
    """Held-out items each arm needs to tell success rates ``p_a`` and ``p_b`` apart (two-sided ``alpha``, the
    given power), by the two-proportion normal approximation. Arms scored on the same items (a paired design)
    need fewer when their outcomes agree item by item; this is the count without counting on that."""
    if not (0 < p_a < 1 and 0 < p_b < 1) or p_a == p_b:
        raise ValueError("success rates must differ and lie strictly between 0 and 1")
    from statistics import NormalDist

    z_alpha, z_power = NormalDist().inv_cdf(1 - alpha / 2), NormalDist().inv_cdf(power)
    pooled = (p_a + p_b) / 2
    spread = z_alpha * math.sqrt(2 * pooled * (1 - pooled)) + z_power * math.sqrt(p_a * (1 - p_a) + p_b * (1 - p_b))
    return math.ceil((spread / (p_a - p_b)) ** 2)
