"""The number of walks a task round samples grows with the library unless it is set."""

from compoworld_assets.defs.tasks.assets import MIN_PLANS, TaskRoundConfig


def test_walks_grow_with_the_library_past_the_minimum():
    config = TaskRoundConfig()
    assert config.plan_count(0) == config.plan_count(37) == MIN_PLANS == 1100
    assert config.plan_count(448) == 5824
    assert config.plan_count(2626) == 34138
    assert TaskRoundConfig(plans_per_service=2.5).plan_count(1000) == 2500


def test_an_explicit_walk_count_wins_even_when_small():
    assert TaskRoundConfig(n_plans=25).plan_count(448) == 25
