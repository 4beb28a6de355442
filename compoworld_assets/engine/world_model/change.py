"""What a simulated call does to the state: records created, updated and deleted, checked before applied.

A world model answers a call with a :class:`Simulation`: the envelope the tool returns and the
:class:`StateChange` the call makes. :func:`apply_change` validates the change against the
service's typed state (the entity exists; a created record fits the entity's record model, its
enums and shared types, and takes a fresh id; an updated or deleted record exists; updated fields are fields of the entity;
same-service references point at records that exist afterwards) and returns the new state, so a
backend can retry an invalid change and the runtime never applies one.
"""

from __future__ import annotations

import copy
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from compoworld_assets.engine.runtime.records import record_problem
from compoworld_assets.engine.runtime.state import ServiceState
from compoworld_assets.engine.specs.model import READ_ONLY_EFFECTS, ServiceSpec, ToolSpec


class CreatedRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    entity: str
    record: dict[str, Any] = Field(description="The new record; without an id it gets the entity's next one.")


class UpdatedRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    entity: str
    id: str
    fields: dict[str, Any]


class DeletedRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    entity: str
    id: str


class StateChange(BaseModel):
    model_config = ConfigDict(extra="forbid")

    created: list[CreatedRecord] = Field(default_factory=list)
    updated: list[UpdatedRecord] = Field(default_factory=list)
    deleted: list[DeletedRecord] = Field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.created or self.updated or self.deleted)


class Simulation(BaseModel):
    """One simulated call: the envelope the tool returns and the state change it makes."""

    result: dict[str, Any]
    change: StateChange = Field(default_factory=StateChange)


class InvalidChange(ValueError):
    """A proposed state change that does not fit the service's typed state."""


def apply_change(spec: ServiceSpec, tool: ToolSpec, state: ServiceState, change: StateChange) -> ServiceState:
    """The state after ``change`` (``state`` itself is not touched); raises :class:`InvalidChange`.

    Read-only tools (read, list, search, query) may not change anything. Created records without an id get the
    entity's next free one (``<prefix>_<NNNN>``, as generated code numbers them).
    """
    if change.empty:
        return state
    if tool.effect in READ_ONLY_EFFECTS:
        raise InvalidChange(f"{tool.name} is a {tool.effect} tool and cannot change the state")
    after = state.snapshot()
    touched: list[tuple[str, str]] = []
    for created in change.created:
        entity = _entity(spec, created.entity)
        table = after.tables.setdefault(entity.name, {})
        record = copy.deepcopy(created.record)
        unknown = sorted(name for name in record if name != "id" and entity.field(name) is None)
        if unknown:
            raise InvalidChange(f"created {entity.name}: {unknown} are not its fields")
        record_id = record.get("id")
        if record_id is None:
            record_id = _next_id(after, entity.name, entity.id_prefix)
        elif not isinstance(record_id, str) or record_id in table:
            raise InvalidChange(f"created {entity.name} {record_id!r}: the id must be a new string")
        record = {**{f.name: record.get(f.name) for f in entity.fields}, **record, "id": record_id}
        table[record_id] = record
        touched.append((entity.name, record_id))
    for updated in change.updated:
        entity = _entity(spec, updated.entity)
        record = after.tables.get(entity.name, {}).get(updated.id)
        if record is None:
            raise InvalidChange(f"updated {entity.name} {updated.id!r} does not exist")
        unknown = sorted(name for name in updated.fields if name == "id" or entity.field(name) is None)
        if unknown:
            raise InvalidChange(f"updated {entity.name} {updated.id!r}: {unknown} are not its fields")
        record.update(copy.deepcopy(updated.fields))
        touched.append((entity.name, updated.id))
    for deleted in change.deleted:
        entity = _entity(spec, deleted.entity)
        if after.tables.get(entity.name, {}).pop(deleted.id, None) is None:
            raise InvalidChange(f"deleted {entity.name} {deleted.id!r} does not exist")
    for entity_name, record_id in touched:
        record = after.tables[entity_name].get(record_id)
        if record is not None:
            _check_record(spec, after, entity_name, record)
    return after


def _entity(spec: ServiceSpec, name: str):
    try:
        return spec.entity(name)
    except KeyError:
        raise InvalidChange(f"{spec.id} has no entity {name!r}") from None


def _next_id(state: ServiceState, entity: str, prefix: str) -> str:
    table = state.tables.setdefault(entity, {})
    number = state.counters.get(entity, len(table))
    while True:
        number += 1
        record_id = f"{prefix}_{number:04d}"
        if record_id not in table:
            state.counters[entity] = number
            return record_id


def _check_record(spec: ServiceSpec, state: ServiceState, entity_name: str, record: dict[str, Any]) -> None:
    problem = record_problem(spec, entity_name, record, state.tables)
    if problem is not None:
        raise InvalidChange(problem)
