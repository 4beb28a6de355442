"""The service specification model.

A :class:`ServiceSpec` is what every importer produces and every synthesizer consumes:
entities with typed fields (the typed state schema) and tools whose JSON-schema
parameters and returns carry shared interface types in ``x-cw-type``.

Conventions the offline synthesizer relies on (importers and the built-in library follow them):

* ``create`` tools take entity fields as parameters (same names); the id is generated, and so are
  the required string fields the create does not take (the service sets them, as the API would:
  a payment request's URL; see ``synthesis.offline.service_set_values``).
* ``read``/``update``/``delete`` tools identify the entity by the parameter whose
  ``x-cw-type`` is the reference to the tool's own entity (e.g. ``contact_id: crm.Contact.id``).
* ``update`` changes only the fields passed; ``sets`` are constant assignments applied by
  ``create``/``update`` tools (``close_ticket`` sets ``status="closed"``).
* ``list`` filters by equality on the field-named parameters and honours ``limit``;
  ``search`` also matches ``query`` case-insensitively against string fields.
* ``action`` tools have no CRUD name; :mod:`.transitions` turns those whose spec says enough
  into ``update``/``create`` tools with a :class:`Transition` (status changes with preconditions,
  field updates, new records), or into ``query`` tools: reads that no entity describes (a safe
  HTTP method, a reading verb: ``get_weather``, ``translate_text``), which change nothing and are
  answered by the world model from the state. The rest are implemented by a coding agent or fall
  back to the world model.
"""

from __future__ import annotations

import json
import re
from enum import StrEnum
from itertools import islice
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

from compoworld_assets.engine.canonical import content_hash
from compoworld_assets.engine.types import TYPE_KEY, entity_ref, is_known_type

JsonType = Literal["string", "integer", "number", "boolean", "array", "object"]

SERVICE_ID_RE = re.compile(r"^[a-z][a-z0-9_]{0,62}$")
TOOL_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
ENTITY_NAME_RE = re.compile(r"^[A-Z][A-Za-z0-9]{0,63}$")


class Effect(StrEnum):
    CREATE = "create"
    READ = "read"
    LIST = "list"
    SEARCH = "search"
    UPDATE = "update"
    DELETE = "delete"
    ACTION = "action"
    QUERY = "query"


STATE_CHANGING_EFFECTS = frozenset({Effect.CREATE, Effect.UPDATE, Effect.DELETE, Effect.ACTION})
# Reads of an entity's records.
READ_EFFECTS = frozenset({Effect.READ, Effect.LIST, Effect.SEARCH})
# What may not change the state: reads of an entity's records, and queries that name no entity.
READ_ONLY_EFFECTS = frozenset(set(Effect) - STATE_CHANGING_EFFECTS)


class SourceRef(BaseModel):
    """Where a spec came from: the importer kind and a location (file, URL, package path)."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["builtin", "openai", "bfcl", "openapi", "mcp", "compoworld"]
    location: str


class FieldSpec(BaseModel):
    name: str
    json_type: JsonType
    type: str | None = Field(default=None, description="Shared interface type or entity reference.")
    description: str = ""
    required: bool = True
    enum: list[Any] | None = None
    items: dict[str, Any] | None = Field(
        default=None, description="JSON schema of an array field's items (None: any items)."
    )

    @model_validator(mode="after")
    def _known_type(self) -> FieldSpec:
        if self.type is not None and not is_known_type(self.type):
            raise ValueError(f"field {self.name!r}: unknown shared type {self.type!r}")
        if self.items is not None and self.json_type != "array":
            raise ValueError(f"field {self.name!r}: only array fields have an items schema")
        return self

    @model_serializer(mode="wrap")
    def _without_absent_items(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Leave ``items`` out when unset, so specs without item schemas dump (and hash) as before."""
        data = handler(self)
        if self.items is None:
            data.pop("items", None)
        return data

    def json_schema(self) -> dict[str, Any]:
        schema: dict[str, Any] = {"type": self.json_type}
        if self.json_type == "array":
            schema["items"] = dict(self.items) if self.items is not None else {}
        if self.type:
            schema[TYPE_KEY] = self.type
        if self.description:
            schema["description"] = self.description
        if self.enum is not None:
            schema["enum"] = list(self.enum)
        return schema


