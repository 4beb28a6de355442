"""The offline synthesizer: writes a service module straight from the spec's CRUD conventions.

Every tool whose effect is create/read/list/search/update/delete (with constant ``sets``
where given, and the status preconditions of its ``transition``) gets a generated function that
follows the conventions in the docstring of :mod:`compoworld_assets.engine.specs.model`; ``action`` tools, tools without an effect and
tools marked not implementable are left to the world model. The generated source depends
only on the spec and :data:`OFFLINE_SYNTHESIZER_VERSION`, byte for byte.
"""

from __future__ import annotations

import pprint
import random
from typing import Any

from compoworld_assets.engine import envelope
from compoworld_assets.engine.specs.model import Effect, EntitySpec, ServiceSpec, ToolSpec
from compoworld_assets.engine.synthesis.base import SynthesizedModule
from compoworld_assets.engine.types import SHARED_TYPES, TYPE_KEY, entity_ref, is_entity_ref
from compoworld_assets.engine.values import schema_value

OFFLINE_SYNTHESIZER_VERSION = "1.1.0"

CODE_EFFECTS = frozenset(
    {Effect.CREATE, Effect.READ, Effect.LIST, Effect.SEARCH, Effect.UPDATE, Effect.DELETE}
)

KEYED_EFFECTS = frozenset({Effect.READ, Effect.UPDATE, Effect.DELETE})

CHECKED_SHARED_TYPES = ("email", "date", "datetime", "currency")
SCHEMA_FORMATS = {"email": "email", "date": "date", "date-time": "datetime"}
GENERATED_WIDTH = 110
RECORD_ID_MARK = "{id}"  # in a service-set value: replaced by the created record's id
TYPE_DEFAULTS: dict[str, Any] = {
    "string": "",
    "integer": 0,
    "number": 0,
    "boolean": False,
    "array": [],
    "object": {},
}

_HELPERS = '''
def _ok(data):
    return {"success": True, "data": data}


def _error(code, message):
    return {"success": False, "error": {"code": code, "message": message}}


def _has_json_type(value, json_type):
    if json_type == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if json_type == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if json_type == "boolean":
        return isinstance(value, bool)
    if json_type == "string":
        return isinstance(value, str)
    if json_type == "array":
        return isinstance(value, list)
    if json_type == "object":
        return isinstance(value, dict)
    if json_type == "null":
        return value is None
    return True


def _has_format(value, kind):
    if not isinstance(value, str):
        return True
    if kind == "date":
        try:
            date.fromisoformat(value)
        except ValueError:
            return False
        return len(value) == 10
    if kind == "datetime":
        try:
            datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return False
        return "T" in value
    pattern = FORMAT_PATTERNS.get(kind)
    return pattern is None or re.fullmatch(pattern, value) is not None


def _same_value(left, right):
    """JSON equality: True is not 1."""
    return left == right and isinstance(left, bool) == isinstance(right, bool)


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _check_arguments(args, rules):
    """The first problem with ``args`` against one tool's argument rules, or None."""
    if not isinstance(args, dict):
        return "arguments must be a JSON object"
    for name in rules["required"]:
        if name not in args:
            return f"missing required parameter {name!r}"
    for name in sorted(args):
        rule = rules["parameters"].get(name)
        if rule is None:
            if rules["closed"]:
                return f"unknown parameter {name!r}"
            continue
        value = args[name]
        if rule.get("types") and not any(_has_json_type(value, kind) for kind in rule["types"]):
            return f"parameter {name!r} must be of type {' or '.join(rule['types'])}"
        if "enum" in rule and not any(_same_value(value, option) for option in rule["enum"]):
            return f"parameter {name!r} must be one of {rule['enum']!r}"
        if "format" in rule and not _has_format(value, rule["format"]):
            return f"parameter {name!r} is not a valid {rule['format']}"
        if "minimum" in rule and _is_number(value) and value < rule["minimum"]:
            return f"parameter {name!r} must be at least {rule['minimum']!r}"
        if "maximum" in rule and _is_number(value) and value > rule["maximum"]:
            return f"parameter {name!r} must be at most {rule['maximum']!r}"
    return None


def _table(state, entity):
    return state.setdefault("tables", {}).setdefault(entity, {})


def _lookup(state, entity, record_id):
    """The stored record (not a copy) with ``record_id``, or None."""
    if not isinstance(record_id, str):
        return None
    return _table(state, entity).get(record_id)


def _missing_reference(state, args, references):
    """A message for the first argument naming a record that does not exist, or None."""
    for name, entity in references:
        if name in args and args[name] is not None and _lookup(state, entity, args[name]) is None:
            return f"{entity} {args[name]!r} not found"
    return None


def _given(args, name, default):
    return copy.deepcopy(args[name]) if name in args else default


def _insert(state, entity, prefix, record):
    """Store ``record`` under the next free id of ``entity`` and return a copy with its id."""
    counters = state.setdefault("counters", {})
    table = _table(state, entity)
    number = counters.get(entity, 0)
    while True:
        number += 1
        record_id = f"{prefix}_{number:04d}"
        if record_id not in table:
            break
    counters[entity] = number
    stored = {"id": record_id}
    stored.update(record)
    table[record_id] = stored
    return copy.deepcopy(stored)


def _select(state, entity, filters, query, text_fields):
    """Copies of the records equal to every filter and containing ``query`` in a text field, by id."""
    table = _table(state, entity)
    needle = None if query is None else str(query).lower()
    matches = []
    for record_id in sorted(table):
        record = table[record_id]
        if not all(_same_value(record.get(name), value) for name, value in filters.items()):
            continue
        if needle is not None and not any(
            isinstance(record.get(name), str) and needle in record[name].lower() for name in text_fields
        ):
            continue
        matches.append(copy.deepcopy(record))
    return matches


def _page(items, limit):
    """The list envelope data; ``count`` is the number of items returned."""
    if isinstance(limit, int) and not isinstance(limit, bool):
        items = items[:max(limit, 0)]
    return {"items": items, "count": len(items)}
'''


