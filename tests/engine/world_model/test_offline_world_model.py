from __future__ import annotations

import pytest

from compoworld_assets.engine.runtime.state import ServiceState
from compoworld_assets.engine.tasks.grounding import leaves
from compoworld_assets.engine.world_model import OfflineWorldModel
from compoworld_assets.engine.world_model.schema import schema_errors

ARGS = {
    "create_ticket": {"subject": "Printer jam", "requester_email": "zoe.xu@acme.example.com"},
    "summarize_ticket": {"ticket_id": "tick_0001"},
    "suggest_agent": {"topic": "vpn"},
    "triage_queue": {},
    "send_reply": {"to": "ada.berg@globex.example.com", "body": "Fixed."},
    "count_open": {},
    "find_agent": {"email": "MEI.SATO@initech.example.com"},
}
# What an offline answer needs that neither the arguments nor the state hold (free text, a score, a count).
UNAVAILABLE = {"summarize_ticket": "$.summary", "suggest_agent": "$.confidence", "count_open": "$"}


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
def test_results_are_type_valid_or_say_they_cannot_be_simulated(spec, state, empty):
    model = OfflineWorldModel()
    current = ServiceState.empty(spec) if empty else state
    for tool in spec.tools:
        result = model.simulate(spec, tool, ARGS[tool.name], current).result
        if empty and tool.name in ("summarize_ticket", "find_agent"):
            assert result["error"]["code"] == "not_found"
        elif tool.name in UNAVAILABLE:
            assert result["error"]["code"] == "unavailable"
            assert UNAVAILABLE[tool.name] in result["error"]["message"]
        else:
            assert result["success"], result
            assert schema_errors(tool.returns, result["data"]) == []


def test_results_reuse_argument_and_state_values(spec, state):
    model = OfflineWorldModel()
    agent = model.simulate(spec, spec.tool("find_agent"), ARGS["find_agent"], state).result["data"]
    assert agent == state.tables["Agent"]["agent_0001"]
    reply = model.simulate(
        spec, spec.tool("send_reply"), {"to": "zoe.xu@acme.example.com", "body": "Hi"}, state
    ).result["data"]
    assert reply["to"] == "zoe.xu@acme.example.com"
    created = model.simulate(spec, spec.tool("create_ticket"), ARGS["create_ticket"], state).result["data"]
    assert created["subject"] == "Printer jam" and created["id"] == "tick_0003"


def test_a_look_up_that_matches_no_record_is_not_found(spec, state):
    result = OfflineWorldModel().simulate(spec, spec.tool("find_agent"), {"email": "nobody@acme.example.com"},
                                          state).result
    assert result["error"]["code"] == "not_found"
    assert "nobody@acme.example.com" in result["error"]["message"]


@pytest.mark.parametrize("tool_name", sorted(ARGS))
def test_no_answer_holds_a_value_it_made_up(spec, state, tool_name):
    """Every value of a successful answer is an argument, a stored value, or a receipt of the call (the id and
    time of a sent reply): never a phrase or a number drawn to fill the type."""
    tool = spec.tool(tool_name)
    simulation = OfflineWorldModel().simulate(spec, tool, ARGS[tool_name], state)
    if not simulation.result["success"]:
        return
    stored = {v for table in state.tables.values() for r in table.values() for v in r.values()}
    stored |= {v for c in simulation.change.created for v in c.record.values()}
    known = stored | set(leaves(ARGS[tool_name]))
    data = simulation.result["data"]
    receipts = {data.get("message_id"), data.get("sent_at")} if isinstance(data, dict) else set()
    assert set(leaves(data)) - known <= receipts


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


def test_a_create_answers_with_the_record_it_made_not_an_older_look_alike(spec, state):
    twin = {"subject": "VPN is down", "requester_email": "ada.berg@globex.example.com"}  # as tick_0001 holds
    simulation = OfflineWorldModel().simulate(spec, spec.tool("create_ticket"), twin, state)
    assert simulation.result["data"]["id"] == "tick_0003" == simulation.change.created[0].record["id"]


def test_a_read_makes_no_receipts():
    """Timestamps, ids and success flags are receipts of a call that acts; a read has none to give."""
    from compoworld_assets.engine.specs.model import Effect, ServiceSpec, SourceRef, ToolSpec

    tool = ToolSpec(name="ticket_health", description="Health of the queue.", effect=Effect.QUERY, returns={
        "type": "object", "required": ["checked_at", "ok"],
        "properties": {"checked_at": {"type": "string", "format": "date-time"}, "ok": {"type": "boolean"}}})
    spec = ServiceSpec(id="queue", name="Queue", domain="it", description="d",
                       source=SourceRef(kind="openai", location="q.json"), tools=[tool])
    result = OfflineWorldModel().simulate(spec, tool, {}, ServiceState.empty(spec)).result
    assert result["error"]["code"] == "unavailable" and "$.checked_at" in result["error"]["message"]
