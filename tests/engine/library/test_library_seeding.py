"""Seeded initial state: valid, deterministic and connected across services."""

from __future__ import annotations

from datetime import date, datetime

import pytest

from compoworld_assets.engine.library import builtin_spec, builtin_specs
from compoworld_assets.engine.library.builder import ServiceBuilder, field
from compoworld_assets.engine.library.seeding import Population, seed_service_state, seed_world
from compoworld_assets.engine.specs.model import EntitySpec, FieldSpec, ServiceSpec, SourceRef, ToolSpec
from compoworld_assets.engine.types import is_entity_ref, parse_entity_ref, value_matches_type
from compoworld_assets.engine.world_model.schema import schema_errors

SPECS = builtin_specs()
WORLD = seed_world(SPECS, seed=11)


def column(service: str, entity: str, name: str) -> set:
    return {row[name] for row in WORLD.services[service].tables[entity].values() if row[name] is not None}


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.id)
def test_seeded_records_validate_and_fill_every_table(spec: ServiceSpec) -> None:
    state = WORLD.services[spec.id]
    assert state.validate_records(spec) == []
    for entity in spec.entities:
        table = state.tables[entity.name]
        assert sorted(table) == [f"{entity.id_prefix}_{n:04d}" for n in range(1, 9)]
        assert state.counters[entity.name] == 8


def test_typed_values_match_their_shared_types() -> None:
    checked = 0
    for spec in SPECS:
        for entity in spec.entities:
            for row in WORLD.services[spec.id].tables[entity.name].values():
                for f in entity.fields:
                    if f.type and row[f.name] is not None:
                        assert value_matches_type(f.type, row[f.name]), (spec.id, entity.name, f.name)
                        checked += 1
                    if f.enum and row[f.name] is not None:
                        assert row[f.name] in f.enum
    assert checked > 1000


def test_every_reference_points_at_an_existing_record() -> None:
    ids = {(sid, entity): set(table)
           for sid, state in WORLD.services.items() for entity, table in state.tables.items()}
    refs = 0
    for spec in SPECS:
        for entity in spec.entities:
            for f in entity.fields:
                if not is_entity_ref(f.type):
                    continue
                for row in WORLD.services[spec.id].tables[entity.name].values():
                    if row[f.name] is not None:
                        assert row[f.name] in ids[parse_entity_ref(f.type)], (spec.id, entity.name, f.name)
                        refs += 1
    assert refs > 300


def test_self_references_never_point_at_their_own_row() -> None:
    for row in WORLD.services["hr"].tables["Employee"].values():
        assert row["manager_id"] != row["id"]


def test_same_seed_same_world_and_other_seed_other_world() -> None:
    assert seed_world(SPECS, seed=11).content_hash() == WORLD.content_hash()
    assert seed_world(SPECS, seed=12).content_hash() != WORLD.content_hash()


def test_a_service_seeds_identically_alone_or_in_a_world() -> None:
    alone = seed_service_state(builtin_spec("invoicing"), Population.generate(11), seed=11)
    assert alone.content_hash() == WORLD.services["invoicing"].content_hash()


def test_customers_recur_across_services() -> None:
    contacts = column("crm", "Contact", "email")
    assert contacts & column("mail", "Message", "to")
    assert contacts & column("invoicing", "Invoice", "payer_email")
    assert contacts & column("helpdesk", "Ticket", "customer_email")
    assert column("hr", "Employee", "email") & column("expenses", "ExpenseReport", "submitter_email")
    assert column("files", "File", "path") & column("docs", "Document", "file_path")


def test_a_ticket_and_its_order_concern_the_same_customer() -> None:
    orders = WORLD.services["orders"].tables["Order"]
    linked = [t for t in WORLD.services["helpdesk"].tables["Ticket"].values() if t["order_id"]]
    assert linked
    for ticket in linked:
        assert orders[ticket["order_id"]]["customer_email"] == ticket["customer_email"]


def test_fields_describing_one_person_agree() -> None:
    people = {p.email: p for p in Population.generate(11).everyone()}
    for row in WORLD.services["orders"].tables["Order"].values():
        person = people[row["customer_email"]]
        assert row["customer_name"] == person.full_name
        assert (row["city"], row["country"]) == (person.city, person.country)
    staff = {p.email for p in Population.generate(11).staff}
    assert column("hr", "Employee", "email") <= staff
    assert not column("crm", "Contact", "email") & staff


def test_intervals_end_after_they_start() -> None:
    for row in WORLD.services["calendar"].tables["Event"].values():
        assert datetime.fromisoformat(row["start"]) < datetime.fromisoformat(row["end"])
    for row in WORLD.services["travel"].tables["HotelBooking"].values():
        assert date.fromisoformat(row["check_in"]) < date.fromisoformat(row["check_out"])
    for row in WORLD.services["invoicing"].tables["Invoice"].values():
        assert row["issue_date"] < row["due_date"]


