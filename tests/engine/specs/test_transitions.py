"""Action semantics: transitions derived from small committed specs, enforced by the generated code,
checked by verification, and declared or refused by the spec file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compoworld_assets.engine import envelope
from compoworld_assets.engine.runtime.sandbox import trusted_executor
from compoworld_assets.engine.specs.importers import import_document, import_spec_file
from compoworld_assets.engine.specs.model import Effect, Transition
from compoworld_assets.engine.specs.transitions import derive_transitions
from compoworld_assets.engine.synthesis.offline import OfflineSynthesizer
from compoworld_assets.engine.verification import minimal_seed_state, verify_service
from compoworld_assets.engine.verification.cases import generate_cases

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "transitions"
FUNCTIONS = FIXTURES / "shop_functions.json"
OPENAPI = FIXTURES / "shop_openapi.json"


@pytest.fixture(scope="module")
def shop():
    [spec] = import_spec_file(FUNCTIONS).specs
    return spec


@pytest.fixture(scope="module")
def shop_api():
    [spec] = import_spec_file(OPENAPI).specs
    return spec


def test_a_status_verb_sets_the_enum_value_it_names_and_the_name_qualifier_is_a_precondition(shop):
    tool = shop.tool("cancel_pending_order")
    assert (tool.effect, tool.entity, tool.sets) == (Effect.UPDATE, "Order", {"status": "cancelled"})
    assert tool.transition.kind == "status"
    assert tool.transition.key == "order_id"
    assert tool.transition.allowed_from == ["pending"]
    assert any("the name says pending" in line for line in tool.transition.evidence)
    # the other parameter is stored on the record: the entity gains the field, typed from the parameter
    reason = shop.entity("Order").field("reason")
    assert reason is not None and reason.enum == ["no longer needed", "ordered by mistake"] and not reason.required


def test_mark_takes_its_value_from_the_name(shop):
    tool = shop.tool("mark_order_as_delivered")
    assert tool.sets == {"status": "delivered"} and tool.transition.allowed_from is None


def test_a_field_verb_writes_the_other_parameters_and_keeps_the_qualifier(shop):
    tool = shop.tool("modify_pending_order_address")
    assert (tool.effect, tool.transition.kind, tool.transition.allowed_from) == (Effect.UPDATE, "update", ["pending"])
    assert shop.tool("assign_order").transition.kind == "update"
    assert shop.entity("Order").field("agent_name") is not None


def test_creating_verbs_make_records_of_a_named_or_new_entity(shop):
    send = shop.tool("send_message")
    assert (send.effect, send.entity) == (Effect.CREATE, "Message")
    message = shop.entity("Message")
    assert {f.name for f in message.fields} == {"receiver_id", "body"}
    assert all(f.required for f in message.fields)  # the new entity's fields follow the tool's required list


def test_a_request_verb_without_a_status_value_files_a_request_record(shop):
    tool = shop.tool("return_delivered_order_items")
    assert (tool.effect, tool.entity, tool.transition.kind) == (Effect.CREATE, "ReturnRequest", "create")
    order_ref = shop.entity("ReturnRequest").field("order_id")
    assert order_ref is not None and order_ref.type == f"{shop.id}.Order.id"


def test_no_evidence_no_transition(shop):
    assert shop.tool("transfer_to_human_agents").effect is Effect.ACTION
    assert shop.tool("log_out").effect is Effect.ACTION  # a phrasal verb, not "log" + a noun
    assert shop.tool("transfer_to_human_agents").transition is None


def test_a_spec_can_refuse_a_transition(shop):
    tool = shop.tool("escalate_order")  # "x-cw-transition": false
    assert tool.effect is Effect.ACTION and tool.transition.kind == "none"
    assert tool.transition.evidence == ["declared in the spec"]


def test_openapi_operations_get_transitions_from_the_description_and_declarations(shop_api):
    cancel = shop_api.tool("cancel_order")
    assert cancel.sets == {"status": "cancelled"}
    assert cancel.transition.allowed_from == ["confirmed", "pending"]
    assert any("the description says" in line for line in cancel.transition.evidence)
    ship = shop_api.tool("ship_order")  # declared, entity left to the key's type
    assert (ship.effect, ship.entity, ship.sets) == (Effect.UPDATE, "Order", {"status": "shipped"})
    assert ship.transition.evidence[0] == "declared in the spec"
    assert shop_api.tool("notify_order").effect is Effect.ACTION


def test_a_declared_transition_that_cannot_apply_says_why():
    document = [{"name": "ship_parcel", "description": "Ship it.", "x-cw-transition": {
        "kind": "status", "key": "parcel_ref", "field": "status", "value": "shipped"},
        "parameters": {"type": "object", "properties": {"parcel_ref": {"type": "string"}}}}]
    [spec] = import_document(document, location="parcels.json").specs
    tool = spec.tool("ship_parcel")
    assert tool.effect is Effect.ACTION and tool.transition.kind == "none"
    assert "not applied: no entity None in the service" in tool.transition.evidence[-1]


def test_a_create_whose_parameters_are_no_fields_makes_no_entity():
    """``send_ping(api-version, fields)`` would make a Ping record of nothing: it stays an action."""
    document = [{"name": "send_ping", "description": "Ping the service.", "parameters": {"type": "object",
                 "properties": {"api-version": {"type": "string"}, "fields": {"type": "string"}}}}]
    [spec] = import_document(document, location="pings.json").specs
    assert spec.entities == [] and spec.tool("send_ping").effect is Effect.ACTION


def test_a_malformed_declaration_quarantines_only_its_tool():
    document = [
        {"name": "ship_parcel", "description": "", "x-cw-transition": "yes please"},
        {"name": "get_parcel", "description": "", "parameters": {"type": "object", "properties": {}}},
    ]
    result = import_document(document, location="parcels.json")
    assert [t.name for t in result.specs[0].tools] == ["get_parcel"]
    assert "x-cw-transition must be an object" in result.quarantined[0].reason


def test_mcp_read_only_tools_become_queries():
    tools = {"tools": [{"name": "cancel_order", "annotations": {"readOnlyHint": True},
                        "inputSchema": {"type": "object", "properties": {"order_id": {"type": "string"}}}},
                       {"name": "get_order", "inputSchema": {"type": "object", "properties": {
                           "order_id": {"type": "string"}}, "required": ["order_id"]}}]}
    [spec] = import_document(tools, location="mcp.json").specs
    assert spec.tool("cancel_order").effect is Effect.QUERY
    assert spec.tool("cancel_order").transition.kind == "query"
    assert spec.tool("cancel_order").transition.evidence == ["the server marks the tool read-only"]


def test_derivation_is_deterministic_and_idempotent(shop):
    again = derive_transitions(shop)
    assert again.content_hash() == shop.content_hash()
    [fresh] = import_spec_file(FUNCTIONS).specs
    assert fresh.model_dump_json() == shop.model_dump_json()


def test_specs_without_transitions_hash_as_before():
    """The transition key is left out of a tool's dump when unset, so existing spec hashes hold."""
    [spec] = import_spec_file(FIXTURES.parent / "specs" / "bfcl_simple_python.json").specs
    assert all("transition" not in json.loads(t.model_dump_json()) for t in spec.tools if t.transition is None)