class OfflineSynthesizer:
    """Synthesizes the CRUD part of a service without any model; the rest goes to the world model."""

    name = "offline"
    version = OFFLINE_SYNTHESIZER_VERSION

    def synthesize(self, spec: ServiceSpec) -> SynthesizedModule:
        implemented = sorted(t.name for t in spec.tools if is_code_tool(t))
        unimplemented = sorted(t.name for t in spec.tools if not is_code_tool(t))
        return SynthesizedModule(
            service_id=spec.id,
            service_version=spec.version,
            spec_hash=spec.content_hash(),
            synthesizer=self.name,
            synthesizer_version=self.version,
            source=render_module(spec),
            implemented_tools=implemented,
            unimplemented_tools=unimplemented,
            log=[f"generated {len(implemented)} CRUD tools; {len(unimplemented)} left to the world model"],
        )


def is_code_tool(tool: ToolSpec) -> bool:
    return tool.implementable and tool.effect in CODE_EFFECTS


def identifying_parameter(spec: ServiceSpec, tool: ToolSpec) -> str | None:
    """The parameter naming the record a read/update/delete acts on (None for other effects)."""
    return spec.key_parameter(tool) if tool.effect in KEYED_EFFECTS else None


def render_module(spec: ServiceSpec) -> str:
    """The module source: header and constants, shared helpers, one function per code tool, dispatch."""
    tools = sorted(spec.tools, key=lambda t: t.name)
    code_tools = [t for t in tools if is_code_tool(t)]
    header = [
        (
            f'"""Service module {spec.id}, by the CompoWorld offline synthesizer '
            f"{OFFLINE_SYNTHESIZER_VERSION}.\n\nGenerated from spec {spec.content_hash()[:16]}; "
            'do not edit."""'
        ),
        "import copy\nimport re\nfrom datetime import date, datetime",
        f"SERVICE_ID = {spec.id!r}",
        (
            f"INVALID_ARGUMENTS = {envelope.INVALID_ARGUMENTS!r}\nNOT_FOUND = {envelope.NOT_FOUND!r}\n"
            f"UNKNOWN_TOOL = {envelope.UNKNOWN_TOOL!r}"
        ),
        "FORMAT_PATTERNS = " + _literal({name: SHARED_TYPES[name].pattern for name in ("email", "currency")}),
        _mapping_assignment("ARGUMENTS", {t.name: argument_rules(t) for t in code_tools}),
    ]
    definitions = [_HELPERS, *(_render_tool(spec, t) for t in code_tools)]
    dispatch = [
        "TOOLS = {\n" + "".join(f"    {t.name!r}: tool_{t.name},\n" for t in code_tools) + "}",
        "WORLD_MODEL_TOOLS = " + _literal(sorted(t.name for t in tools if not is_code_tool(t))),
    ]
    sections = [_join(header, 1), _join(definitions, 2), _join(dispatch, 1), _HANDLE]
    return _join(sections, 2)