class EntitySpec(BaseModel):
    """One kind of record in a service's state. Its id field is always ``id`` (a string)."""

    name: str
    description: str = ""
    id_prefix: str
    fields: list[FieldSpec]

    @model_validator(mode="after")
    def _check(self) -> EntitySpec:
        if not ENTITY_NAME_RE.match(self.name):
            raise ValueError(f"entity name {self.name!r} must be CamelCase alphanumeric")
        names = [f.name for f in self.fields]
        if len(names) != len(set(names)):
            raise ValueError(f"entity {self.name!r} has duplicate field names")
        if "id" in names:
            raise ValueError(f"entity {self.name!r}: 'id' is implicit and must not be declared")
        return self

    def field(self, name: str) -> FieldSpec | None:
        return next((f for f in self.fields if f.name == name), None)

    def record_schema(self, service_id: str) -> dict[str, Any]:
        """JSON schema of one stored record, id included."""
        props = {"id": {"type": "string", TYPE_KEY: entity_ref(service_id, self.name)}}
        props.update({f.name: f.json_schema() for f in self.fields})
        for f in self.fields:
            if not f.required:
                props[f.name] = {"anyOf": [props[f.name], {"type": "null"}]}
        return {
            "type": "object",
            "properties": props,
            "required": ["id"] + [f.name for f in self.fields if f.required],
        }


class Transition(BaseModel):
    """The state change an action-named tool performs (derived by :mod:`.transitions` or declared).

    ``status``: the record named by ``key`` (of ``entity``, by default the entity ``key``'s type
    references) gets ``field = value``; ``update``: it gets the other
    parameters as fields; ``create``: a new ``entity`` record; ``query``: nothing changes (the tool
    reads, and the world model answers it from the state without changing it); ``none``: no
    derivable change (the world model serves the tool). ``allowed_from``: the values ``field`` must hold before the call
    (a status transition also refuses a record already at ``value``). ``evidence``: why.
    """

    model_config = ConfigDict(frozen=True)

    kind: Literal["status", "update", "create", "query", "none"]
    entity: str | None = None
    key: str | None = None
    field: str | None = None
    value: Any = None
    allowed_from: list[Any] | None = None
    evidence: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _check(self) -> Transition:
        if self.kind == "create" and not self.entity:
            raise ValueError("a create transition needs the entity it makes")
        if self.kind in ("status", "update") and not self.key:
            raise ValueError(f"a {self.kind} transition needs the key parameter naming its record")
        if self.kind == "status" and (not self.field or self.value is None):
            raise ValueError("a status transition needs the field and the value it writes")
        if self.allowed_from is not None and not self.field:
            raise ValueError("allowed_from needs the field it constrains")
        return self

    def refuses(self, record: dict[str, Any]) -> str | None:
        """Why ``record`` cannot undergo this transition (None: it can), as the generated code says it."""
        if not self.field:
            return None
        current = record.get(self.field)
        if self.kind == "status" and current == self.value:
            return f"is already {self.value!r}"
        if self.allowed_from is not None and current not in self.allowed_from:
            return f"is {current!r}; it must be one of {self.allowed_from!r}"
        return None


