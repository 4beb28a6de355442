"""The Completion-Focused Rubric Reward: its properties and the TRL-shaped adapter."""

import functools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compoworld_assets.engine.rewards import REWARDS, cfrr_reward, completion_focused_reward, reward_function
from compoworld_assets.engine.runtime.state import WorldState
from compoworld_assets.engine.tasks.model import Criterion, CriterionResult, Plan, Task
from compoworld_assets.engine.tasks.rubrics import rubric_score

BONUS = 0.1
KINDS = ("state", "answer", "negative")


@st.composite
def rubric_groups(draw, min_criteria=1, max_rollouts=8, negatives=True):
    """(group, weights, kinds): a group's pass matrix over criteria of drawn kinds and weights."""
    n_criteria = draw(st.integers(min_criteria, 6))
    kinds = draw(st.lists(st.sampled_from(KINDS if negatives else KINDS[:2]),
                          min_size=n_criteria, max_size=n_criteria))
    weights = draw(st.lists(st.floats(0.1, 5.0), min_size=n_criteria, max_size=n_criteria))
    n_rollouts = draw(st.integers(1, max_rollouts))
    row = st.lists(st.booleans(), min_size=n_criteria, max_size=n_criteria)
    return draw(st.lists(row, min_size=n_rollouts, max_size=n_rollouts)), weights, kinds


def _task(weights, kinds):
    rubric = [Criterion(id=f"c{j}", kind=kind, description="", weight=w, check={})
              for j, (w, kind) in enumerate(zip(weights, kinds, strict=True))]
    return Task(task_id="t", seed=0, domain="d", services=[], initial_state=WorldState(), instruction="",
                plan=Plan(steps=[]), rubric=rubric)


def _clean(row, kinds):
    return all(passed for passed, kind in zip(row, kinds, strict=True) if kind == "negative")


def _positives(row, kinds):
    return sum(passed for passed, kind in zip(row, kinds, strict=True) if kind != "negative")


@given(rubric_groups())
def test_rewards_lie_between_zero_and_one_plus_bonus_and_are_deterministic(drawn):
    group, weights, kinds = drawn
    rewards = completion_focused_reward(group, weights, kinds, full_completion_bonus=BONUS)
    assert len(rewards) == len(group)
    assert all(0.0 <= r <= 1.0 + BONUS for r in rewards)
    assert rewards == completion_focused_reward([list(row) for row in group], weights, kinds,
                                                full_completion_bonus=BONUS)


@given(rubric_groups())
def test_a_violator_scores_zero_and_never_outranks_a_clean_rollout_with_as_many_positives(drawn):
    group, weights, kinds = drawn
    rewards = completion_focused_reward(group, weights, kinds, full_completion_bonus=BONUS)
    for violator, reward in zip(group, rewards, strict=True):
        if _clean(violator, kinds):
            continue
        assert reward == 0.0
        for clean, clean_reward in zip(group, rewards, strict=True):
            if _clean(clean, kinds) and _positives(clean, kinds) >= _positives(violator, kinds):
                assert clean_reward >= reward


@given(rubric_groups())
def test_groups_that_pass_no_positive_criterion_score_all_zeros(drawn):
    """Doing nothing passes no positive criterion; negatives it passes by inaction earn nothing."""
    group, weights, kinds = drawn
    idle = [[passed and kind == "negative" for passed, kind in zip(row, kinds, strict=True)] for row in group]
    assert completion_focused_reward(idle, weights, kinds, full_completion_bonus=BONUS) == [0.0] * len(group)


@given(rubric_groups(max_rollouts=1))
def test_a_single_rollout_without_bonus_scores_its_rubric_score(drawn):
    group, weights, kinds = drawn
    [reward] = completion_focused_reward(group, weights, kinds, full_completion_bonus=0.0)
    results = [CriterionResult(id=f"c{j}", passed=passed) for j, passed in enumerate(group[0])]
    assert reward == pytest.approx(rubric_score(_task(weights, kinds), results))


@given(rubric_groups(), st.integers(1, 4))
def test_identical_rollouts_score_the_rubric_score_plus_the_bonus_for_full_success(drawn, copies):
    group, weights, kinds = drawn
    row = group[0]
    results = [CriterionResult(id=f"c{j}", passed=passed) for j, passed in enumerate(row)]
    full_success = all(row) and any(kind != "negative" for kind in kinds)
    expected = rubric_score(_task(weights, kinds), results) + (BONUS if full_success else 0.0)
    rewards = completion_focused_reward([row] * copies, weights, kinds, full_completion_bonus=BONUS)
    assert rewards == pytest.approx([expected] * copies)


