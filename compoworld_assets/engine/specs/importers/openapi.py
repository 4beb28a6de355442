"""Importer for OpenAPI 3.x documents.

Resources are path collections (``/pets``, ``/owners/{}/pets``). A resource becomes an entity
when its operations reference a component schema whose name matches the resource noun
(``/pets`` ↔ ``Pet``, ``PublicPet``, ``PetResponse``): its top-level properties are the fields.
Failing that, the record its reads return is the entity, named after the noun: an inline object
schema, or a component named otherwise (``/push/deviceRegistrations`` ↔ ``DeviceDetails``).
Operations become tools: POST collection → create, GET collection → list (search with a
``q``/``query``/``search``/``filter``/``keyword`` parameter), GET item → read, PUT/PATCH item →
update, DELETE item → delete, anything else (or any operation on a resource without entity)
→ action. A singleton sub-resource (``/branches/{branch}/protection``: no item paths, a ``GET``
returning one record) is one record per parent: GET → read, PUT/PATCH → update (when it names a
field), DELETE → delete, keyed by the parent's parameter. Path parameters that identify a resource with an entity are typed as references
to it and retyped ``string`` (path segments are strings on the wire; entity ids are strings).

Parameters are the path and query parameters plus the top-level writable (not ``readOnly``)
properties of a JSON request body (a non-object body becomes one ``body`` parameter); header
and cookie parameters are transport details and are left out. An ``allOf`` body is merged first.
Action tools' returns come from the 200/201 (else first 2xx) response; tools bound to an entity
get the returns the CRUD conventions give them (see :mod:`.crud_returns`), since the source's
response schema (id patterns, non-nullable optional attributes, bare lists) disagrees with the
typed state the tool is executed on. Array properties keep their item schemas as entity fields.
An operation that fails (broken ``$ref``, invalid tool) is quarantined alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from compoworld_assets.engine.deadline import check_deadline
from compoworld_assets.engine.specs.importers.context import current, within_tool_limit
from compoworld_assets.engine.specs.importers.crud_returns import crud_returns
from compoworld_assets.engine.specs.importers.guard import INTERNAL_ERROR, guarded_importer
from compoworld_assets.engine.specs.importers.naming import service_slug, tool_slug, unique_name
from compoworld_assets.engine.specs.importers.openapi_refs import RefError, RefResolver
from compoworld_assets.engine.specs.importers.operation_names import (
    KEY_SUFFIXES,
    KEYED,
    compact_name,
    key_parameter,
    named_operation,
)
from compoworld_assets.engine.specs.importers.schema import entity_fields, json_type_of
from compoworld_assets.engine.specs.importers.schema_repair import (
    ToolRejected,
    repair_schema,
    repair_tool_schemas,
)
from compoworld_assets.engine.specs.importers.update_fields import with_update_fields
from compoworld_assets.engine.specs.infer import (
    annotate_schema,
    context_words,
    declared_json_type,
    entity_name,
    reference_schema,
    singular,
    snake_name,
)
from compoworld_assets.engine.specs.model import (
    Effect,
    EntitySpec,
    FieldSpec,
    ImportResult,
    QuarantinedSpec,
    ServiceSpec,
    SourceRef,
    ToolSpec,
    preview,
)
from compoworld_assets.engine.specs.transitions import (
    declared_transition,
    derive_transitions,
    safe_method_transition,
)
from compoworld_assets.engine.types import TYPE_KEY, entity_ref
from compoworld_assets.engine.values import merge_all_of

KIND = "openapi"
HTTP_METHODS = ("get", "put", "post", "patch", "delete", "head", "options", "trace")
SEARCH_PARAMS = frozenset({"q", "query", "search", "filter", "keyword", "keywords", "search_term"})
SCHEMA_NAME_SUFFIXES = frozenset(
    {
        "",
        "response",
        "resource",
        "object",
        "item",
        "model",
        "dto",
        "details",
        "detail",
        "data",
        "entity",
        "info",
        "schema",
        "output",
        "result",
        "read",
        "view",
        "compact",
        "simple",
        "summary",
        "full",
        "public",
        "record",
    }
)
MAX_SCHEMA_DEPTH = 3
# Response headers that say where a resource is (``Location``, ``Content-Location``, ``Operation-Location``).
_LOCATION_HEADER = re.compile(r"(^|-)location$", re.IGNORECASE)
# A singleton sub-resource's methods and what they do to its one record.
SINGLETON_EFFECTS = {"get": Effect.READ, "put": Effect.UPDATE, "patch": Effect.UPDATE, "delete": Effect.DELETE}
# Words of a response property that say the response is one page of a list (``nextToken``, ``cursor``).
PAGE_MARKERS = frozenset({"next", "token", "cursor", "continuation", "marker", "offset", "page"})
# Literal segments a singleton sub-resource's path may end in after its parent's parameter (``protection``,
# ``protection/required_signatures``).
MAX_SINGLETON_TAIL = 2
# A record described inline (no component schema) becomes an entity when its object has this many properties.
MIN_INLINE_FIELDS = 2
# Names of the array property that holds the records in a list response's wrapper object.
LIST_PROPERTY_NAMES = frozenset({"items", "data", "results", "records", "values", "value", "entries", "list",
                                 "content", "elements", "objects", "rows", "hits", "nodes", "resources"})
RECORD_PREFIX = "record:"  # marks an entity's schema source as the record schema of a collection key
NAMED_PREFIX = "named:"  # marks a resource named by operation names, not by a path
_MAX_REACHED = 2_000  # schema nodes visited looking for a named resource's component
_MAX_DESCRIPTION = 1000
_FIELD_KEYWORDS = frozenset({"type", "enum", "items", "description", "format", "example", "examples", "default",
                             TYPE_KEY})
_CAUGHT = (RefError, ValidationError, ValueError, TypeError, KeyError, AttributeError, RecursionError)
# Raised by a rule that did not foresee some input: still one operation's quarantine, but reported as a bug.
_UNFORESEEN = (TypeError, KeyError, AttributeError)


@dataclass
class Operation:
    path: str
    method: str
    spec: dict[str, Any]
    parameters: list[Any]
    location: str
    segments: list[str] = field(init=False)

    def __post_init__(self) -> None:
        self.segments = [s for s in self.path.split("/") if s]

    @property
    def is_item(self) -> bool:
        return bool(self.segments) and _is_param(self.segments[-1])

    @property
    def collection_key(self) -> str | None:
        """The resource this operation acts on, with parameter names erased (``/owners/{}/pets``)."""
        segments = self.segments[:-1] if self.is_item else self.segments
        if not segments or _is_param(segments[-1]):
            return None
        return _key(segments)

    @property
    def noun(self) -> str:
        key = self.collection_key
        return key.rsplit("/", 1)[-1] if key else ""


def _is_param(segment: str) -> bool:
    return segment.startswith("{") and segment.endswith("}")


def _key(segments: list[str]) -> str:
    return "/" + "/".join("{}" if _is_param(s) else s for s in segments)


def schema_matches_noun(schema_name: str, noun: str) -> bool:
    """Whether a component schema is the representation of resources named ``noun``: its name is the
    singular noun with anything before it and only decoration words after it (``SCHEMA_NAME_SUFFIXES``:
    ``PublicUser``, ``CreditCardResponse``, ``ResourceBlockViewModel`` for ``blocks``; not ``Petition``)."""
    words = snake_name(noun).split("_")
    target = compact_name("_".join([*words[:-1], singular(words[-1])])) if words and words[0] else ""
    name = compact_name(schema_name.rsplit(".", 1)[-1])
    if len(target) < 3:
        return False
    start = name.find(target)
    while start >= 0:
        if _decorations_only(name[start + len(target):]):
            return True
        start = name.find(target, start + 1)
    return False


@lru_cache(maxsize=4096)
def _decorations_only(rest: str) -> bool:
    """Whether ``rest`` is a run of decoration words (``viewmodel`` = ``view`` + ``model``), or empty."""
    return not rest or any(rest.startswith(word) and _decorations_only(rest[len(word):])
                           for word in SCHEMA_NAME_SUFFIXES if word)


class _Importer:
    def __init__(self, doc: dict[str, Any], location: str, service_id: str | None, domain: str | None):
        self.doc = doc
        self.location = location
        self.refs = RefResolver(doc)
        self.info = doc.get("info") if isinstance(doc.get("info"), dict) else {}
        title = str(self.info.get("title") or Path(location).stem)
        self.service_id = service_slug(service_id or title)
        self.title = title
        categories = self.info.get("x-apisguru-categories")
        self.domain = (
            str(categories[0]) if isinstance(categories, list) and categories else (domain or "general")
        )
        self.context = context_words(self.service_id, title, self.domain)
        self.quarantined: list[QuarantinedSpec] = []
        self.record_schemas: dict[str, Any] = {}
        # Operation location → (effect, entity, key parameter) that its name says.
        self.named_ops: dict[str, tuple[Effect, str, str | None]] = {}
        # Key parameter name → the entity whose reads name a record with it (None: names two entities).
        self.key_names: dict[str, str | None] = {}
        # Singleton sub-resource's collection key → its entity (see :meth:`_singleton_resources`).
        self.singletons: dict[str, str] = {}
        # Entity → id prefix, where it is not its own name's (a singleton shares its parent's ids).
        self.id_prefixes: dict[str, str] = {}

    def quarantine(self, location: str, error: Any, fragment: Any) -> None:
        self.quarantined.append(QuarantinedSpec.from_error(KIND, location, error, preview(fragment)))

    def operations(self) -> list[Operation]:
        ops: list[Operation] = []
        for path, item in self.doc["paths"].items():
            check_deadline()
            item_location = f"{self.location}#/paths/{str(path).replace('~', '~0').replace('/', '~1')}"
            try:
                item, _ = self.refs.deref(item)
            except RefError as error:
                self.quarantine(item_location, error, item)
                continue
            if not isinstance(item, dict):
                self.quarantine(item_location, "path item is not an object", item)
                continue
            shared = item.get("parameters") if isinstance(item.get("parameters"), list) else []
            for method in HTTP_METHODS:
                spec = item.get(method)
                if isinstance(spec, dict):
                    own = spec.get("parameters") if isinstance(spec.get("parameters"), list) else []
                    ops.append(
                        Operation(str(path), method, spec, [*shared, *own], f"{item_location}/{method}")
                    )
        return within_tool_limit(ops, f"{self.location}#/paths")

    def _schema_of_content(self, holder: Any) -> Any:
        holder, _ = self.refs.deref(holder)
        content = holder.get("content") if isinstance(holder, dict) else None
        if not isinstance(content, dict) or not content:
            return None
        media = (
            next((m for m in content if "json" in m.lower()), None)
            or next((m for m in content if "form" in m.lower()), None)
            or next(iter(content))
        )
        entry = content[media]
        return entry.get("schema") if isinstance(entry, dict) else None

    def _response_schema(self, op: Operation) -> Any:
        responses, codes = self._success_responses(op)
        for code in codes:
            schema = self._schema_of_content(responses[code])
            if schema is not None:
                return schema
        return None

    def _success_responses(self, op: Operation) -> tuple[dict[str, Any], list[str]]:
        """The operation's responses by code, and the codes of success: 200 and 201, else any 2xx, else a
        redirect (3xx: a resolver that answers ``302 Found`` with where the thing is)."""
        raw = op.spec.get("responses")
        if not isinstance(raw, dict):
            return {}, []
        responses = {str(code): response for code, response in raw.items()}
        codes = [c for c in ("200", "201") if c in responses] or sorted(c for c in responses if c.startswith("2"))
        return responses, codes or sorted(c for c in responses if c.startswith("3"))

    def _location_returns(self, op: Operation) -> dict[str, Any] | None:
        """For a success without a body, the ``Location``-like headers it answers with, as the result: a
        ``202 Accepted`` job's ``Operation-Location``, a ``201 Created`` record's ``Location`` (RFC 9110
        §10.2.2: a URI reference to the resource), which is all a client learns from such a call."""
        responses, codes = self._success_responses(op)
        for code in codes:
            holder, _ = self.refs.deref(responses[code])
            headers = holder.get("headers") if isinstance(holder, dict) else None
            named = sorted(h for h in _mapping(headers) if isinstance(h, str) and _LOCATION_HEADER.search(h))
            if named:
                return {"type": "object", "required": named, "properties": {h: {
                    "type": "string", TYPE_KEY: "url", "description": self._header_description(headers[h])}
                    for h in named}}
        return None

    def _header_description(self, header: Any) -> str:
        try:
            resolved, _ = self.refs.deref(header)
        except RefError:  # a broken header reference costs its description, not the operation
            return ""
        return str(_mapping(resolved).get("description") or "")[:500]

    def _referenced_schema_names(self, schema: Any) -> list[str]:
        """Component schemas a response/body references directly, as array items, or one property down."""
        names: list[str] = []
        if not isinstance(schema, dict):
            return names
        candidates = [schema, schema.get("items")]
        try:
            resolved, _ = self.refs.deref(schema)
        except RefError:
            resolved = None
        if isinstance(resolved, dict):
            for prop in _mapping(resolved.get("properties")).values():
                if isinstance(prop, dict):
                    candidates.extend([prop, prop.get("items")])
        for candidate in candidates:
            if isinstance(candidate, dict) and "$ref" in candidate:
                try:
                    _, name = self.refs.deref(candidate)
                except RefError:
                    continue
                if name and name not in names:
                    names.append(name)
        return names

    def resource_entities(self, ops: list[Operation]) -> dict[str, tuple[str, str]]:
        """collection key → (entity name, schema source): a component schema named after the resource, else
        the record its reads return (``RECORD_PREFIX`` + key, see :meth:`_record_schemas`)."""
        candidates: dict[str, list[str]] = {}
        for op in ops:
            key = op.collection_key
            if key is None:
                continue
            try:
                schemas = [self._response_schema(op)]
                if op.method in ("post", "put", "patch") and "requestBody" in op.spec:
                    schemas.append(self._schema_of_content(op.spec["requestBody"]))
            except RefError:
                continue
            for schema in schemas:
                candidates.setdefault(key, []).extend(self._referenced_schema_names(schema))
        found: dict[str, tuple[str, str]] = {}
        self.record_schemas = self._record_schemas(ops)
        for key in sorted(set(candidates) | set(self.record_schemas)):
            names = [n for n in candidates.get(key, []) if self._describes_a_record(n)]
            noun = key.rsplit("/", 1)[-1]
            match = _component_named_after(names, _one_record(noun), noun)
            # Named after the resource (``UpdateProfileResponse`` for ``/profiles`` is a Profile), so that
            # operations naming the noun (``update_profile``) find the same entity.
            name = (self._record_entity(key)[0] or entity_name(match.rsplit(".", 1)[-1])[:64]) if match else ""
            if match and name:
                found[key] = (name, match)
            elif key in self.record_schemas:
                found[key] = self._record_entity(key)
        found = {key: value for key, value in found.items() if value[0]}
        found.update(self._singleton_resources(ops, found))
        found.update(self._named_resources(ops, found))
        return found

    def _singleton_resources(self, ops: list[Operation], found: dict[str, tuple[str, str]]) -> dict[str, tuple[str, str]]:
        """Sub-resources that are one record of their parent (``/repos/{o}/{r}/branches/{b}/protection``,
        ``/apps/{id}/settings``): a path ending in at most ``MAX_SINGLETON_TAIL`` literal segments after a
        parameter, with no item paths below it, whose ``GET`` returns one object record (not a list).

        The entity is named after the parent and the tail (``BranchProtection``); its records are keyed by
        the parent's parameter and, when the parent is an entity, share its ids (``branch_0001``'s
        protection is ``branch_0001``). Fills ``self.singletons`` and ``self.id_prefixes``.
        """
        members: dict[str, list[Operation]] = {}
        for op in ops:
            if op.collection_key is not None:
                members.setdefault(op.collection_key, []).append(op)
        taken = {name for name, _ in found.values()}
        new: dict[str, tuple[str, str]] = {}
        for key, group in sorted(members.items()):
            check_deadline()
            segments = key.split("/")[1:]
            params = [i for i, s in enumerate(segments) if s == "{}"]
            if key in found or not params or any(op.is_item for op in group):
                continue
            tail = segments[params[-1] + 1:]
            parents = [s for s in segments[:params[-1]] if s != "{}"]
            if len(tail) > MAX_SINGLETON_TAIL or not parents or any(":" in t for t in tail):
                continue
            record = next((r for op in group if op.method == "get"
                           for r in [self._singleton_record(op)] if r is not None), None)
            if record is None:
                continue
            name = next((n for n in self._singleton_names(parents, tail) if n and n not in taken), None)
            if name is None:
                continue
            taken.add(name)
            self.record_schemas[key] = record
            self.singletons[key] = name
            parent = found.get(_key(segments[:params[-1]]))
            if parent is not None:
                self.id_prefixes[name] = snake_name(parent[0])[:16]
            new[key] = (name, RECORD_PREFIX + key)
        return new

    @staticmethod
    def _singleton_names(parents: list[str], tail: list[str]) -> list[str]:
        """Entity names for a singleton, the plainest first: parent + last tail word (``BranchProtection``),
        then every literal segment (``ReposBranchProtectionRequiredSignature``)."""
        last = snake_name(tail[-1]) if tail else ""
        return [entity_name(f"{_one_record(parents[-1])}_{last}")[:64],
                entity_name("_".join(snake_name(s) for s in [*parents, *tail]))[:64]]

    def _singleton_record(self, op: Operation) -> dict[str, Any] | None:
        """The one record a singleton's ``GET`` returns, or None when it returns a list of records."""
        try:
            schema = self._response_schema(op)
            if self._record_schema(schema, item=False, noun=op.noun) is not None:
                return None
            properties = self._flat_properties(schema)[0] if isinstance(schema, dict) else {}
            arrays = [name for name, prop in properties.items() if json_type_of(prop) == "array"]
            if any(_lists_records(name, op.noun) for name in arrays) or (
                    arrays and any(set(snake_name(name).split("_")) & PAGE_MARKERS for name in properties)):
                return None  # the records of a list, or a page of them
            return self._record_schema(schema, item=True, noun=op.noun)
        except _CAUGHT:
            return None

    def _operation_name(self, op: Operation) -> str:
        operation_id = op.spec.get("operationId")
        return tool_slug(operation_id if isinstance(operation_id, str) and operation_id.strip()
                         else f"{op.method}_{op.path}")

    def _named_resources(self, ops: list[Operation], found: dict[str, tuple[str, str]]) -> dict[str, tuple[str, str]]:
        """Resources that operation names say (``DescribeCampaign``), for operations whose path says no
        CRUD effect: no resource, or a method its shape gives no meaning (``PUT /domains/{d}/profiles``
        named ``UpdateProfile`` with the profile's id in the body).

        Fills ``self.named_ops``. The entity is the path-derived one of that name when there is one,
        else a component schema named after it that the operations send or return, else the record a
        read returns (see :mod:`operation_names`). Returns the new resources, keyed ``NAMED_PREFIX`` + name.
        """
        groups: dict[str, list[tuple[Operation, Effect, str | None]]] = {}
        for op in ops:
            if not self._path_leaves_action(op, found):
                continue
            tags = [t for t in _sequence(op.spec.get("tags")) if isinstance(t, str)]
            named = named_operation(self._operation_name(op), tags)
            key = self._record_key(op, named[1]) if named is not None and named[0] in KEYED else None
            if named is not None and (named[0] not in KEYED or key is not None):
                groups.setdefault(named[1], []).append((op, named[0], key))
            if key is not None and compact_name(key) not in KEY_SUFFIXES:  # a bare ``id`` names nothing elsewhere
                self.key_names[key] = named[1] if self.key_names.get(key, named[1]) == named[1] else None
        known = {name for name, _ in found.values()}
        new: dict[str, tuple[str, str]] = {}
        for entity, members in sorted(groups.items()):
            check_deadline()
            key = NAMED_PREFIX + entity
            source = None if entity in known else self._named_schema(entity, [(op, e) for op, e, _ in members])
            if entity not in known and source is None:
                continue
            if source is not None:
                new[key] = (entity, source)
            for op, effect, record_key in members:
                self.named_ops[op.location] = (effect, entity, record_key)
        return new

    def _path_leaves_action(self, op: Operation, found: dict[str, tuple[str, str]]) -> bool:
        """Whether the path alone leaves ``op`` an action (see :meth:`_effect`): its resource has no
        entity, or its method means nothing on its path's shape (PUT on a collection, POST on an item)."""
        if op.collection_key not in found:
            return True
        if op.collection_key in self.singletons:
            return op.method not in SINGLETON_EFFECTS
        return op.method not in (("get", "put", "patch", "delete") if op.is_item else ("get", "post"))

    def _record_key(self, op: Operation, entity: str) -> str | None:
        """The parameter of a keyed operation naming one ``entity`` record (None: it stays an action)."""
        try:
            props, required = self._parameters(op)
        except _CAUGHT:
            return None
        return key_parameter(entity, props, required)

    def _named_schema(self, entity: str, members: list[tuple[Operation, Effect]]) -> str | None:
        """The schema source of a named resource's entity: a component named after it, else the record a read
        returns (a keyed read's response, else the items of a list's)."""
        names: list[str] = []
        for op, _ in members:
            try:
                names.extend(n for n in self._reachable_schema_names(self._response_schema(op)) if n not in names)
                body = self._schema_of_content(op.spec.get("requestBody"))
                names.extend(n for n in self._reachable_schema_names(body) if n not in names)
            except RefError:
                continue
        names = [n for n in names if self._describes_a_record(n)]
        target = snake_name(entity)
        match = _component_named_after(names, target, target)
        if match is not None:
            return match
        noun = target.rsplit("_", 1)[-1]
        for item, effects in ((True, (Effect.READ,)), (False, (Effect.LIST, Effect.SEARCH))):
            for op in (op for op, effect in members if effect in effects):
                try:
                    schema = self._record_schema(self._response_schema(op), item=item, noun=noun)
                except RefError:
                    continue
                if schema is not None:
                    self.record_schemas[NAMED_PREFIX + entity] = schema
                    return RECORD_PREFIX + NAMED_PREFIX + entity
        return None

    def _describes_a_record(self, component: str) -> bool:
        """Whether a component has the ``MIN_INLINE_FIELDS`` properties a record needs (``UpdateProfileResponse``
        holding only ``ProfileId`` describes no Profile)."""
        try:
            return len(self._flat_properties({"$ref": f"#/components/schemas/{component}"})[0]) >= MIN_INLINE_FIELDS
        except _CAUGHT:
            return False

    def _reachable_schema_names(self, schema: Any) -> list[str]:
        """Component schemas reachable from ``schema`` through references, ``allOf``, array items and
        properties, at most ``MAX_SCHEMA_DEPTH`` levels down (a describe response's ``campaign`` property),
        breadth first; each component is entered once and at most ``_MAX_REACHED`` nodes are visited."""
        names: list[str] = []
        frontier, visited = [schema], 0
        for _ in range(MAX_SCHEMA_DEPTH + 1):
            following = []
            for node in frontier:
                visited += 1
                if not isinstance(node, dict) or visited > _MAX_REACHED:
                    continue
                if "$ref" in node:
                    try:
                        node, name = self.refs.deref(node)
                    except RefError:
                        continue
                    if not name or name in names:
                        continue
                    names.append(name)
                    if not isinstance(node, dict):
                        continue
                following.extend([*_sequence(node.get("allOf")), node.get("items"),
                                  *_mapping(node.get("properties")).values()])
            frontier = following
        return names

    def _record_schemas(self, ops: list[Operation]) -> dict[str, Any]:
        """Collection key → the schema of one record, for resources whose schema is not named after them.

        What a read returns is one record of the resource it reads: the response of ``GET /orders/{id}``,
        or the items of the array ``GET /orders`` returns (bare, or as the one array property of a
        wrapper, named like a list: ``items``, ``data``, ``orders``...; ``GET /health``'s
        ``dependencies`` are parts of one record, not the records of a list). A resource with item paths that
        no read describes holds what its create and updates send (:meth:`_add_written_fields`). That record is either
        described inline (an object with properties) or a reference to a component named otherwise
        (``DeviceDetails`` for ``/push/deviceRegistrations``); a reference stays one (``{"$ref": ...}``)
        so that the entity is built from the component. The item read's schema wins over the list's, as
        the fuller one.
        """
        from_item: dict[str, Any] = {}
        from_list: dict[str, Any] = {}
        written: dict[str, tuple[dict[str, Any], list[str]]] = {}
        items = {op.collection_key for op in ops if op.is_item} - {None}
        for op in ops:
            key = op.collection_key
            if key in items and (op.method == "post") != op.is_item and op.method in ("post", "put", "patch"):
                self._add_written_fields(op, written.setdefault(key, ({}, [])))
            if key is None or op.method != "get":
                continue
            try:
                schema = self._record_schema(self._response_schema(op), item=op.is_item, noun=op.noun)
            except RefError:
                continue
            if schema is None:
                continue
            (from_item if op.is_item else from_list).setdefault(key, schema)
        from_writes = {key: {"type": "object", "properties": props, "required": sorted(set(required) & set(props))}
                       for key, (props, required) in written.items() if len(props) >= MIN_INLINE_FIELDS}
        return {**from_writes, **from_list, **from_item}

    def _add_written_fields(self, op: Operation, into: tuple[dict[str, Any], list[str]]) -> None:
        """Add the properties of what a create (``POST`` on the collection) or an update (``PUT``/``PATCH`` on
        an item) sends to ``into`` (properties, required): the fields of a resource no read describes. The
        create's required properties are the record's (an update's are only what that update needs)."""
        try:
            body = self._schema_of_content(op.spec.get("requestBody"))
            props, required = self._flat_properties(body) if isinstance(body, dict) else ({}, [])
        except _CAUGHT:
            return
        writable = {name: prop for name, prop in props.items() if not prop.get("readOnly")}
        for name, prop in writable.items():
            into[0].setdefault(name, prop)
        if op.method == "post":
            into[1].extend(r for r in required if r in writable)

    def _record_schema(self, schema: Any, *, item: bool, noun: str) -> dict[str, Any] | None:
        """The schema of one record in a read's response: inline, or a ``$ref`` to a component (None: no record).

        Either way it must be an object with at least ``MIN_INLINE_FIELDS`` properties. A response that is one
        of several shapes (``anyOf``/``oneOf``: a list of ``simple-user`` or of ``stargazer``) is read as its
        first, the one the API documents first.
        """
        schema = _first_alternative(schema)
        if not isinstance(schema, dict) or ("$ref" in schema and not item):
            return None
        if not item:
            if json_type_of(schema) == "object":
                arrays = [p for name, p in _mapping(schema.get("properties")).items()
                          if isinstance(p, dict) and json_type_of(p) == "array" and _lists_records(name, noun)]
                schema = arrays[0] if len(arrays) == 1 else {}
            schema = schema.get("items") if json_type_of(schema) == "array" else None
            if not isinstance(schema, dict):
                return None
        record = self.refs.deref(schema)[0] if "$ref" in schema else schema
        if not isinstance(record, dict) or json_type_of(record) != "object":
            return None
        if len(self._flat_properties(record)[0]) < MIN_INLINE_FIELDS:
            return None
        return {"$ref": schema["$ref"]} if "$ref" in schema else schema

    def _record_entity(self, key: str) -> tuple[str, str]:
        return entity_name(_one_record(key.rsplit("/", 1)[-1]))[:64], RECORD_PREFIX + key

    def entity_specs(self, resources: dict[str, tuple[str, str]]) -> dict[str, EntitySpec]:
        specs: dict[str, EntitySpec] = {}
        names = {name for name, _ in resources.values()}
        for name, schema_name in sorted(set(resources.values())):
            if name in specs:
                continue
            record = schema_name.startswith(RECORD_PREFIX)
            location = (f"{self.location}#/paths/{schema_name[len(RECORD_PREFIX):]}" if record
                        else f"{self.location}#/components/schemas/{schema_name}")
            try:
                schema = self.refs.deref(self.record_schemas[schema_name[len(RECORD_PREFIX):]] if record
                                         else {"$ref": f"#/components/schemas/{schema_name}"})[0]
                if not isinstance(schema, dict):
                    self.quarantine(location, "component schema is not an object", schema_name)
                    continue
                properties, required = self._flat_properties(schema)
                limit = current().limits.max_parameters
                if len(properties) > limit:
                    self.quarantine(location, f"component schema has {len(properties)} properties (the limit is "
                                              f"{limit})", schema_name)
                    continue
                properties = {name: repair_schema(_field_keywords(prop), f"{location}/properties/{name}")
                              for name, prop in properties.items()}
                fields = self._keyed_fields(name, entity_fields(properties, required, self.service_id, names,
                                                                self.context), names)
                if not fields:
                    continue  # a record of nothing: its resource's operations stay actions
                specs[name] = EntitySpec(
                    name=name,
                    id_prefix=self.id_prefixes.get(name, snake_name(name)[:16]),
                    fields=fields,
                    description=str(schema.get("description") or "")[:_MAX_DESCRIPTION],
                )
            except _CAUGHT as error:
                self.quarantine(location, _reason(error), schema_name)
        return specs

    def _keyed_fields(self, entity: str, fields: list[FieldSpec], names: set[str]) -> list[FieldSpec]:
        """An entity's fields seen through the key names of named operations: its own key (``campaignArn`` on
        ``Campaign``) is the record's id, not a field beside it that could disagree with the id; a field named
        like another entity's key (``solutionVersionArn``) refers to that entity's records."""
        kept = []
        for f in fields:
            target = self.key_names.get(f.name)
            if target == entity:
                continue
            if target is not None and target in names and f.type is None and f.json_type == "string":
                f = f.model_copy(update={"type": entity_ref(self.service_id, target)})
            kept.append(f)
        return kept

    def _flat_properties(self, schema: Any, depth: int = 0) -> tuple[dict[str, Any], list[str]]:
        """Top-level properties (allOf merged), each dereferenced one level for its type."""
        schema, _ = self.refs.deref(schema)
        if not isinstance(schema, dict) or depth > 4:
            return {}, []
        properties: dict[str, Any] = {}
        required = _string_list(schema.get("required"))
        for part in _sequence(schema.get("allOf")):
            more, more_required = self._flat_properties(part, depth + 1)
            properties.update(more)
            required.extend(more_required)
        for name, prop in _mapping(schema.get("properties")).items():
            try:
                target = self._wrapped(self.refs.deref(prop)[0])
            except RefError:
                target = {"type": "object"}
            if isinstance(target, dict):
                if isinstance(target.get("items"), dict):
                    target = {**target, "items": self.refs.inline(target["items"], MAX_SCHEMA_DEPTH)}
                properties[str(name)] = {
                    **target,
                    **(
                        {"description": prop["description"]}
                        if isinstance(prop, dict) and "description" in prop
                        else {}
                    ),
                }
        return properties, required

    def _wrapped(self, schema: Any) -> Any:
        """A property written as ``allOf`` of a reference and a description (``{"allOf": [{"$ref": Arn},
        {"description": ...}]}``) as one schema: every part's keywords, the first part's winning."""
        if not isinstance(schema, dict) or "type" in schema or not isinstance(schema.get("allOf"), list):
            return schema
        merged = {k: v for k, v in schema.items() if k != "allOf"}
        for part in schema["allOf"]:
            part, _ = self.refs.deref(part)
            if isinstance(part, dict):
                for k, v in part.items():
                    merged.setdefault(k, v)
        return merged

    def _parameters(self, op: Operation) -> tuple[dict[str, Any], list[str]]:
        props: dict[str, Any] = {}
        required: list[str] = []
        seen: dict[tuple[str, str], dict[str, Any]] = {}
        for raw in op.parameters:
            param, _ = self.refs.deref(raw)
            if not isinstance(param, dict) or not isinstance(param.get("name"), str) or "in" not in param:
                raise ValueError(f"parameter without a name or location: {preview(raw)[:200]}")
            seen[(param["name"], str(param["in"]))] = param  # an "in" that is no string is no known location
        for (name, place), param in seen.items():
            if place not in ("path", "query"):
                continue
            schema = param.get("schema")
            if schema is None and isinstance(param.get("content"), dict):
                schema = self._schema_of_content(param)
            schema = self.refs.inline(schema or {"type": "string"}, MAX_SCHEMA_DEPTH)
            if param.get("description") and "description" not in schema:
                schema = {**schema, "description": str(param["description"])[:_MAX_DESCRIPTION]}
            props[name] = schema
            if place == "path" or param.get("required") is True:
                required.append(name)
        body = op.spec.get("requestBody")
        if body is not None:
            self._add_body(body, props, required, f"{op.location}/requestBody")
        return props, required

    def _add_body(self, body: Any, props: dict[str, Any], required: list[str], location: str) -> None:
        body_spec, _ = self.refs.deref(body)
        raw_schema = self._schema_of_content(body_spec)
        if raw_schema is None:
            return
        body_required = isinstance(body_spec, dict) and body_spec.get("required") is True
        # Repaired before merging, since merging reads allOf parts as schemas (repairing twice changes nothing).
        schema = repair_schema(self.refs.inline(raw_schema, MAX_SCHEMA_DEPTH), location)
        if isinstance(schema.get("allOf"), list):
            schema = merge_all_of(schema)
        if json_type_of(schema) == "object" and isinstance(schema.get("properties"), dict):
            unwrapped = {n: self._wrapped(s) for n, s in schema["properties"].items()}
            writable = {n: s for n, s in unwrapped.items() if not (isinstance(s, dict) and s.get("readOnly"))}
            taken = set(props)
            renames: dict[str, str] = {}
            for name in writable:
                renames[name] = unique_name(name if name not in taken else f"body_{name}", taken)
                taken.add(renames[name])
            props.update({renames[n]: s for n, s in writable.items()})
            if body_required:
                required.extend(renames[r] for r in _string_list(schema.get("required")) if r in renames)
        else:
            body_name = unique_name("body", set(props))
            props[body_name] = schema
            if body_required:
                required.append(body_name)

    def _typed_path_params(
        self,
        op: Operation,
        props: dict[str, Any],
        resources: dict[str, tuple[str, str]],
        entities: dict[str, EntitySpec],
    ) -> str | None:
        """Type path ids of resources with entities; returns the item key parameter's name, if any."""
        key_param = None
        for index, segment in enumerate(op.segments):
            if not _is_param(segment) or index == 0 or _is_param(op.segments[index - 1]):
                continue
            name = segment[1:-1]
            resource = resources.get(_key(op.segments[:index]))
            if resource is None or resource[0] not in entities or name not in props:
                continue
            props[name] = self._reference(props[name], resource[0])
            if index == len(op.segments) - 1:
                key_param = name
        return key_param

    def _effect(
        self, op: Operation, props: dict[str, Any], key_param: str | None, entity: str | None
    ) -> Effect:
        if entity is None:
            return Effect.ACTION
        if op.collection_key in self.singletons:
            return SINGLETON_EFFECTS.get(op.method, Effect.ACTION) if key_param else Effect.ACTION
        if op.is_item:
            if key_param is None:
                return Effect.ACTION
            return {
                "get": Effect.READ,
                "put": Effect.UPDATE,
                "patch": Effect.UPDATE,
                "delete": Effect.DELETE,
            }.get(op.method, Effect.ACTION)
        if op.method == "post":
            return Effect.CREATE
        if op.method == "get":
            return Effect.SEARCH if any(snake_name(p) in SEARCH_PARAMS for p in props) else Effect.LIST
        return Effect.ACTION

    def _singleton_key(self, op: Operation, props: dict[str, Any], entity: EntitySpec) -> str | None:
        """The parameter naming a singleton's record (its parent's, the path's last), typed as a reference to
        the singleton; None when the operation would change nothing (a write naming no field of the record)."""
        name = next((s[1:-1] for s in reversed(op.segments) if _is_param(s)), None)
        if name is None or not isinstance(props.get(name), dict):
            return None
        if op.method in ("put", "patch") and not {f.name for f in entity.fields} & (set(props) - {name}):
            return None
        props[name] = self._reference(props[name], entity.name)
        return name

    def _reference(self, schema: dict[str, Any], entity: str) -> dict[str, Any]:
        """A parameter's schema as a reference to one of the service's ``entity`` records (:func:`reference_schema`)."""
        return reference_schema(schema, entity_ref(self.service_id, entity))

    def _named_effect(
        self, op: Operation, props: dict[str, Any], entities: dict[str, EntitySpec]
    ) -> tuple[Effect, str | None]:
        """(effect, entity) of an operation its name describes; a keyed one types its key parameter as a
        reference to the entity, and stays an action when no parameter names one record."""
        effect, entity, key = self.named_ops[op.location]
        if entity not in entities:
            return Effect.ACTION, None
        if effect in KEYED:
            if not isinstance(props.get(key), dict):
                return Effect.ACTION, None
            props[key] = self._reference(props[key], entity)
        elif effect is Effect.LIST and any(snake_name(p) in SEARCH_PARAMS for p in props):
            effect = Effect.SEARCH
        return effect, entity

    def _type_record_keys(self, props: dict[str, Any], own: str | None, entities: dict[str, EntitySpec]) -> None:
        """Type the parameters named like another entity's key (``stop_training_job(TrainingJobName)``,
        ``create_campaign(solutionVersionArn)``) as references to it, so that actions find their record and
        writes refer to records that exist. The tool's own entity is left alone (a create names a new one)."""
        for name, target in self.key_names.items():
            schema = props.get(name)
            if target is None or target == own or target not in entities or not isinstance(schema, dict):
                continue
            if TYPE_KEY not in schema and declared_json_type(schema) in (None, "string"):
                props[name] = self._reference(schema, target)

    def tool(
        self,
        op: Operation,
        resources: dict[str, tuple[str, str]],
        entities: dict[str, EntitySpec],
        taken: set[str],
    ) -> ToolSpec:
        check_deadline()
        props, required = self._parameters(op)
        limit = current().limits.max_parameters
        if len(props) > limit:
            raise ToolRejected(f"operation has {len(props)} parameters (the limit is {limit})")
        key_param = self._typed_path_params(op, props, resources, entities)
        resource = resources.get(op.collection_key or "")
        entity = resource[0] if resource and resource[0] in entities else None
        if entity is not None and op.collection_key in self.singletons:
            key_param = self._singleton_key(op, props, entities[entity])
        effect = self._effect(op, props, key_param, entity)
        if effect is Effect.ACTION and op.location in self.named_ops:
            named_effect, named_entity = self._named_effect(op, props, entities)
            if named_effect is not Effect.ACTION:
                effect, entity = named_effect, named_entity
        self._type_record_keys(props, entity if effect is not Effect.ACTION else None, entities)
        base = self._operation_name(op)
        description = str(op.spec.get("summary") or op.spec.get("description") or "").strip()
        context = self.context | context_words(base, description)
        returns = crud_returns(effect, entities[entity], self.service_id) if entity else None
        response = (self._response_schema(op) or self._location_returns(op)) if returns is None else None
        parameters, response = repair_tool_schemas(
            {"type": "object", "properties": props, "required": sorted(set(required))},
            self.refs.inline(response, MAX_SCHEMA_DEPTH) if response is not None else {},
            op.location,
        )
        parameters = annotate_schema(parameters, self.service_id, entities, context)
        if returns is None:
            returns = annotate_schema(response, self.service_id, entities, context) if response else {}
        spec = ToolSpec(
            name=unique_name(base, taken),
            description=(description or f"{op.method.upper()} {op.path}")[:_MAX_DESCRIPTION],
            parameters=parameters,
            returns=returns,
            effect=effect,
            entity=entity if effect is not Effect.ACTION else None,
            transition=declared_transition(op.spec) or (
                safe_method_transition(base, op.method) if effect is Effect.ACTION else None),
        )
        taken.add(spec.name)
        return spec

    def run(self) -> ImportResult:
        ops = self.operations()
        resources = self.resource_entities(ops)
        entities = self.entity_specs(resources)
        tools: list[ToolSpec] = []
        taken: set[str] = set()
        for op in ops:
            try:
                tools.append(self.tool(op, resources, entities, taken))
            except _CAUGHT as error:
                self.quarantine(op.location, _reason(error), op.spec)
        return ImportResult(
            specs=self._service(tools, [e for _, e in sorted(entities.items())]), quarantined=self.quarantined
        )

    def _service(self, tools: list[ToolSpec], entities: list[EntitySpec]) -> list[ServiceSpec]:
        if not tools:
            self.quarantine(self.location, "no importable operations", {"info": self.info})
            return []
        fields: dict[str, Any] = {
            "id": self.service_id,
            "name": self.title[:200],
            "domain": self.domain,
            "description": str(self.info.get("description") or self.title)[:2000],
            "version": str(self.info.get("version") or "1.0.0"),
            "source": SourceRef(kind=KIND, location=self.location),
        }
        try:
            return [derive_transitions(with_update_fields(ServiceSpec(**fields, entities=entities, tools=tools)))]
        except ValidationError as error:
            self.quarantine(
                self.location,
                f"entity model rejected, tools kept as actions: {_reason(error)}",
                {"info": self.info},
            )
        demoted = [t.model_copy(update={"effect": Effect.ACTION, "entity": None}) for t in tools]
        try:
            return [derive_transitions(ServiceSpec(**fields, entities=[], tools=demoted))]
        except ValidationError as error:
            self.quarantine(self.location, _reason(error), {"info": self.info})
            return []


