from __future__ import annotations

from compoworld_assets.engine.differential.state_adapter import (
    adapt_state,
    comparable_tables,
    plan_mapping,
    record_collections,
)
from compoworld_assets.engine.specs.model import (
    Effect,
    EntitySpec,
    FieldSpec,
    ServiceSpec,
    SourceRef,
    ToolSpec,
)


def desk_spec() -> ServiceSpec:
    ticket = EntitySpec(
        name="Ticket",
        id_prefix="ticket",
        fields=[
            FieldSpec(name="title", json_type="string"),
            FieldSpec(name="priority", json_type="integer"),
            FieldSpec(name="tags", json_type="array", required=False),
        ],
    )
    user = EntitySpec(name="User", id_prefix="user", fields=[FieldSpec(name="user_name", json_type="string")])
    return ServiceSpec(
        id="desk",
        name="Desk",
        domain="support",
        description="Tickets.",
        source=SourceRef(kind="bfcl", location="test"),
        entities=[ticket, user],
        tools=[
            ToolSpec(
                name="create_ticket",
                description="Create.",
                parameters={"type": "object", "properties": {"title": {"type": "string"}}},
                effect=Effect.CREATE,
                entity="Ticket",
            )
        ],
    )


CONFIG = {
    "ticket_queue": [
        {"id": 1, "title": "Printer", "priority": 3, "status": "Open"},
        {"id": 2, "title": "VPN", "priority": "high"},
    ],
    "tweets": {"0": {"content": "hi", "tags": []}},
    "user_map": {"Alice": "USR001"},
    "inbox": [],
    "ticket_counter": 3,
    "current_user": "alice",
}


def test_record_collections_are_lists_and_dicts_of_dicts():
    found = record_collections(CONFIG)
    assert sorted(found) == ["ticket_queue", "tweets"]
    assert [record_id for record_id, _ in found["ticket_queue"]] == ["1", "2"]
    assert [record_id for record_id, _ in found["tweets"]] == ["0"]


def test_plan_maps_by_field_overlap_and_skips_unrelated_collections():
    mapping = plan_mapping(desk_spec(), [CONFIG, {"users": [{"user_name": "a"}], "logs": [{"line": 1}]}])
    assert mapping == {"ticket_queue": "Ticket", "tweets": "Ticket", "users": "User"}
    assert plan_mapping(desk_spec(), [{"logs": [{"line": 1}]}]) == {}


def test_adapt_state_keeps_typed_fields_and_fills_defaults():
    spec = desk_spec()
    state = adapt_state(spec, CONFIG, {"ticket_queue": "Ticket"})
    assert state.tables["Ticket"] == {
        "1": {"id": "1", "title": "Printer", "priority": 3, "tags": None},
        "2": {"id": "2", "title": "VPN", "priority": 0, "tags": None},
    }
    assert state.counters["Ticket"] == 2
    assert state.tables["User"] == {}
    assert state.validate_records(spec) == []


def test_comparable_tables_ignore_ids_but_not_contents():
    mapping = {"ticket_queue": "Ticket"}
    ours = {"Ticket": {"ticket_0001": {"id": "ticket_0001", "title": "A", "priority": 1, "tags": None}}}
    same = {"Ticket": {"1": {"id": "1", "title": "A", "priority": 1, "tags": None}}}
    other = {"Ticket": {"1": {"id": "1", "title": "A", "priority": 2, "tags": None}}}
    assert comparable_tables(ours, mapping) == comparable_tables(same, mapping)
    assert comparable_tables(ours, mapping) != comparable_tables(other, mapping)
    assert comparable_tables(ours, {}) == {}
