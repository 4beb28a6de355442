"""OpenAI-function / BFCL importer on real BFCL samples and malformed inputs."""

from __future__ import annotations

import json
from pathlib import Path

from compoworld_assets.engine.specs.importers import import_spec_file
from compoworld_assets.engine.specs.importers.openai_functions import import_openai_functions
from compoworld_assets.engine.specs.model import Effect

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "specs"


def _only_spec(result):
    assert len(result.specs) == 1, result.quarantined
    return result.specs[0]


def test_bfcl_simple_entries_flatten_into_one_service_with_valid_names():
    result = import_spec_file(FIXTURES / "bfcl_simple_python.json")
    spec = _only_spec(result)
    assert result.quarantined == []
    assert spec.id == "bfcl_simple_python"
    assert spec.source.kind == "bfcl"
    names = [t.name for t in spec.tools]
    assert "math_factorial" in names and "random_forest_train" in names and "calculate_triangle_area" in names
    assert {t.effect for t in spec.tools} == {Effect.ACTION, Effect.QUERY}  # calculate_*: a query


def test_gorilla_dialect_types_are_mapped():
    spec = _only_spec(import_spec_file(FIXTURES / "bfcl_simple_python.json"))
    assert spec.tool("calculate_triangle_area").parameters["type"] == "object"
    coord = spec.tool("calculate_distance").parameter_properties()["coord1"]
    assert coord["type"] == "array" and coord["items"] == {"type": "number"}
    data = spec.tool("random_forest_train").parameter_properties()["data"]
    assert "type" not in data and data["description"]


def test_bfcl_multi_turn_doc_gives_entities_effects_and_returns():
    spec = _only_spec(import_spec_file(FIXTURES / "bfcl_message_api.json"))
    assert spec.name == "Message API"
    assert spec.description.startswith("The Message API, which is used to manage user interactions")
    assert spec.tool("add_contact").effect is Effect.CREATE and spec.tool("add_contact").entity == "Contact"
    assert spec.entity("Contact").field("user_name") is not None
    assert spec.tool("list_users").effect is Effect.LIST
    assert spec.tool("add_contact").output_types() == {"user_id": "bfcl_message_api.User.id"}
    assert spec.tool("message_login").input_types() == {"user_id": "bfcl_message_api.User.id"}
    assert spec.tool("get_message_stats").returns["properties"]["stats"]["type"] == "object"
    # ``receiver_id`` names no entity the service manages: no invented reference
    assert spec.tool("send_message").input_types() == {}


def test_integer_ids_do_not_become_entity_keys():
    spec = _only_spec(import_spec_file(FIXTURES / "bfcl_ticket_api.json"))
    assert spec.tool("create_ticket").effect is Effect.CREATE
    assert [f.name for f in spec.entity("Ticket").fields] == ["title", "description", "priority"]
    assert spec.tool("get_ticket").effect is Effect.QUERY  # ticket_id is an integer: no entity read, a query
    assert spec.tool("close_ticket").effect is Effect.ACTION


def test_malformed_tools_are_quarantined_and_the_rest_imports():
    result = import_spec_file(FIXTURES / "malformed_tools.json")
    spec = _only_spec(result)
    assert [t.name for t in spec.tools] == ["get_weather", "send_email"]
    reasons = {q.location.rsplit("#", 1)[1]: q.reason for q in result.quarantined}
    assert reasons == {
        "/1": "tool has no name",
        "/2": "tool 'set_alarm': parameters is not an object (got str)",
        "/3": "tool 'ping': parameters must be a JSON-schema object, got 'array'",
        "/4": "tool entry is not an object (got str)",
    }
    assert all(q.source_kind == "openai" and q.fragment for q in result.quarantined)
    assert spec.tool("send_email").input_types() == {"to": "email"}
    assert spec.tool("get_weather").input_types() == {"city": "city", "date": "date"}


def test_openai_wrappers_and_verbs():
    tools = [
        {
            "type": "function",
            "function": {
                "name": "create_invoice",
                "description": "New invoice",
                "parameters": {
                    "type": "object",
                    "properties": {"customer_email": {"type": "string"}, "total": {"type": "number"}},
                },
            },
        },
        {
            "type": "function",
            "function": {
                "name": "get_invoice",
                "description": "One invoice",
                "parameters": {"type": "object", "properties": {"invoice_id": {"type": "string"}}},
            },
        },
        {
            "type": "function",
            "function": {
                "name": "delete_invoice",
                "description": "Remove",
                "parameters": {"type": "object", "properties": {"id": {"type": "string"}}},
            },
        },
        {
            "type": "function",
            "function": {
                "name": "search_invoices",
                "description": "Find",
                "parameters": {"type": "object", "properties": {"query": {"type": "string"}}},
            },
        },
        {
            "type": "function",
            "function": {
                "name": "update_settings",
                "description": "No entity",
                "parameters": {"type": "object", "properties": {}},
            },
        },
    ]
    spec = _only_spec(import_openai_functions({"tools": tools}, location="billing.json"))
    assert spec.source.kind == "openai" and spec.id == "billing"
    effects = {t.name: (t.effect, t.entity) for t in spec.tools}
    assert effects == {
        "create_invoice": (Effect.CREATE, "Invoice"),
        "get_invoice": (Effect.READ, "Invoice"),
        "delete_invoice": (Effect.DELETE, "Invoice"),
        "search_invoices": (Effect.SEARCH, "Invoice"),
        "update_settings": (Effect.ACTION, None),
    }
    assert spec.key_parameter(spec.tool("delete_invoice")) == "id"
    assert spec.entity("Invoice").field("customer_email").type == "email"


def test_conflicting_duplicate_is_quarantined_identical_one_skipped():
    tool = {"name": "ping", "description": "a", "parameters": {"type": "object", "properties": {}}}
    other = {**tool, "description": "b"}
    result = import_openai_functions([tool, tool, other], location="dupes.json")
    assert [t.name for t in _only_spec(result).tools] == ["ping"]
    assert len(result.quarantined) == 1 and "duplicate tool name" in result.quarantined[0].reason


def test_nothing_importable_is_one_quarantine_per_problem_and_no_spec():
    result = import_openai_functions([{"description": "nameless"}], location="x.json")
    assert result.specs == []
    assert [q.reason for q in result.quarantined] == ["tool has no name", "no importable tools"]


def test_json_lines_with_a_bad_line(tmp_path):
    good = {"name": "get_time", "description": "now", "parameters": {"type": "object", "properties": {}}}
    path = tmp_path / "tools.jsonl"
    path.write_text(json.dumps(good) + "\n{broken\n" + json.dumps({**good, "name": "get_date"}) + "\n")
    result = import_spec_file(path)
    assert [t.name for t in _only_spec(result).tools] == ["get_time", "get_date"]
    assert len(result.quarantined) == 1 and result.quarantined[0].location.endswith(":2")
