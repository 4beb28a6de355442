"""GRPO's rollout budget comes from the RL tasks: the oracle fits it, a limit below its need is raised or refused."""

import pytest

from compoworld_assets.engine.rollout.budgets import exceeded, oracle_needs
from training.chat_template import token_counter
from training.data import read_rl_file, read_services, services_path
from training.grpo import rollout_budget


@pytest.fixture(scope="module")
def rl_world(demo_files):
    tasks = read_rl_file(demo_files.rl)
    with read_services(services_path(demo_files.rl)).world_factory() as factory:
        yield tasks, factory


def test_the_derived_budget_lets_the_oracle_finish_every_rl_task(rl_world, tokenizer):
    tasks, factory = rl_world
    count = token_counter(tokenizer)
    budget, extended = rollout_budget(tasks, factory, count)
    needs = oracle_needs([t.task for t in tasks], factory, tasks[0].mode, count)
    assert extended == [] and budget.max_tool_result_tokens is None
    assert all(n.finished and not exceeded(n, budget) for n in needs)
    assert budget.max_completion_tokens > max(n.completion_tokens for n in needs)


def test_a_short_limit_is_raised_to_the_derived_one_or_refused(rl_world, tokenizer):
    tasks, factory = rl_world
    count = token_counter(tokenizer)
    derived, _ = rollout_budget(tasks, factory, count)
    budget, extended = rollout_budget(tasks, factory, count, max_steps=1, max_tool_result_tokens=10_000)
    assert budget.max_steps == derived.max_steps and budget.max_tool_result_tokens == 10_000
    assert len(extended) == 1 and extended[0].startswith("max_steps=1 is below the oracle's need")
    with pytest.raises(ValueError, match="max_completion_tokens=8 is below"):
        rollout_budget(tasks, factory, count, on_short="raise", max_completion_tokens=8)
