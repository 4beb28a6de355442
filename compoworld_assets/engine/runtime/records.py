"""Whether one record fits its entity: the typed record model, enums, shared types and references.

Shared by everything that writes records it did not generate itself: a world model's state change
(:mod:`compoworld_assets.engine.world_model.change`) and a spec's seed data
(:mod:`compoworld_assets.engine.specs.importers.seed_data`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from compoworld_assets.engine.runtime.state import record_model
from compoworld_assets.engine.specs.model import ServiceSpec
from compoworld_assets.engine.types import is_entity_ref, parse_entity_ref, value_matches_type


def record_problem(spec: ServiceSpec, entity_name: str, record: dict[str, Any],
                   tables: Mapping[str, Mapping[str, Any]] | None = None) -> str | None:
    """What is wrong with ``record`` as a record of ``entity_name`` (None: nothing).

    With ``tables``, same-service references must name records present in them.
    """
    entity = spec.entity(entity_name)
    label = f"{entity_name} {record.get('id')!r}"
    try:
        record_model(spec.id, entity.model_dump_json()).model_validate(record)
    except ValueError as exc:
        return f"{label} does not fit the entity: {str(exc)[:300]}"
    for f in entity.fields:
        value = record.get(f.name)
        if value is None:
            continue
        if f.enum is not None and value not in f.enum:
            return f"{label}: {f.name} must be one of {f.enum!r}, not {value!r}"
        if f.type is not None and not is_entity_ref(f.type) and not value_matches_type(f.type, value):
            return f"{label}: {f.name} {value!r} is not a valid {f.type}"
        if tables is None or not is_entity_ref(f.type):
            continue
        service, target = parse_entity_ref(f.type or "")
        if service == spec.id and target in tables and value not in tables[target]:
            return f"{label}: {f.name} names {target} {value!r}, which does not exist"
    return None