@given(st.integers(1, 6), st.integers(1, 5), st.data())
def test_equal_pass_rates_reduce_to_the_plain_weighted_fraction(n_criteria, n_rollouts, data):
    """Rotations of one row give every positive criterion the same pass rate among the rollouts that
    passed the appended negative criterion; drawn rollouts that violate it count for nothing."""
    row = st.lists(st.booleans(), min_size=n_criteria, max_size=n_criteria)
    base = data.draw(row)
    weights = data.draw(st.lists(st.floats(0.1, 5.0), min_size=n_criteria, max_size=n_criteria))
    violators = data.draw(st.lists(row, max_size=4))
    rotations = [base[k:] + base[:k] for k in range(n_criteria)] * n_rollouts
    group = [r + [True] for r in rotations] + [r + [False] for r in violators]
    kinds = ["state"] * n_criteria + ["negative"]
    rewards = completion_focused_reward(group, weights + [1.0], kinds, full_completion_bonus=BONUS)
    for passes, reward in zip(group, rewards, strict=True):
        plain = sum(w for w, passed in zip(weights, passes, strict=False) if passed) / sum(weights)
        expected = plain + (BONUS if all(passes) else 0.0) if passes[-1] else 0.0
        assert reward == pytest.approx(expected)


@given(rubric_groups())
def test_a_superset_of_passed_criteria_never_earns_less(drawn):
    group, weights, kinds = drawn
    rewards = completion_focused_reward(group, weights, kinds, full_completion_bonus=BONUS)
    for i, a in enumerate(group):
        for j, b in enumerate(group):
            if all(x >= y for x, y in zip(a, b, strict=True)):
                assert rewards[i] >= rewards[j] - 1e-12


@given(rubric_groups(), st.floats(0.1, 5.0))
def test_negative_criteria_only_gate(drawn, negative_weight):
    """A negative criterion that every rollout passes, whatever its weight, changes no reward."""
    group, weights, kinds = drawn
    rewards = completion_focused_reward(group, weights, kinds, full_completion_bonus=BONUS)
    widened = completion_focused_reward([row + [True] for row in group], weights + [negative_weight],
                                        kinds + ["negative"], full_completion_bonus=BONUS)
    assert widened == pytest.approx(rewards)


@given(rubric_groups(min_criteria=2, negatives=False))
def test_rarer_criteria_weigh_more(drawn):
    """A rollout passing only criterion j earns more the rarer j was in the group."""
    group, _, kinds = drawn
    n = len(group[0])
    probes = [[k == j for k in range(n)] for j in range(n)]
    rewards = completion_focused_reward(group + probes, kinds=kinds, full_completion_bonus=0.0)[len(group):]
    rates = [sum(row[j] for row in group + probes) / len(group + probes) for j in range(n)]
    for a in range(n):
        for b in range(n):
            if rates[a] < rates[b]:
                assert rewards[a] > rewards[b]


def test_the_violator_no_longer_ranks_first():
    """Issue 13: three rollouts do nothing, one passes both positives but breaks ``no_collateral``.

    The reward that weighed the negative like a positive gave [0.158, 0.158, 0.158, 0.842], and a
    group that did nothing 0.023 each."""
    kinds = ["state", "answer", "negative"]
    nothing, violator = [False, False, True], [True, True, False]
    assert completion_focused_reward([nothing] * 3 + [violator], kinds=kinds) == [0.0] * 4
    assert completion_focused_reward([nothing] * 4, kinds=kinds) == [0.0] * 4
    partial = [True, False, True]
    assert completion_focused_reward([nothing] * 2 + [violator, partial], kinds=kinds) == \
        pytest.approx([0.0, 0.0, 0.0, 0.8 / 0.85])


def test_rubric_weights_scale_criteria_and_the_bonus_needs_every_criterion():
    group = [[True, False], [False, True]]
    plain = completion_focused_reward(group)
    weighted = completion_focused_reward(group, weights=[3.0, 1.0])
    assert plain == pytest.approx([0.5, 0.5])
    assert weighted == pytest.approx([0.75, 0.25])
    assert completion_focused_reward([[True, True], [True, False]], full_completion_bonus=0.2)[0] == \
        pytest.approx(1.2)
    only_negatives = completion_focused_reward([[True], [False]], kinds=["negative"], full_completion_bonus=0.2)
    assert only_negatives == [0.0, 0.0]


