"""JSON-schema helpers shared by the importers: dialect normalisation and entity fields."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from compoworld_assets.engine.specs.infer import annotate_schema, infer_entity_ref, infer_shared_type
from compoworld_assets.engine.specs.model import FieldSpec

JSON_TYPES = frozenset({"string", "integer", "number", "boolean", "array", "object", "null"})

# BFCL's Gorilla dialect (and Python/Java spellings seen in BFCL data) → JSON-schema types.
# ``None`` means "no type constraint" (``any`` and unknown spellings).
DIALECT_TYPES: dict[str, str | None] = {
    "dict": "object",
    "float": "number",
    "double": "number",
    "tuple": "array",
    "list": "array",
    "long": "integer",
    "int": "integer",
    "char": "string",
    "str": "string",
    "bool": "boolean",
    "any": None,
    "": None,
}

_SUBSCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")


def _normalise_type(value: Any) -> Any:
    if isinstance(value, str):
        return value if value in JSON_TYPES else DIALECT_TYPES.get(value)
    if isinstance(value, list):
        mapped = [_normalise_type(v) for v in value if isinstance(v, str)]
        kept = sorted({m for m in mapped if m}, key=mapped.index)
        return kept if len(kept) > 1 else (kept[0] if kept else None)
    return None


def normalise_schema(schema: Any, depth: int = 0, max_depth: int = 12) -> dict[str, Any]:
    """A copy of ``schema`` in plain JSON schema: dialect types mapped, non-dict parts dropped."""
    if not isinstance(schema, dict) or depth > max_depth:
        return {}
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "type":
            mapped = _normalise_type(value)
            if mapped is not None:
                out["type"] = mapped
        elif key == "properties" and isinstance(value, dict):
            out["properties"] = {str(k): normalise_schema(v, depth + 1) for k, v in value.items()}
        elif key == "items":
            if isinstance(value, list):
                out["prefixItems"] = [normalise_schema(v, depth + 1) for v in value]
            else:
                out["items"] = normalise_schema(value, depth + 1)
        elif key == "additionalProperties" and isinstance(value, dict):
            out[key] = normalise_schema(value, depth + 1)
        elif key in _SUBSCHEMA_LISTS and isinstance(value, list):
            out[key] = [normalise_schema(v, depth + 1) for v in value]
        elif key == "required":
            if isinstance(value, list):
                out[key] = [r for r in value if isinstance(r, str)]
        else:
            out[key] = value
    return out


def json_type_of(schema: Any) -> str | None:
    """The single JSON type of a schema (first non-null of a list; guessed from its shape)."""
    if not isinstance(schema, dict):
        return None
    value = schema.get("type")
    if isinstance(value, list):
        value = next((t for t in value if isinstance(t, str) and t in JSON_TYPES and t != "null"), None)
    if isinstance(value, str) and value in JSON_TYPES and value != "null":
        return value
    if "properties" in schema:
        return "object"
    if "items" in schema:
        return "array"
    return None


def entity_fields(
    properties: dict[str, Any],
    required: Iterable[str],
    service_id: str,
    entities: Iterable[str],
    context: Iterable[str] = (),
) -> list[FieldSpec]:
    """Entity fields from an object schema's properties; untyped properties and ``id``/``Id`` are skipped
    (the entity's id is implicit). Array fields keep their (annotated) item schema."""
    required_names = {r for r in required if isinstance(r, str)}
    entity_names = frozenset(entities)
    fields: list[FieldSpec] = []
    for name, schema in properties.items():
        json_type = json_type_of(schema)
        if name.lower() == "id" or json_type is None:
            continue
        enum = schema.get("enum") if isinstance(schema.get("enum"), list) else None
        type_name = infer_entity_ref(name, schema, service_id, entity_names) or infer_shared_type(
            name, schema, context_words=context
        )
        items = schema.get("items") if json_type == "array" and isinstance(schema.get("items"), dict) else None
        fields.append(
            FieldSpec(
                name=name,
                json_type=json_type,
                type=type_name,
                description=str(schema.get("description") or "")[:500],
                required=name in required_names,
                enum=enum,
                items=annotate_schema(items, service_id, entity_names, context) if items else None,
            )
        )
    return fields
