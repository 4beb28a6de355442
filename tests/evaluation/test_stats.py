"""The variance protocol: bootstrap intervals, per-item seed averaging and pass^k."""

import random

import pytest

from compoworld_assets.engine.evaluation.stats import (
    bootstrap_ci,
    estimate,
    items_to_detect,
    paired_difference,
    pass_hat_k,
    pass_hat_k_item,
    percentile,
)


def test_percentile_interpolates_like_numpy():
    assert percentile([0.0, 1.0, 2.0, 3.0], 0.5) == 1.5
    assert percentile([5.0], 0.9) == 5.0


def test_constant_scores_have_a_zero_width_interval():
    assert bootstrap_ci([1.0] * 12, seed=3) == (1.0, 1.0)
    assert bootstrap_ci([0.4], seed=3) == (0.4, 0.4)


def test_interval_is_seeded_ordered_and_shrinks_with_more_items():
    rng = random.Random(0)
    small = [float(rng.random() < 0.5) for _ in range(20)]
    large = [float(rng.random() < 0.5) for _ in range(400)]
    assert bootstrap_ci(small, seed=1) == bootstrap_ci(small, seed=1)
    low, high = bootstrap_ci(small, seed=1)
    assert low <= sum(small) / len(small) <= high
    large_low, large_high = bootstrap_ci(large, seed=1)
    assert large_high - large_low < high - low


def test_known_case_half_successes():
    """40 items, 20 successes: the 95% interval of the mean is about 0.5 ± 1.96·sqrt(0.25/40) ≈ [0.345, 0.655]."""
    low, high = bootstrap_ci([1.0] * 20 + [0.0] * 20, seed=0, resamples=4000)
    assert low == pytest.approx(0.345, abs=0.03) and high == pytest.approx(0.655, abs=0.03)


def test_coverage_on_synthetic_bernoulli_data():
    """Over 200 synthetic samples of 60 Bernoulli(0.3) items the 95% interval covers 0.3 about 95% of the time."""
    rng = random.Random(7)
    covered = 0
    for trial in range(200):
        values = [float(rng.random() < 0.3) for _ in range(60)]
        low, high = bootstrap_ci(values, seed=trial, resamples=400)
        covered += low <= 0.3 <= high
    assert 0.88 <= covered / 200 <= 0.99


def test_estimate_averages_seeds_within_items_and_resamples_items():
    scores = {"b": [1.0, 0.0], "a": [1.0, 1.0], "c": [0.0, 0.0]}
    result = estimate(scores, seed=0)
    assert result.mean == pytest.approx(0.5)
    assert (result.n, result.k) == (3, 2)
    assert 0.0 <= result.ci_low <= 0.5 <= result.ci_high <= 1.0


def test_pass_hat_k_counts_only_items_solved_every_time():
    assert pass_hat_k_item(successes=3, tries=3, k=3) == 1.0
    assert pass_hat_k_item(successes=2, tries=3, k=3) == 0.0
    assert pass_hat_k_item(successes=2, tries=4, k=2) == pytest.approx(1 / 6)
    result = pass_hat_k({"a": [1.0, 1.0], "b": [1.0, 0.0], "c": [0.5, 1.0], "d": [1, 1]})
    assert result.mean == pytest.approx(0.5) and result.k == 2 and result.n == 4
    with pytest.raises(ValueError):
        pass_hat_k_item(successes=1, tries=2, k=3)


def test_paired_difference_pairs_items_and_calls_a_consistent_gain_significant():
    """40 shared items: the candidate gains on 12 and loses on none; items only one side scored are ignored."""
    baseline = {f"t{i}": [0.0, 0.0] for i in range(40)} | {"only_base": [1.0, 1.0]}
    candidate = {f"t{i}": [1.0, 1.0] if i < 12 else [0.0, 0.0] for i in range(40)} | {"only_new": [0.0, 0.0]}
    diff = paired_difference(baseline, candidate, seed=0)
    assert (diff.n, diff.k) == (40, 2) and diff.mean == pytest.approx(0.3)
    assert 0 < diff.ci_low <= diff.mean <= diff.ci_high
    assert paired_difference(baseline, candidate, seed=0) == diff


def test_paired_difference_of_a_model_with_itself_is_exactly_zero_and_needs_shared_items():
    scores = {f"t{i}": [float(i % 3 == 0)] for i in range(30)}
    same = paired_difference(scores, scores)
    assert (same.mean, same.ci_low, same.ci_high) == (0.0, 0.0, 0.0)
    with pytest.raises(ValueError, match="share no item"):
        paired_difference({"a": [1.0]}, {"b": [1.0]})


def test_items_to_detect_matches_the_textbook_count_and_shrinks_with_the_difference():
    assert items_to_detect(0.30, 0.35) == 1377  # 1,376-1,377 per arm in the usual two-proportion tables
    assert items_to_detect(0.30, 0.40) < items_to_detect(0.30, 0.35) < items_to_detect(0.30, 0.33)
    assert items_to_detect(0.30, 0.35, power=0.9) > items_to_detect(0.30, 0.35)
    with pytest.raises(ValueError):
        items_to_detect(0.3, 0.3)
