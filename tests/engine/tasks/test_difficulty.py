"""Difficulty features and levels, the sampler aiming at a mix of levels, and the Markdown previews."""

from __future__ import annotations

from collections import Counter

import pytest

from compoworld_assets.engine.library import builtin_specs
from compoworld_assets.engine.tasks.difficulty import level_of, parse_mix, plan_level, task_difficulty
from compoworld_assets.engine.tasks.graph import build_dependency_graph
from compoworld_assets.engine.tasks.instantiate import TaskConfig, draft_task, instantiate_task
from compoworld_assets.engine.tasks.model import ArgBinding, Plan, PlanStep
from compoworld_assets.engine.tasks.preview import pick, tasks_markdown
from compoworld_assets.engine.tasks.sampling import WalkConfig, sample_plans


def test_features_count_what_makes_a_task_hard(email_plan, tiny_specs):
    specs = {s.id: s for s in tiny_specs}
    goal = draft_task(email_plan, specs, seed=3)
    explicit = draft_task(email_plan, specs, seed=3, config=TaskConfig(instruction_style="explicit"))
    assert goal.difficulty["length"] == 2 and goal.difficulty["services"] == 2
    assert goal.difficulty["discovery"] == 2 and explicit.difficulty["discovery"] == 0
    assert goal.difficulty["points"] == explicit.difficulty["points"] + 1


def test_a_trap_raises_the_level(email_plan, tiny_built, runtime_for):
    """Email the first customer listed: a house rule may forbid writing to that one (``do_not_email``)."""
    specs = {s: b.spec for s, b in tiny_built.items()}
    listed = Plan(steps=[PlanStep(index=0, service_id="shop", tool="list_customers", args={}),
                         email_plan.steps[1].model_copy(update={"args": {**email_plan.steps[1].args, "to": ArgBinding(
                             kind="step_output", step=0, path="items[0].email", type="email")}})])
    trapped = instantiate_task(listed, tiny_built, 3, "train", runtime_for, config=TaskConfig(min_distractors=1))
    plain = trapped.model_copy(update={"traps": []})
    assert trapped.traps and task_difficulty(trapped, specs)["points"] == task_difficulty(plain, specs)["points"] + 2


def test_levels_and_mixes():
    assert [level_of(p) for p in (0, 2, 3, 5, 6, 9)] == ["easy", "easy", "medium", "medium", "hard", "hard"]
    assert parse_mix({"easy": 1, "hard": 3}) == {"easy": 0.25, "medium": 0.0, "hard": 0.75}
    with pytest.raises(ValueError):
        parse_mix({"trivial": 1.0})
    with pytest.raises(ValueError):
        WalkConfig(level_mix=(("easy", -1.0),))


@pytest.mark.parametrize("mix", [(("easy", 0.5), ("hard", 0.5)), (("easy", 0.2), ("medium", 0.3), ("hard", 0.5))])
def test_the_sampler_hits_a_level_mix(mix):
    specs = builtin_specs()
    graph = build_dependency_graph(specs)
    by_id = {s.id: s for s in specs}
    plans = sample_plans(graph, specs, 5, 60, WalkConfig(level_mix=mix))
    counts = Counter(plan_level(p, by_id) for p in plans)
    assert len(plans) == 60 and counts == {level: round(share * 60) for level, share in mix}


def test_previews_pick_by_seed_and_read_in_words(email_plan, tiny_built, runtime_for):
    task = instantiate_task(email_plan, tiny_built, 3, "train", runtime_for, config=TaskConfig(min_distractors=1))
    others = [task.model_copy(update={"task_id": f"task_{n}"}) for n in range(30)]
    assert [t.task_id for t in pick(others, 1, 5)] == [t.task_id for t in pick(list(reversed(others)), 1, 5)]
    assert pick(others, 1, 5) != pick(others, 2, 5)
    page = tasks_markdown(others, seed=1, n=3)
    assert page == tasks_markdown(others, seed=1, n=3) and page.count("### ") == 3
    assert task.instruction.splitlines()[0] in page and "*must not happen*" in page and "level **" in page
    assert "30 tasks" in page and "walk 100%" in page
