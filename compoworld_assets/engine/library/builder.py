"""A small declarative builder for hand-designed service specs.

Service modules declare entities with :func:`field` and add tools with the builder's
methods; every tool follows the CRUD conventions of :mod:`compoworld_assets.engine.specs.model`:
create tools take the entity's fields, read/update/delete tools take ``<noun>_id`` typed as the
entity reference, list tools filter on field-named parameters plus ``limit`` and search tools
take ``query``.
"""

from __future__ import annotations

import re
from typing import Any

from compoworld_assets.engine.specs.model import (
    Effect,
    EntitySpec,
    FieldSpec,
    ServiceSpec,
    SourceRef,
    ToolSpec,
)
from compoworld_assets.engine.types import SHARED_TYPES, TYPE_KEY, entity_ref, is_entity_ref

JSON_TYPES = frozenset({"string", "integer", "number", "boolean", "array", "object"})
LIST_FILTER_TYPES = frozenset({"email", "company_name", "city", "country", "currency"})
LIMIT_PARAM = {"type": "integer", "minimum": 1, "description": "Maximum number of items to return."}
QUERY_PARAM = {"type": "string", "description": "Text matched case-insensitively against text fields."}


def field(name: str, kind: str = "string", *, required: bool = True, enum: list[Any] | None = None,
          description: str = "") -> FieldSpec:
    """A field whose ``kind`` is a JSON type, a shared type name or an entity reference."""
    if kind in JSON_TYPES:
        return FieldSpec(name=name, json_type=kind, required=required, enum=enum, description=description)
    if is_entity_ref(kind):
        json_type = "string"
    elif kind in SHARED_TYPES:
        json_type = SHARED_TYPES[kind].json_type
    else:
        raise ValueError(f"field {name!r}: {kind!r} is neither a JSON type nor a shared type")
    return FieldSpec(name=name, json_type=json_type, type=kind, required=required, enum=enum,
                     description=description)