def test_a_worked_example():
    group = [[True, True, False, True], [True, False, False, True], [True, False, False, True],
             [True, False, True, True], [True, True, True, False]]
    kinds = ["state", "state", "answer", "negative"]
    # the last rollout violates the negative: clean pass rates over 5 are .8, .2, .2
    # -> focus .25, .85, .85 -> total 1.95
    rewards = completion_focused_reward(group, kinds=kinds, epsilon=0.05, full_completion_bonus=0.1)
    assert rewards == pytest.approx([1.1 / 1.95, 0.25 / 1.95, 0.25 / 1.95, 1.1 / 1.95, 0.0])
    # of the first three, all pass the first criterion and none the answer: both keep only epsilon
    rewards = completion_focused_reward(group[:3], kinds=kinds, epsilon=0.05, full_completion_bonus=0.1)
    focus = 0.05 + 2 / 3
    total = 0.05 + focus + 0.05
    assert rewards == pytest.approx([(0.05 + focus) / total, 0.05 / total, 0.05 / total])


def test_invalid_groups_are_rejected():
    assert completion_focused_reward([]) == []
    assert completion_focused_reward([[], []]) == [0.0, 0.0]
    with pytest.raises(ValueError, match="same criteria"):
        completion_focused_reward([[True], [True, False]])
    with pytest.raises(ValueError, match="weights"):
        completion_focused_reward([[True, False]], weights=[1.0])
    with pytest.raises(ValueError, match="kinds"):
        completion_focused_reward([[True, False]], kinds=["state"])
    with pytest.raises(ValueError, match="unknown criterion kinds"):
        completion_focused_reward([[True]], kinds=["bonus"])
    with pytest.raises(ValueError, match="not all zero"):
        completion_focused_reward([[True, False]], weights=[0.0, 0.0])
    with pytest.raises(ValueError, match="not all zero"):
        completion_focused_reward([[True, False]], weights=[0.0, 1.0], kinds=["state", "negative"])
    with pytest.raises(ValueError, match="epsilon"):
        completion_focused_reward([[True]], epsilon=0.0)


def test_trl_adapter_groups_by_task_id():
    results = [[True, False], [False, False], [True, True], [True, False]]
    task_ids = ["a", "a", "b", "b"]
    kinds = [["state", "answer"]] * 4
    rewards = cfrr_reward(["p"] * 4, ["c"] * 4, criterion_results=results, criterion_kinds=kinds, task_id=task_ids)
    expected = completion_focused_reward(results[:2]) + completion_focused_reward(results[2:])
    assert rewards == pytest.approx(expected)
    assert rewards != pytest.approx(completion_focused_reward(results))


def test_trl_adapter_groups_by_num_generations_and_aligns_criteria_by_id():
    rows = [
        [CriterionResult(id="s1", passed=True), CriterionResult(id="a1", passed=False),
         CriterionResult(id="no_collateral", passed=True)],
        [{"id": "a1", "passed": True}, {"id": "s1", "passed": True}, {"id": "no_collateral", "passed": False}],
        [{"id": "s1", "passed": False}, {"id": "a1", "passed": False}, {"id": "no_collateral", "passed": True}],
        [{"id": "s1", "passed": True}, {"id": "no_collateral", "passed": True}, {"id": "a1", "passed": False}],
    ]
    reward = functools.partial(cfrr_reward, num_generations=2)
    rewards = reward(["p"] * 4, ["c"] * 4, criterion_results=rows,
                     criterion_weights=[{"s1": 1.0, "a1": 2.0, "no_collateral": 1.0}] * 4,
                     criterion_kinds=[{"s1": "state", "a1": "answer", "no_collateral": "negative"}] * 4)
    kinds = ["state", "answer", "negative"]
    first = completion_focused_reward([[True, False, True], [True, True, False]], [1.0, 2.0, 1.0], kinds)
    second = completion_focused_reward([[False, False, True], [True, False, True]], [1.0, 2.0, 1.0], kinds)
    assert rewards == pytest.approx(first + second)
    assert rewards[1] == 0.0