class ToolSpec(BaseModel):
    name: str
    description: str
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    returns: dict[str, Any] = Field(default_factory=dict)
    effect: Effect | None = None
    entity: str | None = None
    sets: dict[str, Any] = Field(default_factory=dict)
    implementable: bool = True
    transition: Transition | None = None

    @model_serializer(mode="wrap")
    def _without_absent_transition(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Leave ``transition`` out when unset, so specs without one dump (and hash) as before."""
        data = handler(self)
        if self.transition is None:
            data.pop("transition", None)
        return data

    @model_validator(mode="after")
    def _check(self) -> ToolSpec:
        if not TOOL_NAME_RE.match(self.name):
            raise ValueError(f"tool name {self.name!r} is not a valid identifier")
        if self.parameters.get("type", "object") != "object":
            raise ValueError(f"tool {self.name!r}: parameters must be a JSON-schema object")
        for pname, pschema in self.parameter_properties().items():
            t = pschema.get(TYPE_KEY) if isinstance(pschema, dict) else None
            if t is not None and not is_known_type(t):
                raise ValueError(f"tool {self.name!r} parameter {pname!r}: unknown shared type {t!r}")
        if self.effect in {Effect.CREATE, Effect.READ, Effect.LIST, Effect.SEARCH, Effect.UPDATE,
                           Effect.DELETE} and self.entity is None:
            raise ValueError(f"tool {self.name!r}: effect {self.effect} needs an entity")
        if self.effect is Effect.QUERY and self.entity is not None:
            raise ValueError(f"tool {self.name!r}: effect {self.effect} names no entity")
        return self

    def parameter_properties(self) -> dict[str, Any]:
        return dict(self.parameters.get("properties") or {})

    def required_parameters(self) -> list[str]:
        return list(self.parameters.get("required") or [])

    def input_types(self) -> dict[str, str]:
        """Parameter name → shared type, for the typed parameters only."""
        return {
            name: schema[TYPE_KEY]
            for name, schema in self.parameter_properties().items()
            if isinstance(schema, dict) and schema.get(TYPE_KEY)
        }

    def output_types(self) -> dict[str, str]:
        """Dotted output path → shared type, walking the returns schema (``items[]`` for arrays)."""
        found: dict[str, str] = {}
        _collect_types(self.returns, "", found)
        return found

    @property
    def changes_state(self) -> bool:
        return self.effect in STATE_CHANGING_EFFECTS


def _collect_types(schema: Any, path: str, found: dict[str, str]) -> None:
    if not isinstance(schema, dict):
        return
    if schema.get(TYPE_KEY):
        found[path or "$"] = schema[TYPE_KEY]
    for name, sub in (schema.get("properties") or {}).items():
        _collect_types(sub, f"{path}.{name}" if path else name, found)
    if isinstance(schema.get("items"), dict):
        _collect_types(schema["items"], f"{path}[]", found)
    for key in ("anyOf", "oneOf", "allOf"):
        for sub in schema.get(key) or []:
            _collect_types(sub, path, found)


class ServiceSpec(BaseModel):
    id: str
    name: str
    domain: str
    description: str
    version: str = "1.0.0"
    source: SourceRef
    entities: list[EntitySpec] = Field(default_factory=list)
    tools: list[ToolSpec]
    seed_records: dict[str, dict[str, dict[str, Any]]] | None = Field(
        default=None, description="Entity → id → record: the seed world from the spec's data file, if any.")

    @model_serializer(mode="wrap")
    def _without_absent_seed_records(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Leave ``seed_records`` out when unset, so specs without data dump (and hash) as before."""
        data = handler(self)
        if self.seed_records is None:
            data.pop("seed_records", None)
        return data

    @model_validator(mode="after")
    def _check(self) -> ServiceSpec:
        if not SERVICE_ID_RE.match(self.id):
            raise ValueError(f"service id {self.id!r} must match {SERVICE_ID_RE.pattern}")
        if not self.tools:
            raise ValueError(f"service {self.id!r} has no tools")
        tool_names = [t.name for t in self.tools]
        dupes = sorted({n for n in tool_names if tool_names.count(n) > 1})
        if dupes:
            raise ValueError(f"service {self.id!r} has duplicate tool names: {dupes}")
        entity_names = {e.name for e in self.entities}
        if len(entity_names) != len(self.entities):
            raise ValueError(f"service {self.id!r} has duplicate entity names")
        unknown = sorted(set(self.seed_records or {}) - entity_names)
        if unknown:
            raise ValueError(f"service {self.id!r} has seed records of unknown entities {unknown}")
        for tool in self.tools:
            if tool.entity is not None and tool.entity not in entity_names:
                raise ValueError(f"tool {tool.name!r} names unknown entity {tool.entity!r}")
            if tool.effect in {Effect.READ, Effect.UPDATE, Effect.DELETE} and self.key_parameter(tool) is None:
                raise ValueError(
                    f"tool {tool.name!r}: {tool.effect} needs a parameter typed "
                    f"{entity_ref(self.id, tool.entity or 'X')!r}"
                )
        return self

    def entity(self, name: str) -> EntitySpec:
        for e in self.entities:
            if e.name == name:
                return e
        raise KeyError(f"{self.id}: no entity {name!r}")

    def tool(self, name: str) -> ToolSpec:
        for t in self.tools:
            if t.name == name:
                return t
        raise KeyError(f"{self.id}: no tool {name!r}")

    def key_parameter(self, tool: ToolSpec) -> str | None:
        """The parameter that identifies the tool's own entity, if any."""
        if tool.entity is None:
            return None
        own = entity_ref(self.id, tool.entity)
        return next((n for n, t in tool.input_types().items() if t == own), None)

    def qualified_tool_name(self, tool_name: str) -> str:
        """The globally unique name agents see, e.g. ``crm_create_contact``."""
        return f"{self.id}_{tool_name}"

    def content_hash(self) -> str:
        return content_hash(self.model_dump(mode="json"))


class QuarantinedSpec(BaseModel):
    """A spec (or a fragment of one) that could not be imported or validated, and why."""

    source_kind: str
    location: str
    reason: str
    fragment: str = Field(description="The offending input, truncated to a few KB.")

    @classmethod
    def from_error(cls, source_kind: str, location: str, error: Exception | str, fragment: Any) -> QuarantinedSpec:
        """A row whose text fields are storable UTF-8 whatever the input held (lone surrogates, NUL,
        integers Python will not print); the fragment is a bounded preview, never the whole input."""
        text = fragment[:4000] if isinstance(fragment, str) else preview(fragment, 4000)
        return cls(source_kind=storable_text(source_kind), location=storable_text(location[:2000]),
                   reason=storable_text(str(error)[:2000]), fragment=storable_text(text))


def preview(value: Any, chars: int = 4000) -> str:
    """The start of ``value`` as JSON, built from at most a few thousand of its nodes."""
    budget = [2000]
    try:
        return json.dumps(_shrunk(value, 0, budget), default=repr)[:chars]
    except (TypeError, ValueError, RecursionError):
        return repr(type(value))[:chars]


def _shrunk(value: Any, depth: int, budget: list[int]) -> Any:
    budget[0] -= 1
    if budget[0] < 0 or depth > 8:
        return "..."
    if isinstance(value, dict):
        return {str(k)[:200]: _shrunk(v, depth + 1, budget) for k, v in islice(value.items(), 50)}
    if isinstance(value, (list, tuple)):
        return [_shrunk(v, depth + 1, budget) for v in islice(value, 50)]
    if isinstance(value, str):
        return value[:500]
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 256:
        return f"<integer of {value.bit_length()} bits>"
    if value is None or isinstance(value, (bool, int, float)):
        return value
    return repr(value)[:500]


def storable_text(text: str) -> str:
    """``text`` without lone surrogates (written as ``\\udXXX``) or NUL characters."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8").replace("\x00", "\\x00")


class ImportResult(BaseModel):
    specs: list[ServiceSpec] = Field(default_factory=list)
    quarantined: list[QuarantinedSpec] = Field(default_factory=list)

    def extend(self, other: ImportResult) -> None:
        self.specs.extend(other.specs)
        self.quarantined.extend(other.quarantined)
