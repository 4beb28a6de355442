"""BFCL through its own checkers: ground truth scores 100%, wrong answers do not, the loop decodes calls."""

import json

import pytest

pytest.importorskip("bfcl_eval")

from compoworld_assets.engine.evaluation import bfcl
from compoworld_assets.engine.evaluation.results import ModelEndpoint, score_rows

ENDPOINT = ModelEndpoint(name="fake", model="fake/model")


def test_ground_truth_scores_everything_in_every_category():
    result = bfcl.bfcl_self_test(bfcl.SINGLE_TURN + bfcl.MULTI_TURN, per_category=4, sample_seed=1)
    assert (result.passed, result.total, result.failures) == (56, 56, [])


def test_gorilla_schema_becomes_json_schema_and_names_map_back():
    docs = [{"name": "math.hypot", "description": "d", "parameters": {"type": "dict", "properties": {
        "x": {"type": "float"}, "pts": {"type": "tuple", "items": {"type": "integer"}}, "v": {"type": "any"}}}}]
    tools, names = bfcl.openai_tools(docs)
    assert tools[0]["function"]["name"] == "math_hypot" and names == {"math_hypot": "math.hypot"}
    assert tools[0]["function"]["parameters"] == {"type": "object", "properties": {
        "x": {"type": "number"}, "pts": {"type": "array", "items": {"type": "integer"}}, "v": {}}}


def test_a_wrong_argument_and_a_missing_multi_turn_call_fail():
    entry = bfcl.load_entries("simple_python")[0]
    message = bfcl.gold_single_turn_message(entry)
    arguments = json.loads(message["tool_calls"][0]["function"]["arguments"])
    message["tool_calls"][0]["function"]["arguments"] = json.dumps({**arguments, "base": 11})
    _, names = bfcl.openai_tools(entry["function"])
    assert not bfcl.score_single_turn(entry, "simple_python", bfcl.decoded_calls(message, names))
    assert bfcl.score_single_turn(bfcl.load_entries("irrelevance")[0], "irrelevance", [])

    multi = bfcl.load_entries("multi_turn_base")[0]
    decoded = [[[bfcl.call_string(*bfcl.parse_call_string(c, multi)) for c in turn]] for turn in multi["ground_truth"]]
    decoded[0][0] = decoded[0][0][:-1]
    assert not bfcl.score_multi_turn(multi, decoded, "test_drop_one_call")


def _gold_model(entries):
    """A fake chat model answering each single-turn question with its ground truth."""
    by_question = {entry["question"][0][-1]["content"]: entry for entry in entries}

    async def complete(**kwargs):
        entry = by_question[kwargs["messages"][-1]["content"]]
        return {"choices": [{"message": bfcl.gold_single_turn_message(entry)}]}

    return complete


def test_evaluation_loop_scores_a_gold_model_fully_and_a_silent_model_zero(monkeypatch):
    categories = ("simple_python", "parallel")
    entries = [e for c in categories for e in bfcl.sample_entries(c, 2, 0)]
    gold = bfcl.evaluate_bfcl(ENDPOINT, [1, 2], categories, 2, 0, completion_fn=_gold_model(entries))
    rows = {r["metric"]: r for r in score_rows(gold)}
    assert rows["accuracy"]["mean"] == 1.0 and rows["pass^k"]["mean"] == 1.0
    assert (rows["accuracy"]["n"], rows["accuracy"]["k"]) == (4, 2)

    async def silent(**kwargs):
        return {"choices": [{"message": {"role": "assistant", "content": "I cannot help."}}]}

    mixed = bfcl.evaluate_bfcl(ENDPOINT, [1], ("simple_python", "irrelevance"), 2, 0, completion_fn=silent)
    assert mixed.estimates()["accuracy[simple_python]"].mean == 0.0
    assert mixed.estimates()["accuracy[irrelevance]"].mean == 1.0
    first = gold.details["samples"][0]
    assert (first["item"], first["seed"], first["score"]) == (entries[0]["id"], 1, 1.0) and first["calls"]
    assert mixed.details["samples"][0]["text"] == "I cannot help."


def test_multi_turn_loop_runs_calls_on_the_backend_and_feeds_results_back():
    entry = bfcl.sample_entries("multi_turn_base", 1, 3)[0]
    assert entry["involved_classes"] == ["GorillaFileSystem"]
    seen_tool_results = []

    async def one_call_per_turn(**kwargs):
        messages = kwargs["messages"]
        if messages[-1]["role"] == "tool":
            seen_tool_results.append(messages[-1]["content"])
            return {"choices": [{"message": {"role": "assistant", "content": "Done."}}]}
        call = {"id": "c", "type": "function", "function": {"name": "pwd", "arguments": "{}"}}
        return {"choices": [{"message": {"role": "assistant", "content": "", "tool_calls": [call]}}]}

    run = bfcl.evaluate_bfcl(ENDPOINT, [1], ("multi_turn_base",), 1, 3, completion_fn=one_call_per_turn)
    assert run.scores["accuracy"][entry["id"]] == [0.0]
    assert len(seen_tool_results) == len(entry["question"])
    assert all("current_working_directory" in r for r in seen_tool_results)
    assert run.details["samples"][0]["calls_per_turn"][0] == [["pwd()"]]


def test_multi_turn_steps_stop_at_bfcls_own_limit():
    from bfcl_eval.constants.default_prompts import MAXIMUM_STEP_LIMIT

    assert bfcl.steps_per_turn() == MAXIMUM_STEP_LIMIT + 1
    entry = bfcl.sample_entries("multi_turn_base", 1, 3)[0]

    async def always_pwd(**kwargs):
        call = {"id": "c", "type": "function", "function": {"name": "pwd", "arguments": "{}"}}
        return {"choices": [{"message": {"role": "assistant", "content": "", "tool_calls": [call]}}]}

    run = bfcl.evaluate_bfcl(ENDPOINT, [1], ("multi_turn_base",), 1, 3, completion_fn=always_pwd)
    steps = run.details["samples"][0]["calls_per_turn"]
    assert [len(turn) for turn in steps] == [bfcl.steps_per_turn()] * len(entry["question"])
    assert run.details["budget"]["max_steps_per_turn"] == bfcl.steps_per_turn()


def test_tokens_per_turn_come_from_the_ground_truth_and_the_self_test_checks_them():
    categories = ("simple_python", "parallel_multiple", "irrelevance")
    entries = [e for c in categories for e in bfcl.sample_entries(c, 3, 0)]
    longest = max(n for e in entries for n in bfcl.gold_turn_tokens(e))
    derived = bfcl.gold_max_tokens(entries)
    assert derived > longest > 0
    asked = []

    async def silent(**kwargs):
        asked.append(kwargs["max_tokens"])
        return {"choices": [{"message": {"role": "assistant", "content": "No."}}]}

    run = bfcl.evaluate_bfcl(ENDPOINT, [1], categories, 3, 0, completion_fn=silent)
    assert set(asked) == {derived} and run.details["budget"]["max_tokens"] == derived
    assert bfcl.bfcl_self_test(categories, 3, 0).ok
    short = bfcl.bfcl_self_test(categories, 3, 0, max_tokens=longest - 1)
    assert not short.ok and any(f.endswith(f"tokens > max_tokens {longest - 1}") for f in short.failures)
