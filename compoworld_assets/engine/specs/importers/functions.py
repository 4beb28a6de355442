"""Building one ServiceSpec from flat function-style tools (OpenAI, BFCL, MCP, CompoWorld lists).

Function tools carry no resource model, so effects and entities come from the tool names:
the leading verb gives the effect (:data:`VERB_EFFECTS`) and the rest names a noun.
A noun becomes an entity only when the service clearly manages it: some CRUD-verb tool is
about it *and* either a ``create_<noun>`` tool exists or some tool takes a string
``<noun>_id``. Then:

* ``create``: the entity's fields are the create tool's parameters;
* ``read``/``update``/``delete``: need the key parameter (``<noun>_id`` typed as the entity
  reference, or ``id``), otherwise the tool is an ``action``;
* ``list``/``search``: the noun must be plural (``list_issues``; ``list_directory`` is an action).

Anything else, or a verb contradicted by MCP annotations, is an ``action`` with no entity.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from compoworld_assets.engine.deadline import check_deadline
from compoworld_assets.engine.specs.importers.schema import entity_fields, json_type_of
from compoworld_assets.engine.specs.importers.schema_repair import ToolRejected, repair_tool_schemas
from compoworld_assets.engine.specs.importers.update_fields import with_update_fields
from compoworld_assets.engine.specs.infer import (
    annotate_schema,
    context_words,
    entity_name,
    is_plural,
    snake_name,
)
from compoworld_assets.engine.specs.model import (
    ENTITY_NAME_RE,
    Effect,
    EntitySpec,
    ImportResult,
    QuarantinedSpec,
    ServiceSpec,
    SourceRef,
    ToolSpec,
    Transition,
    preview,
)
from compoworld_assets.engine.specs.transitions import declared_transition, derive_transitions
from compoworld_assets.engine.types import TYPE_KEY, entity_ref

VERB_EFFECTS: dict[str, Effect] = {
    **dict.fromkeys(("get", "read", "fetch", "retrieve"), Effect.READ),
    "list": Effect.LIST,
    **dict.fromkeys(("search", "find"), Effect.SEARCH),
    **dict.fromkeys(("create", "add", "new", "post", "insert"), Effect.CREATE),
    **dict.fromkeys(("update", "edit", "set", "modify"), Effect.UPDATE),
    **dict.fromkeys(("delete", "remove"), Effect.DELETE),
}
KEYED_EFFECTS = frozenset({Effect.READ, Effect.UPDATE, Effect.DELETE})
COLLECTION_EFFECTS = frozenset({Effect.LIST, Effect.SEARCH})
_LEADING_FILLERS = frozenset({"all", "a", "an", "the", "my", "new"})
_TRAILING_FILLERS = frozenset({"details", "detail", "info", "information"})
_CUT_WORDS = frozenset({"by", "for", "from", "to", "in", "of", "with", "on", "at"})


@dataclass(frozen=True)
class RawTool:
    """A parsed function tool before effect/entity inference."""

    name: str
    description: str
    parameters: dict[str, Any]
    location: str
    source: Any
    returns: dict[str, Any] = field(default_factory=dict)
    read_only: bool | None = None
    destructive: bool | None = None


def verb_and_noun(tool_name: str) -> tuple[Effect, list[str]]:
    """The effect named by the leading verb and the noun words after it (fillers removed)."""
    words = [w for w in snake_name(tool_name).split("_") if w]
    if not words or words[0] not in VERB_EFFECTS:
        return Effect.ACTION, []
    noun = words[1:]
    while noun and noun[0] in _LEADING_FILLERS:
        noun = noun[1:]
    cut = next((i for i, w in enumerate(noun) if w in _CUT_WORDS), len(noun))
    noun = noun[:cut]
    while noun and noun[-1] in _TRAILING_FILLERS:
        noun = noun[:-1]
    return VERB_EFFECTS[words[0]], noun


def _string_id_nouns(tools: list[RawTool]) -> set[str]:
    nouns: set[str] = set()
    for tool in tools:
        for pname, pschema in (tool.parameters.get("properties") or {}).items():
            snake = snake_name(pname)
            if snake.endswith("_id") and json_type_of(pschema) in (None, "string"):
                nouns.add(entity_name(snake[:-3]))
    return nouns


def _established_entities(tools: list[RawTool]) -> set[str]:
    id_nouns = _string_id_nouns(tools)
    crud_nouns: set[str] = set()
    create_nouns: set[str] = set()
    for tool in tools:
        effect, noun = verb_and_noun(tool.name)
        name = entity_name("_".join(noun)) if noun else ""
        if effect is Effect.ACTION or not name:
            continue
        crud_nouns.add(name)
        if effect is Effect.CREATE:
            create_nouns.add(name)
    return {n for n in crud_nouns if (n in create_nouns or n in id_nouns) and ENTITY_NAME_RE.match(n)}


def _effect_allowed_by_hints(effect: Effect, tool: RawTool) -> bool:
    if tool.read_only and effect not in {Effect.READ, Effect.LIST, Effect.SEARCH}:
        return False
    return not (tool.destructive and effect in {Effect.READ, Effect.LIST, Effect.SEARCH, Effect.CREATE})


def _with_key(parameters: dict[str, Any], own: str) -> dict[str, Any] | None:
    """Parameters whose key parameter is typed ``own``; None when the tool has no key parameter."""
    props = parameters.get("properties") or {}
    if any(isinstance(s, dict) and s.get(TYPE_KEY) == own for s in props.values()):
        return parameters
    id_schema = props.get("id")
    if (
        isinstance(id_schema, dict)
        and json_type_of(id_schema) in (None, "string")
        and not id_schema.get(TYPE_KEY)
    ):
        return {**parameters, "properties": {**props, "id": {**id_schema, "type": "string", TYPE_KEY: own}}}
    return None


def _classify(
    tool: RawTool, parameters: dict[str, Any], service_id: str, entities: set[str]
) -> tuple[Effect, str | None, dict[str, Any]]:
    effect, noun = verb_and_noun(tool.name)
    name = entity_name("_".join(noun)) if noun else ""
    if effect is Effect.ACTION or name not in entities or not _effect_allowed_by_hints(effect, tool):
        return Effect.ACTION, None, parameters
    if effect in COLLECTION_EFFECTS and not is_plural(noun[-1]):
        return Effect.ACTION, None, parameters
    if effect in KEYED_EFFECTS:
        keyed = _with_key(parameters, entity_ref(service_id, name))
        if keyed is None:
            return Effect.ACTION, None, parameters
        return effect, name, keyed
    return effect, name, parameters


def _read_only(raw: RawTool) -> Transition | None:
    """No state change for a tool its server marks read-only (MCP ``readOnlyHint``)."""
    return Transition(kind="query", evidence=["the server marks the tool read-only"]) if raw.read_only else None


def _entity_spec(
    name: str, tools: list[ToolSpec], service_id: str, entity_names: set[str], context: frozenset[str]
) -> EntitySpec:
    own = entity_ref(service_id, name)
    by_effect = {t.effect: t for t in reversed(tools) if t.entity == name}
    source = by_effect.get(Effect.CREATE) or by_effect.get(Effect.UPDATE)
    if source is not None:
        props = {
            k: v
            for k, v in source.parameter_properties().items()
            if not (isinstance(v, dict) and v.get(TYPE_KEY) == own)
        }
        required = source.required_parameters() if source.effect is Effect.CREATE else []
    else:
        reader = by_effect.get(Effect.READ)
        props = dict((reader.returns.get("properties") or {}) if reader else {})
        required = []
    fields = entity_fields(props, required, service_id, entity_names, context)
    return EntitySpec(
        name=name,
        id_prefix=snake_name(name)[:16],
        fields=fields,
        description=f"{name} records managed by {service_id}.",
    )


def build_function_service(
    raw_tools: list[RawTool],
    *,
    service_id: str,
    name: str,
    domain: str,
    description: str,
    source: SourceRef,
    version: str = "1.0.0",
) -> ImportResult:
    """One ServiceSpec from parsed tools; each tool that fails validation is quarantined alone."""
    result = ImportResult()
    entities = _established_entities(raw_tools)
    context = context_words(service_id, name, description)
    tools: list[ToolSpec] = []
    for raw in raw_tools:
        tool_context = context | context_words(raw.name, raw.description)
        check_deadline()
        try:
            parameters, returns = repair_tool_schemas(raw.parameters, raw.returns, raw.location)
            parameters = annotate_schema(parameters, service_id, entities, tool_context)
            returns = annotate_schema(returns, service_id, entities, tool_context)
            effect, entity, parameters = _classify(raw, parameters, service_id, entities)
            tools.append(
                ToolSpec(
                    name=raw.name,
                    description=raw.description,
                    parameters=parameters,
                    returns=returns,
                    effect=effect,
                    entity=entity,
                    transition=declared_transition(raw.source) or _read_only(raw),
                )
            )
        except (ValueError, ToolRejected) as error:  # pydantic's ValidationError is a ValueError
            reason = _first_error(error) if isinstance(error, ValidationError) else str(error)
            result.quarantined.append(
                QuarantinedSpec.from_error(source.kind, raw.location, reason, preview(raw.source))
            )
    entity_specs = [_entity_spec(e, tools, service_id, entities, context) for e in sorted(entities)]
    try:
        result.specs.append(
            derive_transitions(with_update_fields(
                ServiceSpec(
                    id=service_id,
                    name=name,
                    domain=domain,
                    description=description,
                    version=version,
                    source=source,
                    entities=entity_specs,
                    tools=tools,
                )
            ))
        )
    except ValidationError as error:
        result.quarantined.append(
            QuarantinedSpec.from_error(
                source.kind, source.location, _first_error(error), [r.source for r in raw_tools]
            )
        )
    return result


def _first_error(error: ValidationError) -> str:
    first = error.errors()[0] if error.errors() else {"msg": str(error)}
    return str(first.get("msg", error)).removeprefix("Value error, ")

