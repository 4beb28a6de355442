from __future__ import annotations

import json

from compoworld_assets.engine.world_model import LLMWorldModel

MODEL = "openai/gpt-4o-mini"
VALID = json.dumps(
    {"data": {"agent_id": "agent_0001", "agent_email": "mei.sato@initech.example.com", "confidence": 0.9}}
)


def model_with(responses: list, max_retries: int = 2) -> LLMWorldModel:
    """A model whose attempt i answers ``responses[i]`` through litellm's mock_response."""
    return LLMWorldModel(
        MODEL,
        max_retries=max_retries,
        backoff_s=0,
        completion_kwargs=lambda attempt: {"mock_response": responses[attempt]},
    )


def test_valid_answer_is_returned(spec, state):
    model = model_with([VALID])
    result = model.simulate(spec, spec.tool("suggest_agent"), {"topic": "vpn"}, state).result
    assert result == {"success": True, "data": json.loads(VALID)["data"]}
    assert [(c.attempt, c.outcome) for c in model.calls] == [(0, "ok")]


def test_fenced_json_is_accepted(spec, state):
    model = model_with([f"```json\n{VALID}\n```"])
    assert model.simulate(spec, spec.tool("suggest_agent"), {"topic": "vpn"}, state).result["success"]


def test_invalid_answer_is_retried_with_feedback(spec, state):
    wrong = json.dumps({"data": {"agent_id": "agent_0001", "confidence": 7}})
    model = model_with([wrong, VALID])
    result = model.simulate(spec, spec.tool("suggest_agent"), {"topic": "vpn"}, state).result
    assert result["success"]
    assert [(c.attempt, c.outcome) for c in model.calls] == [(0, "invalid"), (1, "ok")]
    assert "agent_email" in model.calls[0].detail and "confidence" in model.calls[0].detail


def test_raised_exception_is_retried(spec, state):
    model = model_with([RuntimeError("provider unavailable"), VALID])
    result = model.simulate(spec, spec.tool("suggest_agent"), {"topic": "vpn"}, state).result
    assert result["success"]
    assert [c.outcome for c in model.calls] == ["error", "ok"]
    assert "provider unavailable" in model.calls[0].detail


def test_exhausted_retries_give_internal_error_not_an_exception(spec, state):
    model = model_with(["not json", json.dumps({"answer": 1}), RuntimeError("down")], max_retries=2)
    result = model.simulate(spec, spec.tool("suggest_agent"), {"topic": "vpn"}, state).result
    assert result["success"] is False and result["error"]["code"] == "internal_error"
    assert "3 attempts" in result["error"]["message"]
    assert [c.outcome for c in model.calls] == ["invalid", "invalid", "error"]


def test_prompt_carries_spec_args_and_state(spec, state):
    messages = LLMWorldModel(MODEL).messages(
        spec, spec.tool("summarize_ticket"), {"ticket_id": "tick_0001"}, state
    )
    prompt = messages[-1]["content"]
    assert "summarize_ticket" in prompt and '"ticket_id":"tick_0001"' in prompt
    assert "ada.berg@globex.example.com" in prompt


def test_missing_reference_short_circuits_the_model(spec, state):
    model = model_with([VALID])
    result = model.simulate(spec, spec.tool("summarize_ticket"), {"ticket_id": "tick_4242"}, state).result
    assert result["error"]["code"] == "not_found"
    assert model.calls == []


def test_an_answer_naming_a_record_the_state_lacks_is_asked_again(spec, state):
    """The answer claims to read agent_0042; the state holds only agent_0001: asked again with the reason."""
    invented = json.dumps({"data": {"agent_id": "agent_0042", "agent_email": "mei.sato@initech.example.com",
                                    "confidence": 0.9}})
    model = model_with([invented, VALID])
    result = model.simulate(spec, spec.tool("suggest_agent"), {"topic": "vpn"}, state).result
    assert result == {"success": True, "data": json.loads(VALID)["data"]}
    assert [c.outcome for c in model.calls] == ["invalid", "ok"]
    assert "agent_id names Agent 'agent_0042'" in model.calls[0].detail
