"""Held-out CompoWorld tasks: the oracle self-test passes under the model's budget, a model that never calls a
tool scores 0."""

import json

import pytest

from compoworld_assets.engine.evaluation.heldout import (
    evaluate_heldout,
    heldout_budget,
    heldout_self_test,
    select_heldout,
)
from compoworld_assets.engine.evaluation.results import ModelEndpoint, score_rows
from compoworld_assets.engine.evaluation.suite import library_heldout_world
from compoworld_assets.engine.rollout.budgets import oracle_trajectories


@pytest.mark.slow
def test_oracle_passes_and_a_chatty_model_fails_every_heldout_task():
    tasks, factory = library_heldout_world(n=40)
    heldout = select_heldout(tasks, 3)
    assert heldout and all(t.split == "heldout" for t in heldout)
    with factory:
        budget = heldout_budget(heldout, factory)
        assert heldout_self_test(heldout, factory, budget=budget).ok

        async def chatty(**kwargs):
            assert kwargs["seed"] in (5, 6) and kwargs["tools"]
            return {"choices": [{"message": {"role": "assistant", "content": "Sure, working on it."}}]}

        run = evaluate_heldout(heldout, factory, ModelEndpoint("chatty", "fake/x"), [5, 6], completion_fn=chatty)
    rows = {r["metric"]: r for r in score_rows(run)}
    assert rows["success"]["mean"] == 0.0 and rows["made_tool_call"]["mean"] == 0.0
    assert (rows["success"]["n"], rows["success"]["k"]) == (len(heldout), 2)
    assert run.details["finish_reasons"] == {"stop": 2 * len(heldout)}
    assert run.details["budget"] == budget.as_dict()
    first = run.details["samples"][0]
    assert (first["seed"], first["finish_reason"], first["calls"]) == (5, "stop", [])
    assert any(metric.startswith("success[") for metric in rows)


def test_select_heldout_samples_only_the_heldout_split_deterministically():
    class _T:
        def __init__(self, task_id, split):
            self.task_id, self.split = task_id, split

    tasks = [_T(f"t{i}", "heldout" if i % 2 else "train") for i in range(20)]
    first = select_heldout(tasks, 4, seed=1)
    assert [t.task_id for t in first] == [t.task_id for t in select_heldout(tasks, 4, seed=1)]
    assert len(first) == 4 and all(t.split == "heldout" for t in first)
    assert len(select_heldout(tasks, None)) == 10


@pytest.mark.slow
def test_first_call_exact_is_one_only_for_the_oracles_first_call_with_its_arguments():
    tasks, factory = library_heldout_world(n=40)
    heldout = select_heldout(tasks, 2)
    with factory:
        oracle = {t.task_id: t for t in oracle_trajectories(heldout, factory, "direct")}
        first_messages = {tid: next(m for m in t.messages if m.get("tool_calls")) for tid, t in oracle.items()}

        def replaying(off_by_one: bool):
            async def completion(**kwargs):
                user = next(m["content"] for m in kwargs["messages"] if m["role"] == "user")
                task_id = next(t.task_id for t in heldout if t.instruction in user)
                if any(m["role"] == "tool" for m in kwargs["messages"]):
                    return {"choices": [{"message": {"role": "assistant", "content": "Done."}}]}
                message = json.loads(json.dumps(first_messages[task_id]))
                if off_by_one:
                    function = message["tool_calls"][0]["function"]
                    arguments = json.loads(function["arguments"])
                    arguments["unexpected"] = 1
                    function["arguments"] = json.dumps(arguments)
                return {"choices": [{"message": message}]}
            return completion

        exact = evaluate_heldout(heldout, factory, ModelEndpoint("replay", "fake/x"), [1],
                                 completion_fn=replaying(False))
        wrong = evaluate_heldout(heldout, factory, ModelEndpoint("wrong", "fake/x"), [1],
                                 completion_fn=replaying(True))
    assert exact.scores["first_call_exact"] == {t.task_id: [1.0] for t in heldout}
    assert exact.scores["made_tool_call"] == {t.task_id: [1.0] for t in heldout}
    assert wrong.scores["first_call_exact"] == {t.task_id: [0.0] for t in heldout}