def test_population_is_seeded_and_emails_are_unique() -> None:
    population = Population.generate(3)
    assert population == Population.generate(3)
    assert population != Population.generate(4)
    emails = [p.email for p in population.everyone()]
    assert len(emails) == len(set(emails))
    assert all(p.company == population.home_company.name for p in population.staff)


def imported_spec() -> ServiceSpec:
    """An imported-looking spec: untyped, name-hinted fields and a reference into a built-in service."""
    entity = EntitySpec(name="Lead", id_prefix="lead", fields=[
        FieldSpec(name="contact_email", json_type="string"),
        FieldSpec(name="created_at", json_type="string"),
        FieldSpec(name="score", json_type="integer"),
        FieldSpec(name="amount", json_type="number"),
        FieldSpec(name="tags", json_type="array"),
        FieldSpec(name="extra", json_type="object", required=False),
        FieldSpec(name="owner", json_type="string", type="crm.Contact.id"),
        FieldSpec(name="stage", json_type="integer", enum=[1, 2, 3]),
    ])
    tool = ToolSpec(name="list_leads", description="List.", effect="list", entity="Lead")
    return ServiceSpec(id="leadgen", name="Leads", domain="crm", description="Imported.",
                       source=SourceRef(kind="openapi", location="leads.yaml"), entities=[entity],
                       tools=[tool])


def test_imported_specs_are_seeded_with_realistic_values() -> None:
    spec = imported_spec()
    state = seed_service_state(spec, Population.generate(5), seed=5, rows_per_entity=4)
    assert state.validate_records(spec) == []
    rows = list(state.tables["Lead"].values())
    assert all(value_matches_type("email", r["contact_email"]) for r in rows)
    assert all(value_matches_type("datetime", r["created_at"]) for r in rows)
    assert all(r["owner"].startswith("cont_") for r in rows)


def test_array_fields_with_item_schemas_are_seeded_with_valid_items() -> None:
    link = {"type": "object", "properties": {"href": {"type": "string", "format": "uri"},
                                             "code": {"type": "string", "pattern": "^[A-Z]{3}$"}},
            "required": ["href", "code"]}
    entity = EntitySpec(name="Bookmark", id_prefix="bookmark", fields=[
        FieldSpec(name="links", json_type="array", items=link),
        FieldSpec(name="tags", json_type="array"),
    ])
    tool = ToolSpec(name="list_bookmarks", description="List.", effect="list", entity="Bookmark")
    spec = ServiceSpec(id="bookmarks", name="Bookmarks", domain="web", description="Imported.",
                       source=SourceRef(kind="openapi", location="b.yaml"), entities=[entity], tools=[tool])
    state = seed_service_state(spec, Population.generate(3), seed=3, rows_per_entity=4)
    record_schema = entity.record_schema(spec.id)
    for row in state.tables["Bookmark"].values():
        assert schema_errors(record_schema, row) == []
        assert row["links"] and all(value_matches_type("url", link["href"]) for link in row["links"])
        assert all(isinstance(tag, str) for tag in row["tags"])


def test_zero_rows_gives_empty_tables() -> None:
    b = ServiceBuilder("tiny", "Tiny", "test", "Tiny.", "test")
    b.entity("Item", "item", "An item.", field("parent_id", "tiny.Item.id"))
    b.crud("Item", "L")
    state = seed_service_state(b.build(), Population.generate(1), seed=1, rows_per_entity=0)
    assert state.tables == {"Item": {}} and state.counters == {"Item": 0}
    with pytest.raises(ValueError):
        seed_service_state(b.build(), Population.generate(1), seed=1, rows_per_entity=-1)


def test_a_world_of_some_tables_holds_them_and_what_they_refer_to_as_a_full_world_does() -> None:
    """Seeding only the tables a task reaches: each seeded table is the one a full world has; the rest are empty."""
    from compoworld_assets.engine.library.seeding import with_referenced

    spec = builtin_spec("projects")
    referring = next(e for e in spec.entities if any(
        is_entity_ref(f.type) and parse_entity_ref(f.type)[0] == spec.id and parse_entity_ref(f.type)[1] != e.name
        for f in e.fields if f.type))
    wanted = with_referenced(spec, [referring.name])
    assert referring.name in wanted and len(wanted) > 1, "the entity and what its records refer to"
    full = seed_world([spec], 7).services[spec.id]
    some = seed_world([spec], 7, entities={spec.id: [referring.name]}).services[spec.id]
    for entity in spec.entities:
        assert some.tables[entity.name] == (full.tables[entity.name] if entity.name in wanted else {})
