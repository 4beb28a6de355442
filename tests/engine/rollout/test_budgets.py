"""Budgets from the oracle's needs: derived limits let the oracle finish, a limit below its need is detected."""

import dataclasses
import json

import pytest
from toy_world import toy_task, toy_world_factory

from compoworld_assets.engine.evaluation.heldout import evaluate_heldout, heldout_budget, heldout_self_test
from compoworld_assets.engine.evaluation.results import ModelEndpoint
from compoworld_assets.engine.rollout.budgets import (
    END_OF_TURN_TOKENS,
    EpisodeNeed,
    Slack,
    assistant_text,
    derive_budget,
    episode_need,
    estimated_tokens,
    exceeded,
    fit_budget,
    oracle_needs,
    oracle_trajectories,
)
from compoworld_assets.engine.rollout.llm import parse_content_tool_calls
from compoworld_assets.engine.tasks.model import Trajectory


def words(text):
    return len(text.split())


def test_assistant_text_is_what_the_parser_reads_back():
    message = {"role": "assistant", "content": "Looking it up.", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "crm_get", "arguments": json.dumps({"id": "c_1"})}},
        {"id": "c2", "type": "function", "function": {"name": "mail_send", "arguments": {"to": "é@x.org"}}}]}
    text = assistant_text(message)
    assert text.startswith("Looking it up.<tool_call>{")
    assert parse_content_tool_calls(text) == [("crm_get", {"id": "c_1"}), ("mail_send", {"to": "é@x.org"})]
    assert estimated_tokens("x" * 9) == 5


def test_episode_need_counts_assistant_turns_and_tool_results():
    call = {"role": "assistant", "content": "", "tool_calls": [
        {"id": "c", "type": "function", "function": {"name": "a", "arguments": "{}"}}]}
    trajectory = Trajectory(task_id="t", policy="p", finish_reason="submitted", messages=[
        {"role": "system", "content": "s"}, {"role": "user", "content": "u"},
        call, {"role": "tool", "tool_call_id": "c", "content": "one two three"},
        {"role": "assistant", "content": "all done now"}])
    need = episode_need(trajectory, words)
    turn = words(assistant_text(call)) + END_OF_TURN_TOKENS
    assert need == EpisodeNeed(task_id="t", turns=2, max_turn_tokens=turn, completion_tokens=turn + 3 + 1,
                               max_tool_result_tokens=3, finish_reason="submitted")


def test_derived_budget_covers_every_need_with_slack():
    needs = [EpisodeNeed("a", 3, 100, 250, 40, "submitted"), EpisodeNeed("b", 5, 60, 200, 90, "submitted")]
    budget = derive_budget(needs, Slack(factor=1.5, tokens=10))
    assert (budget.max_steps, budget.max_tokens, budget.max_completion_tokens) == (8, 160, 385)
    assert budget.max_tool_result_tokens is None
    assert all(not exceeded(n, budget) for n in needs)
    with pytest.raises(ValueError, match="no episodes"):
        derive_budget([])


def test_exceeded_names_every_shortfall():
    need = EpisodeNeed("a", 5, 140, 400, 300, "submitted")
    budget = dataclasses.replace(derive_budget([need]), max_steps=4, max_tokens=96, max_tool_result_tokens=160)
    assert exceeded(need, budget) == ["needs 5 turns > max_steps 4", "a turn needs 140 tokens > max_tokens 96",
                                      "a tool result has 300 tokens > max_tool_result_tokens 160"]


def test_fit_budget_extends_or_refuses_a_limit_below_the_need():
    needs = [EpisodeNeed("a", 4, 120, 300, 50, "submitted")]
    derived = derive_budget(needs)
    budget, notes = fit_budget(needs, max_steps=2, max_completion_tokens=48, max_tool_result_tokens=500)
    assert (budget.max_steps, budget.max_completion_tokens) == (derived.max_steps, derived.max_completion_tokens)
    assert budget.max_tool_result_tokens == 500
    assert notes == [f"max_completion_tokens=48 is below the oracle's need of 300: using {derived.max_completion_tokens}",
                     f"max_steps=2 is below the oracle's need of 4: using {derived.max_steps}"]
    assert fit_budget(needs, max_steps=9) == (dataclasses.replace(derived, max_steps=9), [])
    with pytest.raises(ValueError, match="max_steps=2 is below the oracle's need of 4"):
        fit_budget(needs, on_short="raise", max_steps=2)


@pytest.mark.parametrize("mode", ["direct", "gateway"])
def test_oracle_needs_match_its_episodes(mode):
    task = toy_task()
    [need] = oracle_needs([task], toy_world_factory, mode)
    [trajectory] = oracle_trajectories([task], toy_world_factory, mode)
    assert need == episode_need(trajectory)
    assert need.finished and need.turns == (3 if mode == "direct" else 8)


def test_self_test_passes_under_derived_limits_and_detects_a_short_one():
    tasks = [toy_task("toy-1"), toy_task("toy-2")]
    budget = heldout_budget(tasks, toy_world_factory, "gateway")
    assert heldout_self_test(tasks, toy_world_factory, "gateway", budget).ok
    [need, _] = oracle_needs(tasks, toy_world_factory, "gateway")

    few_steps = heldout_self_test(tasks, toy_world_factory, "gateway", dataclasses.replace(
        budget, max_steps=need.turns - 1))
    assert (few_steps.passed, few_steps.total) == (0, 2)
    assert few_steps.failures[0] == "toy-1: the oracle failed (finish: max_steps)"

    few_tokens = heldout_self_test(tasks, toy_world_factory, "gateway", dataclasses.replace(
        budget, max_tokens=need.max_turn_tokens - 1))
    assert not few_tokens.ok
    assert f"a turn needs {need.max_turn_tokens} tokens > max_tokens {need.max_turn_tokens - 1}" in \
        few_tokens.failures[0]


def test_the_model_gets_the_derived_budget_unless_the_endpoint_sets_one():
    tasks = [toy_task()]
    budget = heldout_budget(tasks, toy_world_factory, "direct")
    asked = []

    async def silent(**kwargs):
        asked.append(kwargs["max_tokens"])
        return {"choices": [{"message": {"role": "assistant", "content": "No."}}]}

    run = evaluate_heldout(tasks, toy_world_factory, ModelEndpoint("m", "fake/m"), [1], completion_fn=silent)
    assert run.details["budget"] == budget.as_dict() and asked == [budget.max_tokens]
    run = evaluate_heldout(tasks, toy_world_factory, ModelEndpoint("m", "fake/m", max_tokens=7), [1],
                           completion_fn=silent)
    assert run.details["budget"]["max_tokens"] == 7 and asked[-1] == 7
    assert run.details["budget"]["max_steps"] == budget.max_steps
