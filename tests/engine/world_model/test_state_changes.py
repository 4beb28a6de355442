"""A world model that changes state: changes proposed, validated, applied, cached and replayed."""

from __future__ import annotations

import json

import pytest

from compoworld_assets.engine.runtime.service_runtime import ServiceRuntime
from compoworld_assets.engine.specs.model import Effect, ToolSpec, Transition
from compoworld_assets.engine.synthesis.offline import OfflineSynthesizer
from compoworld_assets.engine.world_model import (
    CachedWorldModel,
    InMemoryWorldModelCache,
    InvalidChange,
    LLMWorldModel,
    OfflineWorldModel,
    Simulation,
    StateChange,
    apply_change,
)

TICKET_REF = {"type": "string", "x-cw-type": "helpdesk.Ticket.id"}


@pytest.fixture
def closing_spec(spec):
    """The help desk with a close tool whose transition refuses closed tickets."""
    close = ToolSpec(
        name="close_ticket", description="Close a ticket.", effect=Effect.UPDATE, entity="Ticket",
        parameters={"type": "object", "properties": {"ticket_id": TICKET_REF}, "required": ["ticket_id"]},
        returns=spec.entity("Ticket").record_schema("helpdesk"), sets={"status": "closed"},
        transition=Transition(kind="status", entity="Ticket", key="ticket_id", field="status", value="closed"),
    )
    return spec.model_copy(update={"tools": [*spec.tools, close]})


def world_model_runtime(spec, world_model, state):
    runtime = ServiceRuntime(spec, OfflineSynthesizer().synthesize(spec), dict.fromkeys(
        (t.name for t in spec.tools), "world_model"), world_model)
    runtime.reset(state)
    return runtime


def test_offline_create_stores_the_record_and_the_result_is_that_record(spec, state):
    simulation = OfflineWorldModel().simulate(
        spec, spec.tool("create_ticket"), {"subject": "Printer jam", "requester_email": "zoe.xu@acme.example.com"},
        state)
    [created] = simulation.change.created
    assert created.entity == "Ticket" and created.record["id"] not in state.tables["Ticket"]
    after = apply_change(spec, spec.tool("create_ticket"), state, simulation.change)
    stored = after.tables["Ticket"][created.record["id"]]
    assert stored["subject"] == "Printer jam" and stored["status"] in ("open", "closed")  # required, not given: drawn
    assert simulation.result["data"]["id"] == stored["id"]
    assert simulation.result["data"]["subject"] == "Printer jam"


def test_offline_update_follows_the_transition_and_its_precondition(closing_spec, state):
    model = OfflineWorldModel()
    tool = closing_spec.tool("close_ticket")
    open_id = next(i for i, r in state.tables["Ticket"].items() if r["status"] == "open")
    closed = model.simulate(closing_spec, tool, {"ticket_id": open_id}, state)
    [updated] = closed.change.updated
    assert (updated.id, updated.fields) == (open_id, {"status": "closed"})
    after = apply_change(closing_spec, tool, state, closed.change)
    again = model.simulate(closing_spec, tool, {"ticket_id": open_id}, after)
    assert again.result["error"]["code"] == "conflict" and again.change.empty
    assert again.result["error"]["message"].endswith("is already 'closed'")


def test_offline_actions_and_reads_change_nothing(spec, state):
    for name, args in [("suggest_agent", {"topic": "vpn"}), ("summarize_ticket", {"ticket_id": "tick_0001"})]:
        assert OfflineWorldModel().simulate(spec, spec.tool(name), args, state).change.empty


@pytest.mark.parametrize(("change", "problem"), [
    ({"created": [{"entity": "Invoice", "record": {}}]}, "no entity 'Invoice'"),
    ({"created": [{"entity": "Ticket", "record": {"subject": "x", "requester_email": "a@b.example.com",
                                                   "status": "open", "colour": "red"}}]}, "['colour'] are not its fields"),
    ({"created": [{"entity": "Ticket", "record": {"subject": "x", "requester_email": "a@b.example.com",
                                                   "status": "pending"}}]}, "status must be one of"),
    ({"created": [{"entity": "Ticket", "record": {"subject": 5, "requester_email": "a@b.example.com",
                                                   "status": "open"}}]}, "does not fit the entity"),
    ({"created": [{"entity": "Ticket", "record": {"subject": "x", "requester_email": "nobody",
                                                   "status": "open"}}]}, "is not a valid email"),
    ({"created": [{"entity": "Ticket", "record": {"id": "tick_0001", "subject": "x",
                                                   "requester_email": "a@b.example.com", "status": "open"}}]},
     "the id must be a new string"),
    ({"updated": [{"entity": "Ticket", "id": "tick_9999", "fields": {"status": "closed"}}]}, "does not exist"),
    ({"updated": [{"entity": "Ticket", "id": "tick_0001", "fields": {"assignee_id": "agent_9999"}}]},
     "names Agent 'agent_9999', which does not exist"),
    ({"deleted": [{"entity": "Agent", "id": "agent_9999"}]}, "does not exist"),
])
def test_invalid_changes_are_refused(spec, state, change, problem):
    with pytest.raises(InvalidChange, match=problem.replace("[", r"\[").replace("]", r"\]")):
        apply_change(spec, spec.tool("send_reply"), state, StateChange.model_validate(change))


