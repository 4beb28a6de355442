"""τ²-bench: gold replay scores 1, a silent agent is scored by τ²'s evaluator, the scripted user is deterministic."""

import asyncio

import pytest

pytest.importorskip("tau2")

from compoworld_assets.engine.evaluation import tau2
from compoworld_assets.engine.evaluation.results import ModelEndpoint


class _Instructions:
    reason_for_call = "My order is late."
    known_info = "I am Ann, order #W1."
    task_instructions = "Be brief."


class _Task:
    class user_scenario:
        instructions = _Instructions()


def test_scripted_user_opens_restates_and_stops():
    user = tau2.ScriptedUser(_Task(), max_user_turns=2)
    replies = [asyncio.run(user.reply("Hi")) for _ in range(3)]
    assert replies[0] == "My order is late. I am Ann, order #W1."
    assert "I am Ann" in replies[1] and tau2.STOP not in replies[1]
    assert replies[2] == tau2.STOP


@pytest.mark.slow
def test_gold_replay_scores_one_and_doing_nothing_fails_a_db_task():
    """τ²'s import alone takes ~30 s on a shared machine, hence slow."""
    result = tau2.tau2_self_test(per_task_set=2, sample_seed=0)
    assert (result.passed, result.total, result.failures) == (6, 6, [])

    async def silent(**kwargs):
        return {"choices": [{"message": {"role": "assistant", "content": "Let me check."}}]}

    run = tau2.evaluate_tau2(ModelEndpoint("silent", "fake/x"), [1], ("retail",), 2, 0, completion_fn=silent)
    assert run.estimates()["reward"].mean == 0.0
    assert run.details["terminations"] == {"user_stop": 2}
    assert [(x["termination"], x["n_tool_calls"], x["score"]) for x in run.details["samples"]] == [
        ("user_stop", 0, 0.0)] * 2