def _join(parts: list[str], blank_lines: int) -> str:
    return ("\n" * (blank_lines + 1)).join(part.strip("\n") for part in parts) + "\n"


_HANDLE = """def handle(state, tool, args):
    function = TOOLS.get(tool)
    if function is not None:
        return function(state, args)
    if tool in WORLD_MODEL_TOOLS:
        return _error(UNKNOWN_TOOL, f"tool {tool!r} has no code implementation; the world model serves it")
    return _error(UNKNOWN_TOOL, f"unknown tool {tool!r}")
"""


def argument_rules(tool: ToolSpec) -> dict[str, Any]:
    """The validator rules for one tool: required names, per-parameter checks, closed or not."""
    return {
        "required": tool.required_parameters(),
        "closed": tool.parameters.get("additionalProperties") is False,
        "parameters": {name: _parameter_rule(schema) for name, schema in tool.parameter_properties().items()},
    }


def _parameter_rule(schema: Any) -> dict[str, Any]:
    if not isinstance(schema, dict):
        return {}
    rule: dict[str, Any] = {}
    types = _json_types(schema)
    if types:
        rule["types"] = types
    if isinstance(schema.get("enum"), list):
        rule["enum"] = list(schema["enum"])
    shared = schema.get(TYPE_KEY)
    if shared in CHECKED_SHARED_TYPES:
        rule["format"] = shared
    elif schema.get("format") in SCHEMA_FORMATS:
        rule["format"] = SCHEMA_FORMATS[schema["format"]]
    for bound in ("minimum", "maximum"):
        if isinstance(schema.get(bound), (int, float)) and not isinstance(schema.get(bound), bool):
            rule[bound] = schema[bound]
    return rule


def _json_types(schema: dict[str, Any]) -> list[str]:
    """The JSON types a parameter schema admits (empty: any), looking into anyOf/oneOf branches."""
    declared = schema.get("type")
    if isinstance(declared, str):
        return [declared]
    if isinstance(declared, list):
        return [t for t in declared if isinstance(t, str)]
    branches = [b for key in ("anyOf", "oneOf") for b in schema.get(key) or [] if isinstance(b, dict)]
    if not branches:
        return []
    types: list[str] = []
    for branch in branches:
        branch_types = _json_types(branch)
        if not branch_types:
            return []
        types.extend(t for t in branch_types if t not in types)
    return types


def _render_tool(spec: ServiceSpec, tool: ToolSpec) -> str:
    entity = spec.entity(tool.entity or "")
    summary = (tool.description.strip().splitlines() or [f"{tool.effect} {entity.name}"])[0][:200]
    lines = [
        f"def tool_{tool.name}(state, args):",
        f"    {summary!r}",
        f"    problem = _check_arguments(args, ARGUMENTS[{tool.name!r}])",
        "    if problem is not None:",
        "        return _error(INVALID_ARGUMENTS, problem)",
    ]
    body = _EFFECT_BODIES[Effect(tool.effect)](spec, tool, entity)
    return "\n".join(lines + [f"    {line}" if line else "" for line in body]) + "\n"


def _key_lines(spec: ServiceSpec, tool: ToolSpec, entity: EntitySpec) -> list[str]:
    key = identifying_parameter(spec, tool)
    return [
        f"record_id = args.get({key!r})",
        f"record = _lookup(state, {entity.name!r}, record_id)",
        "if record is None:",
        f'    return _error(NOT_FOUND, f"{entity.name} {{record_id!r}} not found")',
    ]


def _reference_lines(spec: ServiceSpec, tool: ToolSpec, entity: EntitySpec) -> list[str]:
    references = same_service_references(spec, tool)
    if not references:
        return []
    return [
        *_assignment("references", references),
        "missing = _missing_reference(state, args, references)",
        "if missing is not None:",
        "    return _error(NOT_FOUND, missing)",
    ]