def snake_case(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def plural_of(noun: str) -> str:
    if noun.endswith("y") and noun[-2:-1] not in "aeiou":
        return noun[:-1] + "ies"
    if noun.endswith(("s", "x", "ch", "sh")):
        return noun + "es"
    return noun + "s"


def object_schema(fields: list[FieldSpec]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {f.name: f.json_schema() for f in fields},
        "required": [f.name for f in fields if f.required],
    }


class ServiceBuilder:
    """Collects the entities and tools of one service, then builds a validated :class:`ServiceSpec`."""

    def __init__(self, service_id: str, name: str, domain: str, description: str, module: str) -> None:
        self.service_id = service_id
        self.name = name
        self.domain = domain
        self.description = description
        self.source = SourceRef(kind="builtin", location=f"compoworld_assets.engine.library:{module}")
        self.entities: dict[str, EntitySpec] = {}
        self.tools: list[ToolSpec] = []

    def entity(self, name: str, id_prefix: str, description: str, *fields: FieldSpec) -> str:
        self.entities[name] = EntitySpec(name=name, description=description, id_prefix=id_prefix,
                                         fields=list(fields))
        return name

    def crud(self, entity: str, ops: str = "CRLSUD") -> None:
        """Standard tools for ``entity``: any of Create, Read, List, Search, Update, Delete."""
        noun = snake_case(entity)
        names = {"C": f"create_{noun}", "R": f"get_{noun}", "L": f"list_{plural_of(noun)}",
                 "S": f"search_{plural_of(noun)}", "U": f"update_{noun}", "D": f"delete_{noun}"}
        label = self.entities[entity].description.rstrip(".").lower() or noun.replace("_", " ")
        texts = {"C": f"Create a new {noun.replace('_', ' ')} ({label}).",
                 "R": f"Get one {noun.replace('_', ' ')} by id.",
                 "L": f"List {plural_of(noun).replace('_', ' ')}, optionally filtered by field values.",
                 "S": f"Search {plural_of(noun).replace('_', ' ')} by free text.",
                 "U": f"Update fields of a {noun.replace('_', ' ')}; only the fields given change.",
                 "D": f"Delete a {noun.replace('_', ' ')}."}
        builders = {"C": self.create_as, "R": self._read, "L": self._list, "S": self._search,
                    "U": self.update_as, "D": self._delete}
        for op in ops:
            builders[op](names[op], entity, texts[op])

    def create_as(self, tool: str, entity: str, description: str, sets: dict[str, Any] | None = None) -> None:
        """A create tool; fields in ``sets`` are fixed by the tool instead of passed."""
        sets = sets or {}
        fields = [f for f in self.entities[entity].fields if f.name not in sets]
        self._add(tool, description, Effect.CREATE, entity, object_schema(fields), self._record(entity), sets)

    def update_as(self, tool: str, entity: str, description: str, sets: dict[str, Any] | None = None,
                  params: tuple[str, ...] | None = None, required: tuple[str, ...] = ()) -> None:
        """An update tool taking the fields in ``params``.

        Without ``params`` a plain update takes every field and a tool with ``sets`` takes none.
        """
        sets = sets or {}
        spec = self.entities[entity]
        if params is None:
            params = () if sets else tuple(f.name for f in spec.fields)
        props = {self._key_name(entity): self._key_schema(entity)}
        for name in params:
            props[name] = self._entity_field(entity, name).json_schema()
        parameters = {"type": "object", "properties": props,
                      "required": [self._key_name(entity), *required]}
        self._add(tool, description, Effect.UPDATE, entity, parameters, self._record(entity), sets)

    def list_as(self, tool: str, entity: str, description: str, filters: tuple[str, ...]) -> None:
        """A list tool filtering on the named fields."""
        props = {name: self._entity_field(entity, name).json_schema() for name in filters}
        props["limit"] = dict(LIMIT_PARAM)
        self._add(tool, description, Effect.LIST, entity, {"type": "object", "properties": props},
                  self._page(entity))

    def query(self, tool: str, description: str, params: list[FieldSpec], returns: list[FieldSpec],
              implementable: bool = False) -> None:
        """A read of live data or a computation (NLP, OCR, rates) that stores nothing: the world model
        answers it from the state and changes nothing."""
        self._add(tool, description, Effect.QUERY, None, object_schema(params), object_schema(returns),
                  implementable=implementable)

    def build(self) -> ServiceSpec:
        for tool in self.tools:
            self._check_sets(tool)
        return ServiceSpec(id=self.service_id, name=self.name, domain=self.domain,
                           description=self.description,
                           source=self.source, entities=list(self.entities.values()), tools=self.tools)

    def _read(self, tool: str, entity: str, description: str) -> None:
        parameters = {"type": "object", "properties": {self._key_name(entity): self._key_schema(entity)},
                      "required": [self._key_name(entity)]}
        self._add(tool, description, Effect.READ, entity, parameters, self._record(entity))

    def _list(self, tool: str, entity: str, description: str) -> None:
        filters = tuple(f.name for f in self.entities[entity].fields if _is_filter(f))
        self.list_as(tool, entity, description, filters)

    def _search(self, tool: str, entity: str, description: str) -> None:
        parameters = {"type": "object",
                      "properties": {"query": dict(QUERY_PARAM), "limit": dict(LIMIT_PARAM)},
                      "required": ["query"]}
        self._add(tool, description, Effect.SEARCH, entity, parameters, self._page(entity))

    def _delete(self, tool: str, entity: str, description: str) -> None:
        key = self._key_name(entity)
        parameters = {"type": "object", "properties": {key: self._key_schema(entity)}, "required": [key]}
        deleted = {"type": "string", TYPE_KEY: entity_ref(self.service_id, entity)}
        returns = {"type": "object", "properties": {"deleted": deleted}, "required": ["deleted"]}
        self._add(tool, description, Effect.DELETE, entity, parameters, returns)

    def _add(self, tool: str, description: str, effect: Effect, entity: str | None,
             parameters: dict[str, Any],
             returns: dict[str, Any], sets: dict[str, Any] | None = None, implementable: bool = True) -> None:
        self.tools.append(ToolSpec(name=tool, description=description, parameters=parameters,
                                   returns=returns, effect=effect, entity=entity, sets=sets or {},
                                   implementable=implementable))

    def _record(self, entity: str) -> dict[str, Any]:
        return self.entities[entity].record_schema(self.service_id)

    def _page(self, entity: str) -> dict[str, Any]:
        return {"type": "object",
                "properties": {"items": {"type": "array", "items": self._record(entity)},
                               "count": {"type": "integer"}},
                "required": ["items", "count"]}

    def _key_name(self, entity: str) -> str:
        return f"{snake_case(entity)}_id"

    def _key_schema(self, entity: str) -> dict[str, Any]:
        return {"type": "string", TYPE_KEY: entity_ref(self.service_id, entity),
                "description": f"Id of the {snake_case(entity).replace('_', ' ')}."}

    def _entity_field(self, entity: str, name: str) -> FieldSpec:
        found = self.entities[entity].field(name)
        if found is None:
            raise ValueError(f"{self.service_id}.{entity} has no field {name!r}")
        return found

    def _check_sets(self, tool: ToolSpec) -> None:
        for name, value in tool.sets.items():
            spec = self._entity_field(tool.entity or "", name)
            if spec.enum is not None and value not in spec.enum:
                raise ValueError(f"{self.service_id}.{tool.name}: {name}={value!r} is not in {spec.enum}")


def _is_filter(spec: FieldSpec) -> bool:
    """Fields worth filtering a list by: enums, flags, references and identifying shared types."""
    return (spec.enum is not None or spec.json_type == "boolean" or is_entity_ref(spec.type)
            or spec.type in LIST_FILTER_TYPES)
