from __future__ import annotations

import pytest

from compoworld_assets.engine.runtime.state import ServiceState
from compoworld_assets.engine.world_model import OfflineWorldModel
from compoworld_assets.engine.world_model.schema import schema_errors

ARGS = {
    "create_ticket": {"subject": "Printer jam", "requester_email": "zoe.xu@acme.example.com"},
    "summarize_ticket": {"ticket_id": "tick_0001"},
    "suggest_agent": {"topic": "vpn"},
    "triage_queue": {},
    "send_reply": {"to": "ada.berg@globex.example.com", "body": "Fixed."},
    "count_open": {},
}


def test_same_call_same_state_gives_the_same_result(spec, state):
    model = OfflineWorldModel()
    tool = spec.tool("suggest_agent")
    first = model.simulate(spec, tool, {"topic": "vpn"}, state)
    assert model.simulate(spec, tool, {"topic": "vpn"}, state.snapshot()) == first
    results = {
        str(model.simulate(spec, spec.tool("send_reply"), {"to": "a@b.example.com", "body": f"m{i}"}, state))
        for i in range(5)
    }
    assert len(results) == 5


@pytest.mark.parametrize("empty", [False, True])
def test_results_are_valid_against_the_returns_schema(spec, state, empty):
    model = OfflineWorldModel()
    current = ServiceState.empty(spec) if empty else state
    for tool in spec.tools:
        args = ARGS[tool.name]
        result = model.simulate(spec, tool, args, current).result
        if empty and tool.name == "summarize_ticket":
            assert result["error"]["code"] == "not_found"
            continue
        assert result["success"], result
        assert schema_errors(tool.returns, result["data"]) == []


def test_results_reuse_argument_and_state_values(spec, state):
    model = OfflineWorldModel()
    summary = model.simulate(spec, spec.tool("summarize_ticket"), {"ticket_id": "tick_0001"}, state).result["data"]
    assert summary["ticket_id"] == "tick_0001"
    assert summary["requester_email"] == "ada.berg@globex.example.com"
    agent = model.simulate(spec, spec.tool("suggest_agent"), {"topic": "vpn"}, state).result["data"]
    assert agent["agent_id"] == "agent_0001"
    assert agent["agent_email"] in {
        "ada.berg@globex.example.com",
        "omar.ito@hooli.example.com",
        "mei.sato@initech.example.com",
    }
    reply = model.simulate(
        spec, spec.tool("send_reply"), {"to": "zoe.xu@acme.example.com", "body": "Hi"}, state
    ).result["data"]
    assert reply["to"] == "zoe.xu@acme.example.com"


def test_record_lists_are_existing_records(spec, state):
    queue = OfflineWorldModel().simulate(spec, spec.tool("triage_queue"), {}, state).result["data"]
    assert sorted(r["id"] for r in queue) == ["tick_0001", "tick_0002"]
    for record in queue:
        assert record == state.tables["Ticket"][record["id"]]


def test_unknown_own_reference_is_not_found_and_state_is_untouched(spec, state):
    before = state.content_hash()
    result = OfflineWorldModel().simulate(
        spec, spec.tool("summarize_ticket"), {"ticket_id": "tick_9999"}, state
    ).result
    assert result == {
        "success": False,
        "error": {"code": "not_found", "message": "Ticket 'tick_9999' not found"},
    }
    for tool in spec.tools:
        OfflineWorldModel().simulate(spec, tool, ARGS[tool.name], state)
    assert state.content_hash() == before
