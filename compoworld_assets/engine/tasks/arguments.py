"""The values a task's user asks for: drawn from the task's world and consistent with each other.

The sampler leaves constant arguments open (``value=None``); instantiation draws them here,
the way the seeder makes a record (:func:`~compoworld_assets.engine.library.seeding.draw_record`):
one person per slot taken from the world's population, one currency per record, amounts that
add up, end dates after start dates and every date near the task's day, field-name-aware texts
(IBANs, SKUs, subjects...). Parameters with constraints a field cannot express (a pattern, a
format, bounds) use :func:`~compoworld_assets.engine.values.schema_value` when the drawn value
does not satisfy them.

Some consistency depends on values only the gold run knows (the email a look-up returned, the
payment a refund is for), so :func:`harmonize` adjusts constants after a first gold run: a name
beside an email becomes that person's name, a currency follows the record referenced, an amount
stays within its parent's, an update's end date stays after the record's start date and its new
city in the record's country.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from datetime import date, datetime
from typing import Any

import jsonschema

from compoworld_assets.engine.library.population import Person, Population
from compoworld_assets.engine.library.seeding import (
    BIRTH_WORDS,
    DEFAULT_ROWS,
    PAST_WORDS,
    draw_record,
    effective_type,
    interval_pairs,
    person_slot,
    person_value,
    relate_amounts,
)
from compoworld_assets.engine.library.wording import words
from compoworld_assets.engine.runtime.state import WorldState
from compoworld_assets.engine.specs.model import Effect, EntitySpec, FieldSpec, ServiceSpec, ToolSpec
from compoworld_assets.engine.tasks.model import Plan, PlanStep, ToolCallRecord
from compoworld_assets.engine.types import (
    TYPE_KEY,
    is_entity_ref,
    is_known_type,
    parse_entity_ref,
    value_matches_type,
)
from compoworld_assets.engine.values import CITIES, schema_value

PERSON_VALUES = ("person_name", "phone", "company_name", "address", "city", "country")


def realize_constants(plan: Plan, specs: Mapping[str, ServiceSpec], population: Population, today: str,
                      rng: random.Random, rows: int = DEFAULT_ROWS) -> Plan:
    """The plan with every open constant (``value=None``) drawn; set constants are kept."""
    day = date.fromisoformat(today)
    steps = []
    for step in plan.steps:
        open_names = [n for n, b in step.args.items() if b.kind == "constant" and b.value is None]
        if not open_names:
            steps.append(step)
            continue
        spec = specs[step.service_id]
        drawn = step_values(spec, spec.tool(step.tool), list(step.args), population, day, rng, rows)
        args = {n: b.model_copy(update={"value": drawn[n]}) if n in open_names else b
                for n, b in step.args.items()}
        steps.append(step.model_copy(update={"args": args}))
    return Plan(steps=steps)


def argument_entity(spec: ServiceSpec, tool: ToolSpec, names: list[str]) -> EntitySpec:
    """The arguments ``names`` of ``tool`` as the fields of one record (the tool's entity where it has them)."""
    own = spec.entity(tool.entity) if tool.entity else None
    params = tool.parameter_properties()
    fields = []
    for name in names:
        found = own.field(name) if own is not None else None
        stated = params.get(name).get(TYPE_KEY) if isinstance(params.get(name), dict) else None
        if found is not None and is_known_type(stated) and stated != found.type:
            found = found.model_copy(update={"type": stated})  # the tool's own form (a datetime for a date field)
        made = found or _field_from_schema(name, params.get(name))
        if made is not None and name != "id":
            fields.append(made)
    return EntitySpec(name=tool.entity or "Arguments", id_prefix="arg", fields=fields)


def step_values(spec: ServiceSpec, tool: ToolSpec, names: list[str], population: Population, day: date,
                rng: random.Random, rows: int = DEFAULT_ROWS) -> dict[str, Any]:
    """Consistent values for the arguments ``names`` of one call, about a person of the world."""
    entity = argument_entity(spec, tool, names)
    record = draw_record(spec, entity, population, rng, anchor=rng.randint(1, max(rows, 1)),
                         index=rows + rng.randint(1, 90), rows=rows, near=day)
    params = tool.parameter_properties()
    values: dict[str, Any] = {}
    for name in names:
        schema = params.get(name) if isinstance(params.get(name), dict) else {}
        value = record.get(name)
        if value is None or _hollow(value, schema) or not satisfies(value, schema):
            value = schema_value(_one_entry(schema) if _is_map(schema) else schema, rng)
        values[name] = value
    return _not_before(values, day) if tool.effect == Effect.CREATE else values


def _not_before(values: dict[str, Any], day: date) -> dict[str, Any]:
    """A new record's own dates of a done thing (``created_at``, ``sent_at``: words in ``PAST_WORDS``, not a birth
    date) moved to ``day`` when drawn before it: a request made today creates a record of today, not of a past
    day nobody stated."""
    moved = dict(values)
    for name, value in values.items():
        parts = set(words(name))
        if not isinstance(value, str) or not parts & PAST_WORDS or parts & BIRTH_WORDS:
            continue
        drawn = iso_day(value)
        if drawn is not None and drawn < day:
            moved[name] = day.isoformat() + value[10:]
    return moved


def iso_day(value: str) -> date | None:
    """The day of an ISO date or datetime (``2026-06-01``, ``2026-06-01T09:00:00Z``), or None for anything else."""
    if not re.match(r"\d{4}-\d{2}-\d{2}", value):
        return None
    try:
        return datetime.fromisoformat(value).date() if "T" in value else date.fromisoformat(value)
    except ValueError:
        return None


def _hollow(value: Any, schema: dict[str, Any]) -> bool:
    """An empty object or list where the schema says what goes in it (an email's ``Content``): a request of
    nothing; or a value that is not of the parameter's shared type (a birth *date* for a ``datetime``)."""
    if value in ({}, []):
        return bool(schema.get("properties") or schema.get("items") or schema.get("allOf")) or _is_map(schema)
    kind = schema.get(TYPE_KEY)
    return is_known_type(kind) and not is_entity_ref(kind) and not value_matches_type(kind, value)


def _is_map(schema: dict[str, Any]) -> bool:
    """A free-form map or document (``metadata``: string → string; a bare ``{"type": "object"}`` body): an object
    of no named properties that takes others."""
    return schema.get("type") == "object" and not schema.get("properties") and schema.get(
        "additionalProperties", True) is not False


def _one_entry(schema: dict[str, Any]) -> dict[str, Any]:
    """A map's schema asking for at least one entry (of its values' schema, or of any value)."""
    extra = schema.get("additionalProperties")
    return {**schema, "minProperties": 1, "additionalProperties": extra if isinstance(extra, dict) else {}}


def satisfies(value: Any, schema: dict[str, Any]) -> bool:
    """Whether ``value`` meets the JSON schema ``schema`` (types, enums, patterns, bounds); a schema
    jsonschema cannot read constrains nothing."""
    try:
        return jsonschema.validators.validator_for(schema)(schema).is_valid(value)
    except (jsonschema.SchemaError, re.error, TypeError, ValueError):
        return True


def _field_from_schema(name: str, schema: Any) -> FieldSpec | None:
    if not isinstance(schema, dict):
        return FieldSpec(name=name, json_type="string")
    json_type = schema.get("type", "string")
    if isinstance(json_type, list):
        json_type = next((t for t in json_type if t != "null"), "string")
    if json_type not in ("string", "integer", "number", "boolean", "array", "object"):
        json_type = "string"
    kind = schema.get(TYPE_KEY)
    kind = kind if is_known_type(kind) else None
    items = schema.get("items") if json_type == "array" and isinstance(schema.get("items"), dict) else None
    return FieldSpec(name=name, json_type=json_type, type=kind, description=str(schema.get("description", "")),
                     enum=list(schema["enum"]) if isinstance(schema.get("enum"), list) else None, items=items)


def harmonize(plan: Plan, calls: list[ToolCallRecord], specs: Mapping[str, ServiceSpec], initial: WorldState,
              final: WorldState, population: Population, rng: random.Random) -> Plan:
    """Constants adjusted to the values the gold run resolved (see the module docstring)."""
    by_email = {p.email.casefold(): p for p in population.everyone()}
    steps = []
    for step, call in zip(plan.steps, calls, strict=True):
        spec = specs[step.service_id]
        tool = spec.tool(step.tool)
        constants = {n for n, b in step.args.items() if b.kind == "constant"}
        if not constants:
            steps.append(step)
            continue
        args = dict(call.arguments)
        entity = argument_entity(spec, tool, list(step.args))
        _match_people(args, entity, constants, by_email)
        own = f"{spec.id}.{tool.entity}.id" if tool.entity else None
        for parent in _parents(args, entity, own, initial, final):
            _follow_parent(args, entity, constants, parent, rng)
        if tool.effect == Effect.UPDATE:
            _keep_record_consistent(args, spec, tool, constants, initial, rng)
        steps.append(_with_values(step, args, constants))
    return Plan(steps=steps)


def _with_values(step: PlanStep, args: dict[str, Any], constants: set[str]) -> PlanStep:
    bound = {n: b.model_copy(update={"value": args[n]}) if n in constants and n in args else b
             for n, b in step.args.items()}
    return step.model_copy(update={"args": bound})


def _match_people(args: dict[str, Any], entity: EntitySpec, constants: set[str],
                  by_email: dict[str, Person]) -> None:
    """A constant name, phone, company or place beside an email describes that email's person.

    Fields of one slot (``payer_email``/``payer_name``) share a person; location fields named as
    such (``city``) belong to the record's main person, the first slot with an email.
    """
    slots: dict[str | None, list[FieldSpec]] = {}
    for spec_field in entity.fields:
        if spec_field.enum is None and effective_type(spec_field) in (*PERSON_VALUES, "email"):
            slots.setdefault(person_slot(spec_field), []).append(spec_field)
    emails = {slot: next((args.get(f.name) for f in fields if effective_type(f) == "email"), None)
              for slot, fields in slots.items()}
    main = next((e for s, e in emails.items() if s is not None and e), None)
    for slot, fields in slots.items():
        email = emails[slot] or (main if slot is None else None)
        person = by_email.get(email.casefold()) if isinstance(email, str) else None
        if person is None:
            continue
        for spec_field in fields:
            kind = effective_type(spec_field) or ""
            if kind in PERSON_VALUES and spec_field.name in constants:
                args[spec_field.name] = person_value(person, kind, spec_field.name)


def _parents(args: dict[str, Any], entity: EntitySpec, own: str | None, initial: WorldState,
             final: WorldState) -> list[dict[str, Any]]:
    """The existing records the arguments name (other than the record the call itself is about)."""
    found = []
    for spec_field in entity.fields:
        value = args.get(spec_field.name)
        if not is_entity_ref(spec_field.type) or spec_field.type == own or not isinstance(value, str):
            continue
        service_id, name = parse_entity_ref(spec_field.type or "")
        for state in (final, initial):
            record = state.services.get(service_id, None)
            row = record.tables.get(name, {}).get(value) if record else None
            if row is not None:
                found.append(row)
                break
    return found


def _follow_parent(args: dict[str, Any], entity: EntitySpec, constants: set[str], parent: dict[str, Any],
                   rng: random.Random) -> None:
    """The record's currency is its parent's; an amount the parent also has stays within it."""
    for spec_field in entity.fields:
        name = spec_field.name
        if name not in constants or name not in parent or parent[name] is None:
            continue
        kind = effective_type(spec_field)
        if kind == "currency":
            args[name] = parent[name]
        elif kind == "money" and isinstance(args.get(name), (int, float)) \
                and isinstance(parent[name], (int, float)) and args[name] > parent[name] > 0:
            args[name] = round(parent[name] * rng.uniform(0.2, 1.0), 2)


def _keep_place(args: dict[str, Any], entity: EntitySpec, constants: set[str], record: dict[str, Any],
                rng: random.Random) -> None:
    """A new city stays in the record's country, a new country is the record's city's."""
    located = {effective_type(f): f.name for f in entity.fields
               if effective_type(f) in ("city", "country") and person_slot(f) is None}
    city, country = located.get("city"), located.get("country")
    if city is None or country is None:
        return
    if city in constants and country not in constants:
        options = sorted(c for c, code in CITIES if code == record.get(country))
        if options:
            args[city] = rng.choice(options)
    elif country in constants and city not in constants and record.get(city) in dict(CITIES):
        args[country] = dict(CITIES)[record[city]]


def _keep_record_consistent(args: dict[str, Any], spec: ServiceSpec, tool: ToolSpec, constants: set[str],
                            initial: WorldState, rng: random.Random) -> None:
    """An update's constants fit the record they change: its dates stay ordered, its amounts add up."""
    entity = spec.entity(tool.entity or "")
    key = spec.key_parameter(tool)
    table = initial.services[spec.id].tables.get(entity.name, {}) if spec.id in initial.services else {}
    before = table.get(args.get(key or "")) if key else None
    if before is None:
        return
    merged = {**before, **{n: v for n, v in args.items() if n in before or entity.field(n)}}
    for start, end, _, _ in interval_pairs(entity):
        low, high = merged.get(start.name), merged.get(end.name)
        if isinstance(low, str) and isinstance(high, str) and high < low:
            if end.name in constants:
                args[end.name] = low
            elif start.name in constants:
                args[start.name] = high
    _keep_place(args, entity, constants, merged, rng)
    merged.update({n: args[n] for n in constants if n in merged})
    related = dict(merged)
    relate_amounts(related, entity, rng)
    for name in constants:
        if name in related and name in args and related[name] != merged[name]:
            args[name] = related[name]