def same_service_references(spec: ServiceSpec, tool: ToolSpec) -> list[tuple[str, str]]:
    """(parameter, entity) for the parameters, other than the identifying one, naming records of this service.

    A parameter is a reference when its ``x-cw-type`` is, or when it is named after an entity
    field whose type is, a reference to one of this service's entities.
    """
    own = {entity_ref(spec.id, e.name): e.name for e in spec.entities}
    key = identifying_parameter(spec, tool)
    entity = spec.entity(tool.entity) if tool.entity else None
    found: list[tuple[str, str]] = []
    for name, schema in sorted(tool.parameter_properties().items()):
        if name == key:
            continue
        ref = schema.get(TYPE_KEY) if isinstance(schema, dict) else None
        field = entity.field(name) if entity else None
        if ref not in own and field is not None:
            ref = field.type
        if ref in own:
            found.append((name, own[ref]))
    return found


def _field_parameters(spec: ServiceSpec, tool: ToolSpec, entity: EntitySpec) -> list[str]:
    """Parameters named after the entity's fields (the key parameter excluded), in field order."""
    params = tool.parameter_properties()
    key = identifying_parameter(spec, tool)
    return [f.name for f in entity.fields if f.name in params and f.name != key]


def _create_body(spec: ServiceSpec, tool: ToolSpec, entity: EntitySpec) -> list[str]:
    params = set(_field_parameters(spec, tool, entity))
    generated = service_set_values(spec, entity, {*params, *tool.sets})
    lines = _reference_lines(spec, tool, entity) + ["record = {"]
    for f in entity.fields:
        default = _field_default(f.required, f.json_type, f.enum)
        if f.name in tool.sets:
            lines.append(f"    {f.name!r}: {_inline_literal(tool.sets[f.name])},")
        elif f.name in params:
            lines.append(f"    {f.name!r}: _given(args, {f.name!r}, {default!r}),")
        else:
            lines.append(f"    {f.name!r}: {generated.get(f.name, default)!r},")
    lines.extend(
        f"    {name!r}: {_inline_literal(value)},"
        for name, value in sorted(tool.sets.items())
        if entity.field(name) is None
    )
    lines.append("}")
    unique = sorted(name for name, value in generated.items() if RECORD_ID_MARK in value)
    if not unique:
        lines.append(f"return _ok(_insert(state, {entity.name!r}, {entity.id_prefix!r}, record))")
        return lines
    return lines + [
        f"created = _insert(state, {entity.name!r}, {entity.id_prefix!r}, record)",
        f"stored = _table(state, {entity.name!r})[created['id']]",
        f"for name in {unique!r}:",
        f"    stored[name] = created[name] = created[name].replace({RECORD_ID_MARK!r}, created['id'])",
        "return _ok(created)",
    ]


def service_set_values(spec: ServiceSpec, entity: EntitySpec, given: set[str]) -> dict[str, str]:
    """What a create stores in the required string fields it is not given: the service sets them, as the
    API does (a payment request's ``ergoPayUrl``, a file's ``download_url``), instead of an empty string
    that no later step could use and that no shared type accepts.

    Each value is valid for the field's type (:func:`schema_value`, seeded by the field, so the module
    stays a function of the spec); a URL or an untyped string also carries the new record's id
    (``RECORD_ID_MARK``, replaced on insert), so records do not share it. Enum fields (the first value)
    and references (no record to point at) are left to :func:`_field_default`.
    """
    values: dict[str, str] = {}
    for f in entity.fields:
        if f.name in given or not f.required or f.json_type != "string" or f.enum or is_entity_ref(f.type):
            continue
        value = str(schema_value(f.json_schema(), random.Random(f"{spec.id}:{entity.name}:{f.name}")))
        if f.type == "url":
            value = f"{value.rstrip('/')}/{RECORD_ID_MARK}"
        elif f.type is None:
            value = f"{value}-{RECORD_ID_MARK}"
        values[f.name] = value
    return values


def _field_default(required: bool, json_type: str, enum: list[Any] | None) -> Any:
    """What a create stores for a field it was not given: None when optional, else a typed blank."""
    if not required:
        return None
    if enum:
        return enum[0]
    return TYPE_DEFAULTS[json_type]


def _read_body(spec: ServiceSpec, tool: ToolSpec, entity: EntitySpec) -> list[str]:
    return _key_lines(spec, tool, entity) + ["return _ok(copy.deepcopy(record))"]


