"""The built-in service library: size, conventions and how the services connect."""

from __future__ import annotations

from collections import Counter

import pytest

from compoworld_assets.engine.library import builtin_service_ids, builtin_spec, builtin_specs
from compoworld_assets.engine.specs.model import Effect, ServiceSpec
from compoworld_assets.engine.types import TYPE_KEY, entity_ref, is_entity_ref, parse_entity_ref

SPECS = builtin_specs()
BY_ID = {spec.id: spec for spec in SPECS}
ALL_TOOLS = [(spec, tool) for spec in SPECS for tool in spec.tools]


def spec_types(spec: ServiceSpec) -> set[str]:
    """Every shared type or entity reference a service's fields and tools mention."""
    found = {f.type for e in spec.entities for f in e.fields if f.type}
    for tool in spec.tools:
        found |= set(tool.input_types().values()) | set(tool.output_types().values())
    return found


def cross_service_ref_edges() -> set[tuple[str, str, str]]:
    """(service, field-or-parameter path, referenced type) for references into other services."""
    edges = set()
    for spec in SPECS:
        for entity in spec.entities:
            for f in entity.fields:
                if is_entity_ref(f.type) and parse_entity_ref(f.type)[0] != spec.id:
                    edges.add((spec.id, f"{entity.name}.{f.name}", f.type))
        for tool in spec.tools:
            for name, kind in tool.input_types().items():
                if is_entity_ref(kind) and parse_entity_ref(kind)[0] != spec.id:
                    edges.add((spec.id, f"{tool.name}({name})", kind))
    return edges


def test_library_is_large_and_broad() -> None:
    assert len(SPECS) >= 26
    assert len({spec.domain for spec in SPECS}) >= 10
    assert len(ALL_TOOLS) >= 330
    assert min(len(spec.tools) for spec in SPECS) >= 10


def test_order_and_lookup_are_stable() -> None:
    assert [spec.id for spec in builtin_specs()] == builtin_service_ids()
    assert builtin_spec("crm") == BY_ID["crm"]
    with pytest.raises(KeyError):
        builtin_spec("no_such_service")


def test_callers_get_copies() -> None:
    spec = builtin_spec("mail")
    spec.tools.clear()
    assert builtin_spec("mail").tools


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.id)
def test_spec_round_trips_through_json(spec: ServiceSpec) -> None:
    again = ServiceSpec.model_validate_json(spec.model_dump_json())
    assert again == spec
    assert again.content_hash() == spec.content_hash()
    assert spec.source.kind == "builtin"
    assert spec.source.location.startswith("compoworld_assets.engine.library:")


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.id)
def test_tools_follow_the_crud_conventions(spec: ServiceSpec) -> None:
    for tool in spec.tools:
        params = tool.parameter_properties()
        if tool.entity is None:
            assert tool.effect == Effect.QUERY  # live data and computations: read-only
            continue
        entity = spec.entity(tool.entity)
        record = entity.record_schema(spec.id)
        field_names = {f.name for f in entity.fields}
        own_ref = entity_ref(spec.id, entity.name)
        if tool.effect == Effect.CREATE:
            assert set(params) == field_names - set(tool.sets), tool.name
            assert tool.returns == record
        elif tool.effect in (Effect.READ, Effect.UPDATE, Effect.DELETE):
            key = spec.key_parameter(tool)
            assert key in tool.required_parameters(), tool.name
            assert set(params) - {key} <= field_names, tool.name
            if tool.effect == Effect.DELETE:
                assert tool.returns["properties"]["deleted"][TYPE_KEY] == own_ref
            else:
                assert tool.returns == record
        elif tool.effect in (Effect.LIST, Effect.SEARCH):
            assert tool.returns["properties"]["items"]["items"] == record
            assert tool.returns["properties"]["count"] == {"type": "integer"}
            assert "limit" in params
            if tool.effect == Effect.SEARCH:
                assert tool.required_parameters() == ["query"]
            else:
                assert set(params) - {"limit"} <= field_names
        for name, value in tool.sets.items():
            field = entity.field(name)
            assert field is not None and (field.enum is None or value in field.enum), (tool.name, name)


def test_every_entity_reference_resolves_to_a_library_entity() -> None:
    for spec in SPECS:
        for kind in spec_types(spec):
            if is_entity_ref(kind):
                service_id, entity = parse_entity_ref(kind)
                assert service_id in BY_ID, (spec.id, kind)
                BY_ID[service_id].entity(entity)


def test_id_prefixes_are_unique_across_the_library() -> None:
    prefixes = Counter(e.id_prefix for spec in SPECS for e in spec.entities)
    assert [p for p, n in prefixes.items() if n > 1] == []


def test_every_service_shares_a_type_with_another_service() -> None:
    types = {spec.id: spec_types(spec) for spec in SPECS}
    for spec in SPECS:
        others = set().union(*(t for sid, t in types.items() if sid != spec.id))
        assert types[spec.id] & others, spec.id


def test_services_connect_through_entity_references() -> None:
    edges = cross_service_ref_edges()
    assert len(edges) >= 60
    targets = {kind for _, _, kind in edges}
    for kind in ("crm.Contact.id", "orders.Order.id", "hr.Employee.id", "invoicing.Invoice.id",
                 "travel.Trip.id", "projects.Project.id", "inventory.Product.id"):
        assert kind in targets
    linked = {sid for sid, _, _ in edges} | {kind.split(".")[0] for kind in targets}
    assert len(linked) >= 22


def test_the_designed_cross_service_links_are_typed() -> None:
    assert BY_ID["crm"].entity("Contact").field("email").type == "email"
    assert BY_ID["mail"].entity("Message").field("to").type == "email"
    assert BY_ID["invoicing"].entity("Invoice").field("payer_email").type == "email"
    assert BY_ID["invoicing"].entity("Invoice").field("contact_id").type == "crm.Contact.id"
    assert BY_ID["helpdesk"].entity("Ticket").field("order_id").type == "orders.Order.id"
    assert BY_ID["calendar"].entity("Attendee").field("email").type == "email"
    assert BY_ID["hr"].entity("Employee").field("manager_id").type == "hr.Employee.id"
    booking = BY_ID["travel"].entity("FlightBooking")
    assert (booking.field("price").type, booking.field("currency").type) == ("money", "currency")
    assert BY_ID["docs"].entity("Document").field("file_path").type == "file_path"
    assert BY_ID["mail"].entity("Message").field("attachment_path").type == "file_path"


def test_world_model_only_tools_are_few_and_unimplementable() -> None:
    unimplementable = [(spec.id, tool.name) for spec, tool in ALL_TOOLS if not tool.implementable]
    assert 5 <= len(unimplementable) <= 0.05 * len(ALL_TOOLS)
    assert ("payments", "convert_currency") in unimplementable
    assert ("docs", "summarize_document") in unimplementable
    for spec, tool in ALL_TOOLS:
        assert tool.implementable == (tool.effect != Effect.QUERY), (spec.id, tool.name)


def test_tool_schemas_carry_shared_types() -> None:
    send = BY_ID["mail"].tool("send_email")
    assert send.input_types()["to"] == "email"
    assert send.sets == {"folder": "sent", "is_read": True}
    assert "folder" not in send.parameter_properties()
    listing = BY_ID["crm"].tool("list_contacts")
    assert listing.output_types()["items[].email"] == "email"
    assert listing.input_types()["account_id"] == "crm.Account.id"
    assert BY_ID["helpdesk"].tool("close_ticket").sets == {"status": "closed"}