def _one_record(noun: str) -> str:
    """The snake name of one record of a resource noun (``creditCards`` → ``credit_card``)."""
    words = snake_name(noun).split("_")
    return "_".join([*words[:-1], singular(words[-1])])


def _component_named_after(names: list[str], item: str, noun: str) -> str | None:
    """The component named exactly after one record (``Order`` for ``orders``; not the list wrapper
    ``Orders``), else one that only decorates the noun (``PublicOrder``, ``OrderResponse``)."""
    exact = next((n for n in names if snake_name(n.rsplit(".", 1)[-1]) == item), None)
    return exact or next((n for n in names if schema_matches_noun(n, noun)), None)


def _lists_records(property_name: str, noun: str) -> bool:
    """Whether a wrapper's array property holds the listed records: a generic list name or the noun's."""
    def one(name: str) -> str:
        return compact_name(singular(snake_name(name)))

    return compact_name(property_name) in LIST_PROPERTY_NAMES or one(property_name) == one(noun)


def _first_alternative(schema: Any) -> Any:
    """An inline ``anyOf``/``oneOf`` schema's first alternative (the schema itself otherwise)."""
    if isinstance(schema, dict) and "$ref" not in schema and "properties" not in schema:
        for keyword in ("anyOf", "oneOf"):
            options = schema.get(keyword)
            if isinstance(options, list) and options and isinstance(options[0], dict):
                return options[0]
    return schema