def test_trl_adapter_rejects_missing_or_mismatched_columns():
    with pytest.raises(ValueError, match="criterion_results"):
        cfrr_reward(["p"], ["c"], criterion_kinds=[["state"]])
    with pytest.raises(ValueError, match="criterion_kinds"):
        cfrr_reward(["p"], ["c"], criterion_results=[[True]])
    with pytest.raises(ValueError, match="different criteria"):
        cfrr_reward(["p"] * 2, ["c"] * 2, criterion_kinds=[{"x": "state"}] * 2,
                    criterion_results=[[{"id": "x", "passed": True}], [{"id": "y", "passed": True}]])
    with pytest.raises(ValueError, match="multiple"):
        cfrr_reward(["p"] * 3, ["c"] * 3, criterion_results=[[True]] * 3, criterion_kinds=[["state"]] * 3,
                    num_generations=2)


@given(rubric_groups())
def test_the_plain_rubric_reward_is_each_rollouts_rubric_score_plus_the_bonus(drawn):
    """The ablation's reward: the rubric's own weights whatever the group did, the same gates and bonus."""
    group, weights, kinds = drawn
    rewards = completion_focused_reward(group, weights, kinds, full_completion_bonus=BONUS, focus=False)
    for row, reward in zip(group, rewards, strict=True):
        results = [CriterionResult(id=f"c{j}", passed=passed) for j, passed in enumerate(row)]
        full_success = all(row) and any(kind != "negative" for kind in kinds)
        assert reward == pytest.approx(rubric_score(_task(weights, kinds), results) + (BONUS if full_success else 0.0))


def test_the_reward_functions_by_name_differ_only_where_the_group_disagrees():
    group = [[True, False], [True, True], [False, False], [True, False]]
    columns = {"criterion_results": group, "criterion_kinds": [["state", "answer"]] * 4, "num_generations": 4}
    cfrr, plain = (reward_function(name, full_completion_bonus=0.0) for name in REWARDS)
    assert (cfrr.__name__, plain.__name__) == ("cfrr", "rubric")
    assert plain([None] * 4, [None] * 4, **columns) == pytest.approx([0.5, 1.0, 0.0, 0.5])
    # criterion 2 passed by one rollout in four weighs more than criterion 1 passed by three
    assert cfrr([None] * 4, [None] * 4, **columns)[0] < 0.5
    with pytest.raises(ValueError, match="unknown reward"):
        reward_function("accuracy")


def _advantages(rewards, scale):
    """GRPO's advantages for one group as TRL forms them: each reward minus the group's mean, divided by the
    group's standard deviation (plus 1e-4) unless ``scale`` is ``none``. ``training.grpo`` generates one group
    per batch, so TRL's ``batch`` scaling is the ``group`` one there."""
    mean = sum(rewards) / len(rewards)
    centred = [r - mean for r in rewards]
    if scale == "none":
        return centred
    std = (sum(c * c for c in centred) / (len(rewards) - 1)) ** 0.5
    return [c / (std + 1e-4) for c in centred]


@given(rubric_groups(max_rollouts=8))
def test_with_group_scaling_two_level_groups_make_cfrr_and_the_plain_fraction_alike(drawn):
    """Why ``training.grpo`` does not scale rewards: where both rewards split a group the same way into two
    levels, dividing by the group's spread leaves the same advantages, so CFRR's focus would change nothing."""
    group, weights, kinds = drawn
    cfrr = completion_focused_reward(group, weights, kinds, full_completion_bonus=BONUS)
    plain = completion_focused_reward(group, weights, kinds, full_completion_bonus=BONUS, focus=False)
    levels = sorted(set(cfrr))
    if len(group) < 2 or len(levels) != 2 or len(set(plain)) != 2 \
            or [r == levels[1] for r in cfrr] != [r == max(plain) for r in plain]:
        return
    for a, b in zip(_advantages(cfrr, "group"), _advantages(plain, "group"), strict=True):
        assert a == pytest.approx(b, abs=1e-2)


def test_without_scaling_cfrr_widens_the_advantage_of_a_rare_criterion():
    """Four rollouts: all pass A, one also passes B. The plain fraction and CFRR rank them alike, but unscaled
    (``scale_rewards="none"``, the default of ``training.grpo.CompoGRPOConfig``) CFRR's advantage for the one
    that passed the rare criterion is larger: the update leans on what the group has only begun to solve."""
    group = [[True, False], [True, False], [True, False], [True, True]]
    cfrr = completion_focused_reward(group, full_completion_bonus=BONUS)
    plain = completion_focused_reward(group, full_completion_bonus=BONUS, focus=False)
    assert _advantages(cfrr, "group") == pytest.approx(_advantages(plain, "group"), abs=1e-3)
    assert _advantages(cfrr, "none")[3] > _advantages(plain, "none")[3] + 0.3
