"""Returns schemas for CRUD tools that describe what the CRUD conventions make them return.

A source API's response schema often disagrees with the typed state the tool works on: ids
with a ``pattern`` our generated ids never match, optional attributes typed non-nullable,
lists returned bare instead of paged. Once an importer binds a tool to an entity, its returns
are restated from the entity's record schema, exactly as the built-in library states them:
create/read/update → one record, list/search → ``{"items": [record...], "count"}``,
delete → ``{"deleted": id}``.
"""

from __future__ import annotations

from typing import Any

from compoworld_assets.engine.specs.model import Effect, EntitySpec
from compoworld_assets.engine.types import TYPE_KEY, entity_ref

RECORD_EFFECTS = frozenset({Effect.CREATE, Effect.READ, Effect.UPDATE})
PAGE_EFFECTS = frozenset({Effect.LIST, Effect.SEARCH})


def crud_returns(effect: Effect | None, entity: EntitySpec, service_id: str) -> dict[str, Any] | None:
    """The returns schema a CRUD tool of ``entity`` has under the conventions (None for actions)."""
    if effect in RECORD_EFFECTS:
        return entity.record_schema(service_id)
    if effect in PAGE_EFFECTS:
        return {
            "type": "object",
            "properties": {
                "items": {"type": "array", "items": entity.record_schema(service_id)},
                "count": {"type": "integer"},
            },
            "required": ["items", "count"],
        }
    if effect is Effect.DELETE:
        deleted = {"type": "string", TYPE_KEY: entity_ref(service_id, entity.name)}
        return {"type": "object", "properties": {"deleted": deleted}, "required": ["deleted"]}
    return None