@pytest.mark.parametrize("fixture", [FUNCTIONS, OPENAPI], ids=["functions", "openapi"])
def test_every_derived_transition_verifies_as_code(fixture):
    [spec] = import_spec_file(fixture).specs
    module = OfflineSynthesizer().synthesize(spec)
    verification = verify_service(spec, module, trusted_executor, minimal_seed_state(spec, 0), 0)
    derived = {t.name for t in spec.tools if t.transition is not None and t.transition.kind != "none"}
    assert derived and derived <= set(verification.code_tools)
    cases = {c.name for t in derived for c in generate_cases(spec, spec.tool(t), minimal_seed_state(spec, 0), 0)}
    assert "precondition[status]" in cases  # a refused record exists in the seed and must be refused


def test_the_generated_code_enforces_the_preconditions(shop):
    module = OfflineSynthesizer().synthesize(shop)
    state = minimal_seed_state(shop, 0)
    orders = state.tables["Order"]
    pending = next(rid for rid, r in orders.items() if r["status"] == "pending")
    other = next(rid for rid, r in orders.items() if r["status"] != "pending")
    orders[other]["status"] = "processed"
    executor = trusted_executor(module.source)
    try:
        executor.reset(state)
        refused = executor.call("cancel_pending_order", {"order_id": other, "reason": "no longer needed"})
        assert refused["error"]["code"] == envelope.CONFLICT
        assert "it must be one of ['pending']" in refused["error"]["message"]
        done = executor.call("cancel_pending_order", {"order_id": pending, "reason": "no longer needed"})
        assert done["success"] and done["data"]["status"] == "cancelled" and done["data"]["reason"] == "no longer needed"
        again = executor.call("cancel_pending_order", {"order_id": pending, "reason": "no longer needed"})
        assert again["error"]["message"].endswith("is already 'cancelled'")
        assert executor.state().tables["Order"][pending]["status"] == "cancelled"
        bad = executor.call("cancel_pending_order", {"order_id": pending, "reason": "bored"})
        assert bad["error"]["code"] == envelope.INVALID_ARGUMENTS  # enum values are checked first
    finally:
        executor.close()


def test_refuses_matches_the_generated_messages():
    transition = Transition(kind="status", entity="Order", key="order_id", field="status", value="cancelled",
                            allowed_from=["pending"])
    assert transition.refuses({"status": "pending"}) is None
    assert transition.refuses({"status": "cancelled"}) == "is already 'cancelled'"
    assert transition.refuses({"status": "shipped"}) == "is 'shipped'; it must be one of ['pending']"


def test_a_key_keeps_none_of_the_apis_id_form():
    """Records get the service's ids (``parcel_0003``): a 34-character ``^PX…`` form would refuse every one."""
    sid = {"type": "string", "minLength": 34, "maxLength": 34, "pattern": "^PX[0-9a-f]{32}$"}
    document = [
        {"name": "create_parcel", "description": "Create a parcel.", "parameters": {"type": "object", "properties": {
            "recipient": {"type": "string"}, "weight": {"type": "number"}}, "required": ["recipient"]}},
        {"name": "get_parcel", "description": "Get a parcel.", "parameters": {"type": "object", "properties": {
            "parcel_id": sid}, "required": ["parcel_id"]}},
        {"name": "ship_parcel", "description": "Ship a parcel.", "parameters": {"type": "object", "properties": {
            "parcel_id": sid}, "required": ["parcel_id"]}},
    ]
    [spec] = import_document(document, location="parcels.json").specs
    assert spec.tool("ship_parcel").transition.kind == "status"
    for name in ("get_parcel", "ship_parcel"):
        key = spec.tool(name).parameter_properties()["parcel_id"]
        assert key == {"type": "string", "x-cw-type": f"{spec.id}.Parcel.id"}, (name, key)
