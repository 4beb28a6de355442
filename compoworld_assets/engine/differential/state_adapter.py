"""A generic adapter from a reference backend's state dict to a synthesized service's typed state.

The reference state is a dict of attributes (BFCL's ``initial_config[Class]``, or the public
attributes of an instance, normalised with :func:`~.compare.plain`). Nothing here knows any
particular backend; the rules are:

1. **Record collections.** An attribute holding a non-empty list of dicts, or a non-empty dict
   whose values are all dicts, is a collection of records. A record's id is its own ``id``
   value when it has one, else its dict key or list position, as a string. Every other
   attribute (scalars, lists of strings, dicts of lists, nested trees) goes nowhere.
2. **Collection → entity.** Each collection attribute maps to the entity whose field names
   share the most names with the union of its records' keys (ties: first entity by name);
   with no shared name it stays unmapped. The plan is made once over several states (start
   and end), so a collection that is empty in one of them still maps.
3. **Record conversion.** A mapped record keeps only the entity's fields: a field the source
   record has with a value of the field's JSON type takes that value; otherwise it gets what
   a create would store when not given (None when optional, the first enum value, else a
   typed blank). Id counters are set to the table sizes.

:func:`comparable_tables` projects a state onto the mapped entities for end-state comparison:
per mapped entity, the records without their ids (ids are generated independently on each
side and are compared through call results instead), as a sorted list of canonical JSON texts,
so two projections are equal exactly when they hold the same records (numbers by JSON text).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any

from compoworld_assets.engine.canonical import canonical_json
from compoworld_assets.engine.differential.compare import plain
from compoworld_assets.engine.runtime.state import ServiceState
from compoworld_assets.engine.specs.model import FieldSpec, ServiceSpec
from compoworld_assets.engine.synthesis.offline import TYPE_DEFAULTS

Records = list[tuple[str, dict[str, Any]]]


def record_collections(state: Mapping[str, Any]) -> dict[str, Records]:
    """Attribute name → (record id, record) for every attribute that holds records."""
    found: dict[str, Records] = {}
    for name, value in sorted(state.items()):
        if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            found[name] = [(_record_id(record, index), record) for index, record in enumerate(value)]
        elif isinstance(value, dict) and value and all(isinstance(v, dict) for v in value.values()):
            found[name] = [(_record_id(record, key), record) for key, record in value.items()]
    return found


def _record_id(record: dict[str, Any], fallback: Any) -> str:
    value = record.get("id", fallback)
    return value if isinstance(value, str) else str(value)


def plan_mapping(spec: ServiceSpec, states: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """Collection attribute → entity name, by the largest overlap of record keys and field names."""
    keys: dict[str, set[str]] = {}
    for state in states:
        for name, records in record_collections(plain(dict(state))).items():
            keys.setdefault(name, set()).update(str(k) for _, record in records for k in record)
    mapping: dict[str, str] = {}
    for name in sorted(keys):
        scored = [
            (len(keys[name] & {f.name for f in entity.fields}), entity.name)
            for entity in sorted(spec.entities, key=lambda e: e.name)
        ]
        best = max(scored, key=lambda pair: pair[0], default=(0, ""))
        if best[0] > 0:
            mapping[name] = best[1]
    return mapping


def adapt_state(spec: ServiceSpec, state: Mapping[str, Any], mapping: Mapping[str, str]) -> ServiceState:
    """Our typed state holding the mapped records of ``state`` (see the module docstring)."""
    adapted = ServiceState.empty(spec)
    collections = record_collections(plain(dict(state)))
    for attribute, entity_name in sorted(mapping.items()):
        entity = spec.entity(entity_name)
        table = adapted.tables[entity_name]
        for record_id, source in collections.get(attribute, []):
            record: dict[str, Any] = {"id": record_id}
            record.update({f.name: _field_value(f, source) for f in entity.fields})
            table[record_id] = record
        adapted.counters[entity_name] = len(table)
    return adapted


def _field_value(field: FieldSpec, source: dict[str, Any]) -> Any:
    value = source.get(field.name)
    if field.name in source and _has_json_type(value, field.json_type):
        return value
    if not field.required:
        return None
    if field.enum:
        return field.enum[0]
    return copy.deepcopy(TYPE_DEFAULTS[field.json_type])


def _has_json_type(value: Any, json_type: str) -> bool:
    if isinstance(value, bool):
        return json_type == "boolean"
    checks = {
        "string": str,
        "integer": int,
        "number": (int, float),
        "array": list,
        "object": dict,
        "boolean": bool,
    }
    return isinstance(value, checks[json_type])


def comparable_tables(
    tables: Mapping[str, Mapping[str, Mapping[str, Any]]], mapping: Mapping[str, str]
) -> dict[str, list[str]]:
    """Per mapped entity, the canonical JSON of its records without ids, sorted (a multiset)."""
    entities = sorted(set(mapping.values()))
    return {
        entity: sorted(
            canonical_json({k: v for k, v in record.items() if k != "id"})
            for record in tables.get(entity, {}).values()
        )
        for entity in entities
    }
