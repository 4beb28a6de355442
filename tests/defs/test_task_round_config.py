"""The number of walks a task round samples grows with the library unless it is set."""

from compoworld_assets.defs.tasks.assets import TaskRoundConfig
from compoworld_assets.task_volume import MIN_PLANS


def test_walks_grow_with_the_library_past_the_minimum():
    config = TaskRoundConfig()
    assert config.plan_count(0) == config.plan_count(37) == MIN_PLANS == 1100
    assert config.plan_count(448) == 6720
    assert config.plan_count(2626) == 39390
    assert TaskRoundConfig(plans_per_service=2.5).plan_count(1000) == 2500


def test_an_explicit_walk_count_wins_even_when_small():
    assert TaskRoundConfig(n_plans=25).plan_count(448) == 25


def test_the_growth_threshold_the_cli_help_states_is_where_the_volume_starts_growing():
    from compoworld_assets.cli import build_parser
    from compoworld_assets.task_volume import default_plan_count, services_before_growth

    threshold = services_before_growth()
    assert default_plan_count(threshold) == MIN_PLANS < default_plan_count(threshold + 1)
    [commands] = [a for a in build_parser()._actions if a.dest == "command"]
    tasks_help = " ".join(next(a.help for a in commands.choices["run"]._actions if a.dest == "tasks").split())
    assert f"{MIN_PLANS:,}" in tasks_help and f"more than {threshold} services" in tasks_help