def _field_keywords(schema: Any) -> Any:
    """The keywords an entity field is built from (nested object properties are not part of it)."""
    if not isinstance(schema, dict):
        return schema
    kept = {k: v for k, v in schema.items() if k in _FIELD_KEYWORDS}
    return {**kept, "properties": {}} if "properties" in schema else kept


def _mapping(value: Any) -> dict[Any, Any]:
    return value if isinstance(value, dict) else {}


def _sequence(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _string_list(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _reason(error: Exception) -> str:
    if isinstance(error, ValidationError) and error.errors():
        return str(error.errors()[0].get("msg", error)).removeprefix("Value error, ")
    if isinstance(error, RecursionError):
        return "schema nesting too deep"
    if isinstance(error, _UNFORESEEN):
        return f"{INTERNAL_ERROR}: {type(error).__name__}: {error}"
    return str(error)


def import_openapi(
    document: Any, *, location: str | None = None, service_id: str | None = None, domain: str | None = None
) -> ImportResult:
    """One service from an OpenAPI 3.x document (a parsed dict or a path to JSON/YAML)."""
    if isinstance(document, (str, Path)):
        from compoworld_assets.engine.specs.importers import import_spec_file

        return import_spec_file(document, "openapi", service_id=service_id, domain=domain)
    return _import_document(document, location=location or "<openapi>", service_id=service_id, domain=domain)


@guarded_importer(KIND)
def _import_document(document: Any, *, location: str, service_id: str | None, domain: str | None) -> ImportResult:
    if not isinstance(document, dict):
        return ImportResult(
            quarantined=[
                QuarantinedSpec.from_error(
                    KIND, location, "OpenAPI document is not an object", preview(document)
                )
            ]
        )
    version = str(document.get("openapi", document.get("swagger", "")))
    if not version.startswith("3."):
        return ImportResult(
            quarantined=[
                QuarantinedSpec.from_error(
                    KIND,
                    location,
                    f"unsupported OpenAPI version {version or 'missing'!r} (3.x required)",
                    preview(document.get("info")),
                )
            ]
        )
    if not isinstance(document.get("paths"), dict):
        return ImportResult(
            quarantined=[
                QuarantinedSpec.from_error(
                    KIND, location, "OpenAPI document has no paths object", preview(document.get("info"))
                )
            ]
        )
    try:
        return _Importer(document, location, service_id, domain).run()
    except _CAUGHT as error:
        return ImportResult(
            quarantined=[
                QuarantinedSpec.from_error(KIND, location, _reason(error), preview(document.get("info")))
            ]
        )