def _precondition_lines(tool: ToolSpec, entity: EntitySpec) -> list[str]:
    """The checks of the record's status a transition needs (:meth:`Transition.refuses`, same words)."""
    transition = tool.transition
    if transition is None or not transition.field:
        return []
    conflict = envelope.CONFLICT
    lines = [f"current = record.get({transition.field!r})"]
    if transition.kind == "status":
        lines += [
            f"if _same_value(current, {_inline_literal(transition.value)}):",
            f'    return _error({conflict!r}, f"{entity.name} {{record_id!r}} is already {{current!r}}")',
        ]
    if transition.allowed_from is not None:
        lines += [
            *_assignment("allowed", transition.allowed_from),
            "if not any(_same_value(current, option) for option in allowed):",
            (f'    return _error({conflict!r}, f"{entity.name} {{record_id!r}} is {{current!r}}; '
            'it must be one of {allowed!r}")'),
        ]
    return lines


def _update_body(spec: ServiceSpec, tool: ToolSpec, entity: EntitySpec) -> list[str]:
    params = tuple(_field_parameters(spec, tool, entity))
    lines = (_key_lines(spec, tool, entity) + _reference_lines(spec, tool, entity)
             + _precondition_lines(tool, entity))
    if params:
        lines += _assignment("fields", params)
        lines.append("changes = {name: copy.deepcopy(args[name]) for name in fields if name in args}")
    else:
        lines.append("changes = {}")
    if tool.sets:
        lines.append(f"changes.update({_inline_literal(tool.sets)})")
    lines += ["record.update(changes)", "return _ok(copy.deepcopy(record))"]
    return lines


def _delete_body(spec: ServiceSpec, tool: ToolSpec, entity: EntitySpec) -> list[str]:
    return _key_lines(spec, tool, entity) + [
        f"del _table(state, {entity.name!r})[record_id]",
        'return _ok({"deleted": record_id})',
    ]


def _select_body(spec: ServiceSpec, tool: ToolSpec, entity: EntitySpec) -> list[str]:
    params = tool.parameter_properties()
    filters = tuple(_field_parameters(spec, tool, entity))
    text_fields = tuple(f.name for f in entity.fields if f.json_type == "string")
    query = (
        "args.get('query')"
        if tool.effect == Effect.SEARCH and "query" in params and "query" not in filters
        else "None"
    )
    limit = "args.get('limit')" if "limit" in params and "limit" not in filters else "None"
    lines = ["filters = {}"]
    if filters:
        lines = [
            *_assignment("filter_fields", filters),
            "filters = {name: args[name] for name in filter_fields if name in args}",
        ]
    return [
        *lines,
        *_assignment("text_fields", text_fields),
        f"items = _select(state, {entity.name!r}, filters, {query}, text_fields)",
        f"return _ok(_page(items, {limit}))",
    ]


_EFFECT_BODIES = {
    Effect.CREATE: _create_body,
    Effect.READ: _read_body,
    Effect.UPDATE: _update_body,
    Effect.DELETE: _delete_body,
    Effect.LIST: _select_body,
    Effect.SEARCH: _select_body,
}


def _mapping_assignment(name: str, mapping: dict[str, Any]) -> str:
    """``NAME = {...}`` with one key per line, each value pretty-printed below its key's indent."""
    lines = [f"{name} = {{"]
    for key in sorted(mapping):
        prefix = f"    {key!r}: "
        text = pprint.pformat(mapping[key], width=110 - len(prefix), sort_dicts=True)
        lines.append(prefix + text.replace("\n", "\n" + " " * len(prefix)) + ",")
    return "\n".join(lines) + "\n}\n"


def _literal(value: Any) -> str:
    """A deterministic, readable Python literal (dict keys sorted) of a JSON-like value."""
    return pprint.pformat(value, width=110, sort_dicts=True) + "\n"


def _assignment(name: str, value: Any) -> list[str]:
    """``name = <literal>`` as body lines, wrapped to stay readable (continuations aligned)."""
    text = pprint.pformat(value, width=GENERATED_WIDTH - 4 - len(name) - 3, sort_dicts=True)
    first, *rest = text.splitlines()
    return [f"{name} = {first}", *(" " * (len(name) + 3) + line for line in rest)]


def _inline_literal(value: Any) -> str:
    return pprint.pformat(value, width=10_000, sort_dicts=True)
