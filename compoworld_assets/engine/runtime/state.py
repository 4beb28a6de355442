"""Typed service and world state with snapshot/restore, a canonical hash and diffs.

A service's state is a set of tables, one per entity: ``tables[entity][id] = record``.
Records are plain JSON objects so that they cross the sandbox boundary unchanged; their
types are enforced by pydantic models built from the entity specs (:func:`record_model`).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from compoworld_assets.engine.canonical import canonical_json, content_hash, plain_canonical_json, text_hash
from compoworld_assets.engine.identity_cache import WeakIdentityCache
from compoworld_assets.engine.runtime.worker import copy_state
from compoworld_assets.engine.specs.model import EntitySpec, ServiceSpec

_PY_TYPES: dict[str, Any] = {
    "string": str,
    "integer": int,
    "number": float,
    "boolean": bool,
    "array": list,
    "object": dict,
}


# A state's entity tables (``tables[entity][id] = record``) and id counters, as typed wherever a state is checked.
Tables = dict[str, dict[str, dict[str, Any]]]
Counters = dict[str, int]


class ServiceState(BaseModel):
    """The state of one service: entity tables and id counters."""

    service_id: str
    tables: Tables = Field(default_factory=dict)
    counters: Counters = Field(default_factory=dict)

    @classmethod
    def empty(cls, spec: ServiceSpec) -> ServiceState:
        return cls(service_id=spec.id, tables={e.name: {} for e in spec.entities},
                   counters={e.name: 0 for e in spec.entities})

    def canonical_json(self) -> str:
        """The canonical JSON of the state's JSON dump. Records are JSON data (they cross the sandbox as JSON), and
        the dump of JSON data is that data, so the state is encoded as held, without the dump (a third of the cost
        of hashing a paper-scale task's world); a state holding anything else (a NaN, a date) is dumped first."""
        text = plain_canonical_json({"service_id": self.service_id, "tables": self.tables, "counters": self.counters})
        return text if text is not None else canonical_json(self.model_dump(mode="json"))

    def content_hash(self) -> str:
        return text_hash(self.canonical_json())

    def same_content(self, other: ServiceState) -> bool:
        """Whether ``other`` holds the same records and counters, by Python value equality.

        An order of magnitude cheaper than comparing :meth:`content_hash` (no dump, no JSON, no
        digest), which matters where verification compares a large state after every case. Value
        equality counts ``1``, ``1.0`` and ``True`` as equal: the rule the sandbox child applies when
        it decides whether a call changed its state at all.
        """
        return (self.service_id == other.service_id and self.counters == other.counters
                and self.tables == other.tables)

    def snapshot(self) -> ServiceState:
        """A deep copy, made by :func:`copy_state` (records are JSON data) instead of a pydantic deep copy,
        which walks every value through ``copy.deepcopy`` and dominated task instantiation on large worlds."""
        return ServiceState.model_construct(self.model_fields_set, service_id=self.service_id,
                                            tables=copy_state(self.tables), counters=dict(self.counters))

    def validate_records(self, spec: ServiceSpec) -> list[str]:
        """Type errors of every stored record against the spec's entities (empty when valid)."""
        problems: list[str] = []
        for entity in spec.entities:
            model = record_model(spec.id, entity.model_dump_json())
            for record_id, record in self.tables.get(entity.name, {}).items():
                if record.get("id") != record_id:
                    problems.append(f"{entity.name}/{record_id}: id field {record.get('id')!r} != key")
                try:
                    model.model_validate(record)
                except ValueError as exc:
                    problems.append(f"{entity.name}/{record_id}: {exc}")
        unknown = set(self.tables) - {e.name for e in spec.entities}
        problems.extend(f"unknown table {name!r}" for name in sorted(unknown))
        return problems


class Change(BaseModel):
    model_config = ConfigDict(frozen=True)

    service: str
    entity: str
    id: str
    kind: Literal["added", "removed", "changed"]
    fields: tuple[str, ...] = ()


# States are values (see ServiceRuntime): a state object's hash is worked out once, while the object lives.
_service_hash: WeakIdentityCache[ServiceState, str] = WeakIdentityCache(ServiceState.content_hash)


def state_hash(state: ServiceState) -> str:
    """``state.content_hash()``, once per state object (the world hash, the world-model cache key)."""
    return _service_hash(state)


class WorldState(BaseModel):
    """The states of all services mounted in one episode."""

    services: dict[str, ServiceState] = Field(default_factory=dict)

    def content_hash(self) -> str:
        """The hash of each service's hash, by service id. States are values, so a service's hash is worked out
        once per state object: of a world of fifteen mounted services, most of them seed states shared by every
        episode that mounts them, only the states that changed are hashed again (hashing whole worlds was a seventh
        of a paper-scale round's rollouts)."""
        return content_hash({sid: state_hash(state) for sid, state in sorted(self.services.items())})

    def snapshot(self) -> WorldState:
        return WorldState.model_construct(self.model_fields_set,
                                          services={k: v.snapshot() for k, v in self.services.items()})

    def restore(self, snapshot: WorldState) -> None:
        """Make this state equal to ``snapshot`` (which stays untouched)."""
        self.services = snapshot.snapshot().services

    def diff(self, other: WorldState) -> list[Change]:
        """The record-level changes that turn ``self`` into ``other``, in a stable order."""
        changes: list[Change] = []
        for service_id in sorted(set(self.services) | set(other.services)):
            before = self.services.get(service_id)
            after = other.services.get(service_id)
            changes.extend(diff_service(before.tables if before else {}, after.tables if after else {},
                                        service_id))
        return changes


def diff_service(before: dict[str, dict[str, dict[str, Any]]], after: dict[str, dict[str, dict[str, Any]]],
                 service_id: str) -> list[Change]:
    changes: list[Change] = []
    for entity in sorted(set(before) | set(after)):
        old_rows, new_rows = before.get(entity, {}), after.get(entity, {})
        for record_id in sorted(set(old_rows) | set(new_rows)):
            old, new = old_rows.get(record_id), new_rows.get(record_id)
            if old is None:
                changes.append(Change(service=service_id, entity=entity, id=record_id, kind="added"))
            elif new is None:
                changes.append(Change(service=service_id, entity=entity, id=record_id, kind="removed"))
            elif old != new:
                fields = tuple(sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k)))
                changes.append(Change(service=service_id, entity=entity, id=record_id, kind="changed",
                                      fields=fields))
    return changes


@lru_cache(maxsize=4096)
def record_model(service_id: str, entity_json: str) -> type[BaseModel]:
    """A strict pydantic model of one entity's records (cached by the entity's JSON)."""
    entity = EntitySpec.model_validate_json(entity_json)
    fields: dict[str, Any] = {"id": (str, ...)}
    for index, f in enumerate(entity.fields):
        py_type = _PY_TYPES[f.json_type]
        if f.json_type == "number":
            py_type = float | int
        # Attribute names are positional; the record's own field name (``__init__``, ``model_config``,
        # ``_x`` or any other string a spec may hold) is only the alias pydantic validates by.
        default = Field(alias=f.name) if f.required else Field(None, alias=f.name)
        fields[f"field_{index}"] = (py_type if f.required else py_type | None, default)
    return create_model(  # type: ignore[call-overload]
        f"{service_id}_{entity.name}",
        __config__=ConfigDict(strict=True, extra="forbid"),
        **fields,
    )
