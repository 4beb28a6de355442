"""A minimal seeded state for verification when no richer seeder is at hand.

Records are built entity by entity, referenced entities first, so that same-service references
point at stored records; every value is type-valid for its field.
"""

from __future__ import annotations

import random
from typing import Any

from compoworld_assets.engine.runtime.state import ServiceState
from compoworld_assets.engine.specs.model import EntitySpec, ServiceSpec
from compoworld_assets.engine.specs.transitions import ready_statuses
from compoworld_assets.engine.types import is_entity_ref, parse_entity_ref
from compoworld_assets.engine.values import schema_value

OPTIONAL_BLANK_RATE = 0.25


def minimal_seed_state(spec: ServiceSpec, seed: int, rows_per_entity: int = 3) -> ServiceState:
    rng = random.Random(f"{seed}:{spec.id}:seed")
    state = ServiceState.empty(spec)
    ready_by_entity = ready_statuses(spec)
    for entity in _referenced_first(spec):
        table = state.tables[entity.name]
        ready = ready_by_entity.get(entity.name, [])
        for number in range(1, max(rows_per_entity, len(ready) + 1) + 1):
            record_id = f"{entity.id_prefix}_{number:04d}"
            record: dict[str, Any] = {"id": record_id}
            for f in entity.fields:
                target = _same_service_target(spec, f.type)
                if not f.required and rng.random() < OPTIONAL_BLANK_RATE:
                    record[f.name] = None
                elif target is not None:
                    ids = sorted(state.tables[target])
                    record[f.name] = (
                        rng.choice(ids) if ids else (None if not f.required else f"{target}_missing")
                    )
                else:
                    record[f.name] = schema_value(f.json_schema(), rng)
            for field_name, value in ready[number - 1:number]:
                record[field_name] = value
            table[record_id] = record
        state.counters[entity.name] = rows_per_entity
    return state


def _same_service_target(spec: ServiceSpec, type_name: str | None) -> str | None:
    if not is_entity_ref(type_name):
        return None
    service, entity = parse_entity_ref(type_name or "")
    return entity if service == spec.id and entity in {e.name for e in spec.entities} else None


def _referenced_first(spec: ServiceSpec) -> list[EntitySpec]:
    """Entities ordered so that each comes after the entities it references (cycles: spec order)."""
    ordered: list[EntitySpec] = []
    pending = list(spec.entities)
    while pending:
        placed = {e.name for e in ordered}
        ready = [
            e
            for e in pending
            if all(_same_service_target(spec, f.type) in placed | {None, e.name} for f in e.fields)
        ]
        chosen = ready[0] if ready else pending[0]
        ordered.append(chosen)
        pending.remove(chosen)
    return ordered
