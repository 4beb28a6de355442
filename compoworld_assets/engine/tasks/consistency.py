"""The value-consistency validator: every task's arguments and written records, checked before the gate.

Rules are general: they read field names, shared types, formats and schemas, never a service.
Argument rules look at each call of the gold run; record rules at each record a create or
update step wrote, where a problem counts when it involves a field the step set (an update of
a status does not answer for the seeded amounts beside it). Each violation names its rule, so
quarantine reasons can be counted by rule.

* ``schema`` — the arguments satisfy the tool's parameter schema (required, types, enums,
  patterns, bounds);
* ``empty`` — no argument is empty (``""``, ``{}``, ``[]``, null);
* ``format`` — typed and name-hinted values are well formed: emails, phones, URLs, currency and
  country codes, dates, IBANs (ISO 7064 check digits), SKUs; a value of the parameter's own ``enum`` is;
* ``near_today`` — dates the user states lie within :data:`NEAR_DAYS` of the task's day (a birth date:
  before it);
* ``lookup`` — a record id the user states exists in the world (when its service is mounted);
* ``person`` — a name beside an email is that person's name in the world's population (its first or
  last name for a field that holds one part);
* ``positive`` — quantities are at least one, amounts above zero (balances excepted);
* ``interval`` — end-like dates are not before their start-like partner;
* ``amounts`` — tax and net within gross, net + tax within gross, total = quantity x unit price;
* ``place`` — a record's city lies in its country;
* ``parent`` — a record's currency is the one of a record it belongs to, and an amount both have
  is not above the parent's;
* ``grounded`` — a value taken from a world-model step (reported, or handed to a later step) is held
  by a record of the world or an argument (:mod:`.grounding`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from stdnum import iban as iban_number

from compoworld_assets.engine.library.population import Person, Population
from compoworld_assets.engine.library.seeding import (
    BIRTH_WORDS,
    amount_roles,
    effective_type,
    interval_pairs,
    person_slot,
    person_value,
)
from compoworld_assets.engine.library.wording import words
from compoworld_assets.engine.specs.model import Effect, EntitySpec, FieldSpec, ServiceSpec, ToolSpec
from compoworld_assets.engine.tasks.arguments import argument_entity, iso_day, satisfies
from compoworld_assets.engine.tasks.grounding import ungrounded_values
from compoworld_assets.engine.tasks.model import ArgBinding, Task, ToolCallRecord
from compoworld_assets.engine.types import is_entity_ref, parse_entity_ref, value_matches_type
from compoworld_assets.engine.values import CITIES

NEAR_DAYS = (-120, 240)
SKU = re.compile(r"[A-Z0-9][A-Z0-9._\-]{2,39}")
FORMAT_TYPES = frozenset({"email", "phone", "url", "currency", "date", "datetime"})
SIGNED_WORDS = frozenset({"balance", "adjustment", "delta", "difference", "change", "offset"})
QUANTITY_WORDS = frozenset({"quantity", "qty", "units", "seats", "nights"})
CITY_COUNTRY = dict(CITIES)
MONEY_TOLERANCE = 0.011


@dataclass(frozen=True)
class Violation:
    rule: str
    where: str
    detail: str

    def __str__(self) -> str:
        return f"{self.rule}: {self.where}: {self.detail}"


@dataclass(frozen=True)
class _Argument:
    name: str
    value: Any
    binding: ArgBinding
    entity: EntitySpec
    schema: dict[str, Any]


def check_task(task: Task, specs: Mapping[str, ServiceSpec], calls: list[ToolCallRecord],
               answer: Mapping[str, Any] | None = None, simulated: Collection[str] = ()) -> list[Violation]:
    """Every violation in ``task``'s gold run ``calls`` (empty when the task is consistent); given its
    ``answer`` and the ``simulated`` tools (qualified names) the world model served, also ``grounded``."""
    found = [Violation("grounded", where, detail)
             for where, detail in ungrounded_values(task.initial_state, calls, answer or {}, simulated)]
    population = Population.generate(task.seed)
    people = {p.email.casefold(): p for p in population.everyone()}
    today = date.fromisoformat(task.today)
    for step, call in zip(task.plan.steps, calls, strict=True):
        spec = specs[step.service_id]
        tool = spec.tool(step.tool)
        where = f"step {step.index} ({step.tool})"
        entity = argument_entity(spec, tool, list(call.arguments))
        params = tool.parameter_properties()
        arguments = [_Argument(name, value, step.args.get(name, ArgBinding(kind="constant")),
                               entity, params.get(name) if isinstance(params.get(name), dict) else {})
                     for name, value in sorted(call.arguments.items())]
        for rule in ARGUMENT_RULES:
            found += [Violation(rule.__name__.removeprefix("_rule_"), f"{where} {a}", d)
                      for a, d in rule(arguments, task, today)]
        found += [Violation("person", where, d) for d in _people(call.arguments, entity, people)]
        found += [Violation("schema", where, f"missing required {name!r}")
                  for name in tool.required_parameters() if name in params and name not in call.arguments]
        record = _written(tool, call)
        if record is not None:
            written = spec.entity(tool.entity or "")
            changed = set(call.arguments) | set(tool.sets) if tool.effect == Effect.UPDATE else set(record)
            for rule in RECORD_RULES:
                found += [Violation(rule.__name__.removeprefix("_rule_"), f"{where} {tool.entity}", d)
                          for fields, d in rule(record, written, task, spec) if set(fields) & changed]
    return found


def _written(tool: ToolSpec, call: ToolCallRecord) -> dict[str, Any] | None:
    data = call.result.get("data") if call.result.get("success") else None
    if tool.effect in (Effect.CREATE, Effect.UPDATE) and tool.entity and isinstance(data, dict):
        return data
    return None


ArgumentRule = Callable[[list[_Argument], Task, date], Iterator[tuple[str, str]]]
RecordRule = Callable[[dict[str, Any], EntitySpec, Task, ServiceSpec], Iterator[tuple[tuple[str, ...], str]]]


def _rule_schema(arguments: list[_Argument], task: Task, today: date) -> Iterator[tuple[str, str]]:
    for a in arguments:
        if a.schema and not satisfies(a.value, a.schema):
            yield a.name, f"{a.value!r} does not satisfy its schema"


def _rule_empty(arguments: list[_Argument], task: Task, today: date) -> Iterator[tuple[str, str]]:
    for a in arguments:
        if is_empty(a.value):
            yield a.name, f"empty value {a.value!r}"


def is_empty(value: Any) -> bool:
    return value is None or value in ({}, []) or (isinstance(value, str) and not value.strip())


def _rule_format(arguments: list[_Argument], task: Task, today: date) -> Iterator[tuple[str, str]]:
    for a in arguments:
        if a.value in (a.schema.get("enum") or ()):
            continue  # the spec's own values are well formed by definition (a lower-case country code)
        field = a.entity.field(a.name)
        kind = (effective_type(field) if field is not None else None) or a.binding.type
        problem = format_problem(a.name, kind, a.value)
        if problem:
            yield a.name, problem


def format_problem(name: str, kind: str | None, value: Any) -> str | None:
    """Why ``value`` is not a well-formed value of field ``name`` (shared type ``kind``), or None."""
    if not isinstance(value, str) or is_empty(value):
        return None
    names = set(words(name))
    if kind in FORMAT_TYPES and not value_matches_type(kind, value):
        return f"{value!r} is not a valid {kind}"
    if kind == "country" and not re.fullmatch(r"[A-Z]{2}|[A-Z][a-z]+(?: [A-Z][a-z]+)*", value):
        return f"{value!r} is not a country code or name"
    if "iban" in names and not iban_number.is_valid(value):
        return f"{value!r} is not a valid IBAN"
    if "sku" in names and not SKU.fullmatch(value):
        return f"{value!r} is not a SKU (upper-case letters, digits and dashes)"
    return None


def _rule_near_today(arguments: list[_Argument], task: Task, today: date) -> Iterator[tuple[str, str]]:
    for a in arguments:
        if a.binding.kind != "constant" or not isinstance(a.value, str):
            continue
        day = iso_day(a.value)
        if day is None:
            continue
        if set(words(a.name)) & BIRTH_WORDS:  # a birth date lies decades back, never ahead
            if day >= today:
                yield a.name, f"birth date {a.value} is not before {task.today}"
        elif not NEAR_DAYS[0] <= (day - today).days <= NEAR_DAYS[1]:
            yield a.name, f"{a.value} is {(day - today).days} days from {task.today}"


def _rule_lookup(arguments: list[_Argument], task: Task, today: date) -> Iterator[tuple[str, str]]:
    for a in arguments:
        kind = a.binding.type
        if a.binding.kind == "step_output" or not is_entity_ref(kind) or not isinstance(a.value, str):
            continue
        service_id, entity = parse_entity_ref(kind or "")
        state = task.initial_state.services.get(service_id)
        if state is not None and a.value not in state.tables.get(entity, {}):
            yield a.name, f"{entity} {a.value} does not exist in {service_id}"


def _rule_positive(arguments: list[_Argument], task: Task, today: date) -> Iterator[tuple[str, str]]:
    for a in arguments:
        if not isinstance(a.value, (int, float)) or isinstance(a.value, bool):
            continue
        names = set(words(a.name))
        field = a.entity.field(a.name)
        money = field is not None and effective_type(field) == "money"
        if names & QUANTITY_WORDS and a.value < 1:
            yield a.name, f"quantity {a.value} is below one"
        elif money and not names & SIGNED_WORDS and a.value <= 0:
            yield a.name, f"amount {a.value} is not positive"


def _people(args: dict[str, Any], entity: EntitySpec, people: dict[str, Person]) -> Iterator[str]:
    """Within one slot, a name (or a part of it: ``first_name``) and an email of two different people of the world."""
    emails: dict[str | None, Any] = {}
    names: dict[str | None, list[FieldSpec]] = {}
    for spec_field in entity.fields:
        kind = effective_type(spec_field)
        if spec_field.enum is None and spec_field.name in args:
            if kind == "email":
                emails[person_slot(spec_field)] = args[spec_field.name]
            elif kind == "person_name":
                names.setdefault(person_slot(spec_field), []).append(spec_field)
    for slot, email in emails.items():
        owner = people.get(email.casefold()) if isinstance(email, str) else None
        for spec_field in names.get(slot, []) if owner is not None else []:
            name, expected = args[spec_field.name], person_value(owner, "person_name", spec_field.name)
            if isinstance(name, str) and name.casefold() != expected.casefold():
                yield f"{slot or 'main'} {spec_field.name} {name!r} is not the name of {email} ({expected})"


def _rule_interval(record: dict[str, Any], entity: EntitySpec, task: Task,
                   spec: ServiceSpec) -> Iterator[tuple[tuple[str, ...], str]]:
    for start, end, _, _ in interval_pairs(entity):
        low, high = _moment(record.get(start.name)), _moment(record.get(end.name))
        if low is not None and high is not None and high < low:
            yield (start.name, end.name), f"{end.name} {record[end.name]} is before {start.name} {record[start.name]}"


def _moment(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    return moment.replace(tzinfo=None)


def _rule_amounts(record: dict[str, Any], entity: EntitySpec, task: Task,
                  spec: ServiceSpec) -> Iterator[tuple[tuple[str, ...], str]]:
    names = {role: name for name, role in amount_roles(entity).items()
             if isinstance(record.get(name), (int, float)) and not isinstance(record.get(name), bool)}
    values = {role: record[name] for role, name in names.items()}
    gross, tax, net = values.get("gross"), values.get("tax"), values.get("net")
    if gross is not None and tax is not None and tax > gross:
        yield (names["gross"], names["tax"]), f"tax {tax} is above gross {gross}"
    if gross is not None and net is not None and net > gross:
        yield (names["gross"], names["net"]), f"net {net} is above gross {gross}"
    if gross is not None and tax is not None and net is not None and net + tax > gross + MONEY_TOLERANCE:
        yield (names["gross"], names["tax"], names["net"]), f"net {net} + tax {tax} is above gross {gross}"
    quantity, unit, total = values.get("quantity"), values.get("unit_price"), values.get("total")
    if quantity is not None and unit is not None and total is not None \
            and abs(quantity * unit - total) > MONEY_TOLERANCE:
        yield (names["quantity"], names["unit_price"], names["total"]), \
            f"total {total} is not quantity {quantity} x unit price {unit}"


def _rule_place(record: dict[str, Any], entity: EntitySpec, task: Task,
                spec: ServiceSpec) -> Iterator[tuple[tuple[str, ...], str]]:
    located = {effective_type(f): f.name for f in entity.fields
               if effective_type(f) in ("city", "country") and person_slot(f) is None}
    if "city" not in located or "country" not in located:
        return
    city, country = record.get(located["city"]), record.get(located["country"])
    if city in CITY_COUNTRY and isinstance(country, str) and len(country) == 2 and CITY_COUNTRY[city] != country:
        yield (located["city"], located["country"]), f"{city} is not in {country}"


def _rule_parent(record: dict[str, Any], entity: EntitySpec, task: Task,
                 spec: ServiceSpec) -> Iterator[tuple[tuple[str, ...], str]]:
    """Amounts within every parent's same-named amount; the currency of at least one parent (a
    journal entry may sit in its account's currency and point at an invoice in another)."""
    matched, differing = False, []
    for reference, name, parent in _parents(record, entity, task, spec):
        for child_field in entity.fields:
            mine, theirs = record.get(child_field.name), parent.get(child_field.name)
            kind = effective_type(child_field)
            if kind == "currency" and mine and theirs:
                matched = matched or mine == theirs
                differing.append((reference, child_field.name, f"{name} {record[reference]}'s {theirs}"))
            if kind == "money" and isinstance(mine, (int, float)) and isinstance(theirs, (int, float)) \
                    and theirs > 0 and mine > theirs + MONEY_TOLERANCE:
                yield (reference, child_field.name), \
                    f"{child_field.name} {mine} is above {name} {record[reference]}'s {theirs}"
    if differing and not matched:
        fields = tuple(sorted({f for reference, field, _ in differing for f in (reference, field)}))
        mine = record.get(differing[0][1])
        yield fields, f"currency {mine} differs from " + " and ".join(what for _, _, what in differing)


def _parents(record: dict[str, Any], entity: EntitySpec, task: Task,
             spec: ServiceSpec) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(reference field, entity name, record) of every record of the world ``record`` points at."""
    own = f"{spec.id}.{entity.name}.id"
    for spec_field in entity.fields:
        if not is_entity_ref(spec_field.type) or spec_field.type == own or not record.get(spec_field.name):
            continue
        service_id, name = parse_entity_ref(spec_field.type or "")
        state = task.initial_state.services.get(service_id)
        parent = state.tables.get(name, {}).get(record[spec_field.name]) if state else None
        if parent is not None:
            yield spec_field.name, name, parent


ARGUMENT_RULES: tuple[ArgumentRule, ...] = (_rule_schema, _rule_empty, _rule_format, _rule_near_today,
                                            _rule_lookup, _rule_positive)
RECORD_RULES: tuple[RecordRule, ...] = (_rule_interval, _rule_amounts, _rule_place, _rule_parent)
RULES = ("schema", "empty", "format", "near_today", "lookup", "person", "positive", "interval", "amounts",
         "place", "parent")
