"""The grounding rule: a value a run takes from a world-model answer must be held by the world."""

from __future__ import annotations

from compoworld_assets.engine.runtime.state import ServiceState, WorldState
from compoworld_assets.engine.tasks.grounding import ungrounded_values
from compoworld_assets.engine.tasks.model import ToolCallRecord

WORLD = WorldState(services={"crm": ServiceState(service_id="crm", tables={"Contact": {
    "con_0001": {"id": "con_0001", "email": "ada.berg@globex.example.com", "name": "Ada Berg"}}})})
SIMULATED = {"crm_find_contact", "crm_score_lead"}


def call(tool: str, arguments: dict, data) -> ToolCallRecord:
    return ToolCallRecord(service_id="crm", tool=tool, arguments=arguments, result={"success": True, "data": data})


def test_a_stored_value_read_through_the_world_model_is_grounded():
    calls = [call("find_contact", {"email": "ada.berg@globex.example.com"}, {"id": "con_0001", "name": "Ada Berg"}),
             call("create_note", {"contact_id": "con_0001", "text": "Called"}, {"id": "note_0001"})]
    assert ungrounded_values(WORLD, calls, {"name": "Ada Berg"}, SIMULATED) == []


def test_made_up_text_that_is_reported_or_handed_on_is_not():
    calls = [call("score_lead", {"contact_id": "con_0001"}, {"score": 0.87, "tier": "Renewal quarterly"}),
             call("create_note", {"contact_id": "con_0001", "text": "Renewal quarterly"}, {"id": "note_0001"})]
    found = ungrounded_values(WORLD, calls, {"score": 0.87}, SIMULATED)
    assert [where for where, _ in found] == ["call 0 (score_lead, simulated)"] * 2
    assert {detail.split(" ")[0] for _, detail in found} == {"0.87", '"Renewal'}


def test_values_never_used_later_and_values_of_code_tools_are_not_checked():
    calls = [call("score_lead", {"contact_id": "con_0001"}, {"score": 0.87}),
             call("create_note", {"contact_id": "con_0001", "text": "x"}, {"id": "note_0002", "tier": "gold"}),
             call("create_note", {"contact_id": "con_0001", "text": "gold"}, {"id": "note_0003"})]
    assert ungrounded_values(WORLD, calls, {"note": "note_0002"}, SIMULATED) == []
    assert ungrounded_values(WORLD, calls, {"score": 0.87}, set()) == []


def test_an_argument_echoed_back_is_grounded_by_the_call_that_gave_it():
    calls = [call("find_contact", {"email": "new.person@acme.example.com"}, {"email": "new.person@acme.example.com"})]
    assert ungrounded_values(WORLD, calls, {"email": "new.person@acme.example.com"}, SIMULATED) == []


def test_a_later_code_answer_that_echoes_the_value_does_not_ground_it():
    calls = [call("score_lead", {"contact_id": "con_0001"}, {"tier": "Renewal quarterly"}),
             call("create_note", {"contact_id": "con_0001", "text": "Renewal quarterly"},
                  {"id": "note_0001", "text": "Renewal quarterly"})]
    assert [where for where, _ in ungrounded_values(WORLD, calls, {}, SIMULATED)] == ["call 0 (score_lead, simulated)"]
