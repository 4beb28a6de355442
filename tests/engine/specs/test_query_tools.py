"""Tools that read without naming an entity become ``query`` tools: the world model answers them and may
change nothing. Evidence: a reading verb in the name, or a safe HTTP method with no changing verb."""

from __future__ import annotations

import pytest

from compoworld_assets.engine.runtime.state import ServiceState
from compoworld_assets.engine.specs.importers import import_document
from compoworld_assets.engine.specs.model import READ_ONLY_EFFECTS, STATE_CHANGING_EFFECTS, Effect
from compoworld_assets.engine.specs.transitions import CHANGE_VERBS, READ_VERBS, safe_method_transition
from compoworld_assets.engine.world_model.change import (
    CreatedRecord,
    InvalidChange,
    StateChange,
    apply_change,
)
from compoworld_assets.engine.world_model.llm import LLMWorldModel
from compoworld_assets.engine.world_model.offline import OfflineWorldModel

OBJECT = {"type": "object", "properties": {"text": {"type": "string"}, "target": {"type": "string"}}}


def _openapi(paths: dict) -> dict:
    return {"openapi": "3.0.0", "info": {"title": "Lingo", "version": "1"}, "paths": paths}


def _ok(schema: dict | None = None) -> dict:
    body = {"content": {"application/json": {"schema": schema}}} if schema else {}
    return {"200": {"description": "ok", **body}}


@pytest.fixture(scope="module")
def lingo():
    notes = {"type": "object", "properties": {"id": {"type": "string"}, "text": {"type": "string"},
                                              "status": {"type": "string"}}}
    paths = {
        "/translate": {"post": {"operationId": "translateText", "requestBody": {"content": {
            "application/json": {"schema": OBJECT}}}, "responses": _ok({"type": "object", "properties": {
                "translation": {"type": "string"}}})}},
        "/stats/usage": {"get": {"operationId": "usageReport", "responses": _ok({"type": "object", "properties": {
            "characters": {"type": "integer"}}})}},
        "/rides/{id}/cancel": {"get": {"operationId": "cancelRide", "parameters": [
            {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}], "responses": _ok()}},
        "/sync": {"post": {"operationId": "runSync", "responses": _ok()}},
        "/notes": {"get": {"operationId": "listNotes", "responses": _ok({"type": "array", "items": notes})},
                   "post": {"operationId": "createNote", "requestBody": {"content": {
                       "application/json": {"schema": notes}}}, "responses": _ok(notes)}},
        "/notes/{id}": {"get": {"operationId": "getNote", "parameters": [
            {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}], "responses": _ok(notes)}},
    }
    [spec] = import_document(_openapi(paths), location="lingo.json").specs
    return spec


def test_the_read_and_change_vocabularies_do_not_overlap():
    assert not READ_VERBS & CHANGE_VERBS
    assert READ_ONLY_EFFECTS == {Effect.READ, Effect.LIST, Effect.SEARCH, Effect.QUERY}
    assert not READ_ONLY_EFFECTS & STATE_CHANGING_EFFECTS


def test_a_reading_verb_makes_a_query_whatever_the_method(lingo):
    tool = lingo.tool("translate_text")
    assert (tool.effect, tool.entity, tool.transition.kind) == (Effect.QUERY, None, "query")
    assert tool.transition.evidence == ["verb 'translate' reads or computes: it changes nothing"]
    assert not tool.changes_state


def test_a_safe_method_makes_a_query_unless_the_name_says_it_changes_something(lingo):
    usage = lingo.tool("usage_report")
    assert usage.effect is Effect.QUERY
    assert "GET is a safe HTTP method" in usage.transition.evidence[0]
    assert lingo.tool("cancel_ride").effect is Effect.ACTION  # some APIs cancel with a GET
    assert safe_method_transition("cancel_ride", "get") is None
    assert safe_method_transition("usage_report", "post") is None
    assert lingo.tool("run_sync").effect is Effect.ACTION  # a POST that says nothing stays an action


def test_entity_tools_keep_their_crud_effects(lingo):
    assert lingo.tool("get_note").effect is Effect.READ and lingo.tool("get_note").transition is None
    assert lingo.tool("create_note").effect is Effect.CREATE


def test_a_query_may_not_change_the_state(lingo):
    state = ServiceState(service_id="lingo", tables={"Note": {}})
    change = StateChange(created=[CreatedRecord(entity="Note", record={"text": "hi"})])
    with pytest.raises(InvalidChange, match="is a query tool and cannot change the state"):
        apply_change(lingo, lingo.tool("translate_text"), state, change)
    simulation = OfflineWorldModel().simulate(lingo, lingo.tool("translate_text"),
                                              {"text": "hola", "target": "en"}, state)
    # offline nothing holds the translation: the answer says so rather than make one up
    assert simulation.result["error"]["code"] == "unavailable" and simulation.change.empty
    assert "$.translation" in simulation.result["error"]["message"]


def test_the_llm_world_model_is_told_a_query_only_reads(lingo):
    model = LLMWorldModel("mock/model")
    state = ServiceState(service_id="lingo", tables={"Note": {}})
    [_, query] = model.messages(lingo, lingo.tool("translate_text"), {"text": "hola"}, state)
    [_, action] = model.messages(lingo, lingo.tool("run_sync"), {}, state)
    assert 'This tool only reads (query): leave out "changes".' in query["content"]
    assert "only reads" not in action["content"]


def test_a_verb_that_also_names_a_write_is_no_reading_verb():
    document = [{"name": name, "description": "", "parameters": {"type": "object", "properties": {
        "repository": {"type": "string"}}}} for name in ("watch_repository", "check_in_guest", "count_stars")]
    [spec] = import_document(document, location="repos.json").specs
    effects = {t.name: t.effect for t in spec.tools}
    assert effects == {"watch_repository": Effect.ACTION, "check_in_guest": Effect.ACTION,
                       "count_stars": Effect.QUERY}