def test_a_read_tool_may_not_change_anything(spec, state):
    read = spec.tool("create_ticket").model_copy(update={"name": "peek", "effect": Effect.READ})
    change = StateChange.model_validate({"deleted": [{"entity": "Agent", "id": "agent_0001"}]})
    with pytest.raises(InvalidChange, match="cannot change the state"):
        apply_change(spec, read, state, change)


def llm_answering(*answers):
    return LLMWorldModel("openai/gpt-4o-mini", max_retries=len(answers) - 1, backoff_s=0,
                         completion_kwargs=lambda attempt: {"mock_response": answers[attempt]})


SENT = {"message_id": "m1", "to": "ada.berg@globex.example.com", "sent_at": "2026-01-02T03:04:05Z"}


def test_the_llm_changes_state_and_a_later_read_sees_it(spec, state):
    answer = json.dumps({"data": SENT, "changes": {"updated": [
        {"entity": "Ticket", "id": "tick_0001", "fields": {"status": "closed"}}]}})
    runtime = world_model_runtime(spec, llm_answering(answer), state)
    result = runtime.call("send_reply", {"to": "ada.berg@globex.example.com", "body": "Fixed, closing."})
    assert result == {"success": True, "data": SENT}
    assert runtime.state().tables["Ticket"]["tick_0001"]["status"] == "closed"


def test_an_invalid_llm_change_is_retried_with_the_reason(spec, state):
    bad = json.dumps({"data": SENT, "changes": {"updated": [
        {"entity": "Ticket", "id": "tick_0001", "fields": {"status": "resolved"}}]}})
    good = json.dumps({"data": SENT})
    model = llm_answering(bad, good)
    simulation = model.simulate(spec, spec.tool("send_reply"), {"to": SENT["to"], "body": "x"}, state)
    assert simulation.result["success"] and simulation.change.empty
    assert [c.outcome for c in model.calls] == ["invalid", "ok"]
    assert "the state change is invalid" in model.calls[0].detail


def test_a_cached_change_replays_identically(spec, state):
    answer = json.dumps({"data": SENT, "changes": {"created": [{"entity": "Agent", "record": {
        "full_name": "Kim Lee", "email": "kim.lee@initech.example.com"}}]}})
    cache = InMemoryWorldModelCache()
    first = CachedWorldModel(llm_answering(answer), cache).simulate(spec, spec.tool("send_reply"), {"to": SENT["to"],
                                                                                                  "body": "x"}, state)
    replay = CachedWorldModel(llm_answering("not json"), cache)
    again = replay.simulate(spec, spec.tool("send_reply"), {"to": SENT["to"], "body": "x"}, state)
    assert again == first and replay.hits == 1
    world = world_model_runtime(spec, replay, state)
    world.call("send_reply", {"to": SENT["to"], "body": "x"})
    assert any(r["full_name"] == "Kim Lee" for r in world.state().tables["Agent"].values())


class RogueModel:
    model_id = "rogue/1"

    def simulate(self, spec, tool, args, state):
        return Simulation(result={"success": True, "data": SENT},
                          change=StateChange.model_validate({"deleted": [{"entity": "Agent", "id": "agent_9999"}]}))


def test_the_runtime_never_applies_an_invalid_change(spec, state):
    runtime = world_model_runtime(spec, RogueModel(), state)
    before = runtime.state().content_hash()
    result = runtime.call("send_reply", {"to": SENT["to"], "body": "x"})
    assert result["error"]["code"] == "internal_error" and "invalid state change" in result["error"]["message"]
    assert runtime.state().content_hash() == before


def test_the_llm_is_not_asked_when_the_transition_refuses(closing_spec, state):
    closed_id = next(i for i, r in state.tables["Ticket"].items() if r["status"] == "closed")
    model = llm_answering(json.dumps({"data": {}}))
    simulation = model.simulate(closing_spec, closing_spec.tool("close_ticket"), {"ticket_id": closed_id}, state)
    assert simulation.result["error"]["code"] == "conflict" and model.calls == []
