"""The Completion-Focused Rubric Reward: its properties and the TRL-shaped adapter."""

import functools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compoworld_assets.engine.rewards import cfrr_reward, completion_focused_reward
from compoworld_assets.engine.tasks.model import CriterionResult

BONUS = 0.1


@st.composite
def groups(draw, min_criteria=1):
    n_criteria = draw(st.integers(min_criteria, 6))
    n_rollouts = draw(st.integers(1, 8))
    row = st.lists(st.booleans(), min_size=n_criteria, max_size=n_criteria)
    return draw(st.lists(row, min_size=n_rollouts, max_size=n_rollouts))


weights_for = functools.partial(st.lists, st.floats(0.1, 5.0))


@given(groups())
def test_rewards_lie_between_zero_and_one_plus_bonus_and_are_deterministic(group):
    rewards = completion_focused_reward(group, full_completion_bonus=BONUS)
    assert len(rewards) == len(group)
    assert all(0.0 <= r <= 1.0 + BONUS for r in rewards)
    assert rewards == completion_focused_reward([list(row) for row in group], full_completion_bonus=BONUS)


@given(st.integers(1, 6), st.integers(1, 5), st.data())
def test_equal_pass_rates_reduce_to_the_plain_fraction(n_criteria, n_rollouts, data):
    """Rotations of one row give every criterion the same pass rate."""
    base = data.draw(st.lists(st.booleans(), min_size=n_criteria, max_size=n_criteria))
    group = [base[k:] + base[:k] for k in range(n_criteria)] * n_rollouts
    for row, reward in zip(group, completion_focused_reward(group, full_completion_bonus=BONUS), strict=True):
        expected = sum(row) / n_criteria + (BONUS if all(row) else 0.0)
        assert reward == pytest.approx(expected)


@given(groups(), st.data())
def test_a_superset_of_passed_criteria_never_earns_less(group, data):
    weights = data.draw(weights_for(min_size=len(group[0]), max_size=len(group[0])))
    rewards = completion_focused_reward(group, weights, full_completion_bonus=BONUS)
    for i, a in enumerate(group):
        for j, b in enumerate(group):
            if all(x >= y for x, y in zip(a, b, strict=True)):
                assert rewards[i] >= rewards[j] - 1e-12


@given(groups(min_criteria=2))
def test_rarer_criteria_weigh_more(group):
    """A rollout passing only criterion j earns more the rarer j was in the group."""
    n = len(group[0])
    probes = [[k == j for k in range(n)] for j in range(n)]
    rewards = completion_focused_reward(group + probes, full_completion_bonus=0.0)[len(group):]
    rates = [sum(row[j] for row in group + probes) / len(group + probes) for j in range(n)]
    for a in range(n):
        for b in range(n):
            if rates[a] < rates[b]:
                assert rewards[a] > rewards[b]


def test_rubric_weights_scale_criteria_and_the_bonus_needs_every_criterion():
    group = [[True, False], [False, True]]
    plain = completion_focused_reward(group)
    weighted = completion_focused_reward(group, weights=[3.0, 1.0])
    assert plain == pytest.approx([0.5, 0.5])
    assert weighted == pytest.approx([0.75, 0.25])
    assert completion_focused_reward([[True, True], [True, False]], full_completion_bonus=0.2)[0] == \
        pytest.approx(1.2)


def test_a_worked_example():
    group = [[True, True, False], [True, False, False], [True, False, False], [True, False, True]]
    # pass rates 1, .25, .25 -> raw .05, .8, .8 -> normalised .05/1.65, .8/1.65, .8/1.65
    rewards = completion_focused_reward(group, epsilon=0.05, full_completion_bonus=0.1)
    assert rewards == pytest.approx([0.85 / 1.65, 0.05 / 1.65, 0.05 / 1.65, 0.85 / 1.65])


def test_invalid_groups_are_rejected():
    assert completion_focused_reward([]) == []
    assert completion_focused_reward([[], []]) == [0.0, 0.0]
    with pytest.raises(ValueError, match="same criteria"):
        completion_focused_reward([[True], [True, False]])
    with pytest.raises(ValueError, match="weights"):
        completion_focused_reward([[True, False]], weights=[1.0])
    with pytest.raises(ValueError, match="not all zero"):
        completion_focused_reward([[True, False]], weights=[0.0, 0.0])
    with pytest.raises(ValueError, match="epsilon"):
        completion_focused_reward([[True]], epsilon=0.0)


def test_trl_adapter_groups_by_task_id():
    results = [[True, False], [False, False], [True, True], [True, False]]
    task_ids = ["a", "a", "b", "b"]
    rewards = cfrr_reward(["p"] * 4, ["c"] * 4, criterion_results=results, task_id=task_ids)
    expected = completion_focused_reward(results[:2]) + completion_focused_reward(results[2:])
    assert rewards == pytest.approx(expected)
    assert rewards != pytest.approx(completion_focused_reward(results))


def test_trl_adapter_groups_by_num_generations_and_aligns_criteria_by_id():
    rows = [
        [CriterionResult(id="s1", passed=True), CriterionResult(id="a1", passed=False)],
        [{"id": "a1", "passed": True}, {"id": "s1", "passed": True}],
        [{"id": "s1", "passed": False}, {"id": "a1", "passed": False}],
        [{"id": "s1", "passed": True}, {"id": "a1", "passed": False}],
    ]
    reward = functools.partial(cfrr_reward, num_generations=2)
    rewards = reward(["p"] * 4, ["c"] * 4, criterion_results=rows,
                     criterion_weights=[{"s1": 1.0, "a1": 2.0}] * 4)
    first = completion_focused_reward([[True, False], [True, True]], weights=[1.0, 2.0])
    second = completion_focused_reward([[False, False], [True, False]], weights=[1.0, 2.0])
    assert rewards == pytest.approx(first + second)


def test_trl_adapter_rejects_missing_or_mismatched_columns():
    with pytest.raises(ValueError, match="criterion_results"):
        cfrr_reward(["p"], ["c"])
    with pytest.raises(ValueError, match="different criteria"):
        cfrr_reward(["p"] * 2, ["c"] * 2,
                    criterion_results=[[{"id": "x", "passed": True}], [{"id": "y", "passed": True}]])
    with pytest.raises(ValueError, match="multiple"):
        cfrr_reward(["p"] * 3, ["c"] * 3, criterion_results=[[True]] * 3, num_generations=2)
