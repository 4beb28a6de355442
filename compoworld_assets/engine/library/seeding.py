"""Seeded, realistic initial state for any service spec, built-in or imported.

All services of a world share one :class:`Population`. Within a record, fields that describe
the same person (``payer_email``/``payer_name``, or ``email``/``full_name``/``phone``) form a
*slot* filled from one person; the record's first slot is the row's *anchor*, person number
``row`` of the pool, so row 3 of the CRM contacts, of the mail messages and of the invoices
all concern the same customer; a field that holds one part of a name (``first_name``, ``surname``) gets
that part of the slot's person's name, and a birth date lies decades back. Ids are ``<id_prefix>_<row:04d>`` and every table gets the same
number of rows, so a reference into any entity (same service or another one seeded for the
same world) can name an id that exists without looking at the other service's state.
"""

from __future__ import annotations

import copy
import random
import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from functools import lru_cache
from typing import Any

from compoworld_assets.engine import values
from compoworld_assets.engine.library import builtin_specs
from compoworld_assets.engine.library.phrases import text_for
from compoworld_assets.engine.library.population import Person, Population
from compoworld_assets.engine.library.roles import Role, parameter_role, role_of
from compoworld_assets.engine.library.wording import words as _words
from compoworld_assets.engine.runtime.state import ServiceState, WorldState
from compoworld_assets.engine.specs.model import (
    Effect,
    EntitySpec,
    FieldSpec,
    ServiceSpec,
    ToolSpec,
)
from compoworld_assets.engine.specs.transitions import ready_statuses
from compoworld_assets.engine.types import SHARED_TYPES, entity_ref, is_entity_ref, parse_entity_ref

__all__ = ["DEFAULT_ROWS", "Person", "Population", "seed_service_state", "seed_world"]

DEFAULT_ROWS = 8
OPTIONAL_EMPTY_RATE = 0.2
PERSON_TYPES = frozenset({"email", "person_name", "phone", "company_name", "address", "city", "country"})
LOOKUP_FILTER_EFFECTS = frozenset({Effect.LIST, Effect.SEARCH})
WEBSITE_WORDS = frozenset({"website", "homepage"})
LOCATION_TYPES = frozenset({"address", "city", "country"})
TYPE_WORDS = frozenset({"email", "name", "full", "first", "last", "given", "family", "fore", "sur", "surname",
                        "forename", "firstname", "lastname", "phone", "mobile", "company", "address", "city",
                        "country"})
# Words that, before ``name``, say which part of a person's name a field holds; and words that say it alone.
NAME_PARTS = {"first": "first", "given": "first", "fore": "first", "last": "last", "family": "last", "sur": "last"}
NAME_PART_WORDS = {"forename": "first", "firstname": "first", "surname": "last", "lastname": "last"}
# A person field without a role (library.roles) is seeded from the customers, a sender from the staff.
SEEDED_STAFF_WORDS = frozenset({"sender"})
UNTYPED_HINTS = {"email": "email", "phone": "phone", "url": "url", "website": "url", "city": "city",
                 "country": "country", "address": "address", "path": "file_path", "currency": "currency"}
# An end-like field follows its start-like partner by a gap in minutes (datetimes) or days (dates).
INTERVALS = [("check_in", "check_out", (1440, 8640), (1, 6)), ("departure", "arrival", (60, 720), (0, 1)),
             ("pickup", "return", (1440, 10080), (1, 7)), ("issue", "due", (20160, 43200), (14, 30)),
             ("start", "end", (30, 240), (1, 14)), ("start", "due", (1440, 43200), (7, 60)),
             ("open", "close", (1440, 20160), (3, 21)), ("from", "until", (60, 1440), (1, 30)),
             ("from", "to", (60, 1440), (1, 30))]
# Dates of things already done lie before the task's day, of things planned after it.
PAST_WORDS = frozenset({"created", "updated", "modified", "sent", "posted", "paid", "signed", "received",
                        "submitted", "applied", "hired", "awarded", "placed", "joined", "shared", "logged",
                        "occurred", "spent", "purchased", "subscribed", "shipped", "last", "reached", "work",
                        "effective", "registered", "completed"})
FUTURE_WORDS = frozenset({"due", "scheduled", "start", "starts", "check", "departure", "pickup", "expected",
                          "expires", "closes", "deadline", "renewal", "estimated", "close"})
BUSINESS_MINUTES = (8 * 60, 18 * 60)
# A birth date lies 18 to 80 years before the day it is drawn near (the seeded year's start when none).
BIRTH_WORDS = frozenset({"birth", "born", "dob", "birthday", "birthdate"})
BIRTH_DAYS = (18 * 365, 80 * 365)
MONEY_RANGES = {"salary": (42_000, 165_000), "gross": (2_500, 12_000), "budget": (2_000, 80_000),
                "rate": (40, 420), "price": (5, 900), "cost": (10, 3_000), "balance": (-20_000, 250_000)}
INTEGER_RANGES = {"quantity": (1, 20), "seats": (5, 200), "capacity": (2, 30), "score": (0, 10),
                  "rating": (1, 5), "size_bytes": (2_048, 8_000_000), "reorder_point": (5, 50), "days": (1,
                             14)}


def seed_service_state(spec: ServiceSpec, population: Population, seed: int,
                       rows_per_entity: int = DEFAULT_ROWS,
                       peers: Iterable[ServiceSpec] = (),
                       entities: Collection[str] | None = None) -> ServiceState:
    """Fill every entity table of ``spec`` with ``rows_per_entity`` valid, connected rows; an entity
    the spec brings seed records for (``ServiceSpec.seed_records``) holds exactly those.

    ``peers`` are the other services of the world; references into them (or into the
    built-in library) use their id prefixes. ``entities``, when given, are the only tables filled (the
    others start empty; pass a set closed under references, :func:`with_referenced`): an entity's rows
    are the same whichever others are filled.
    """
    if rows_per_entity < 0:
        raise ValueError("rows_per_entity must be >= 0")
    catalog = _entity_catalog((spec, *peers))
    state = ServiceState.empty(spec)
    given = spec.seed_records or {}
    ready_by_entity = ready_statuses(spec)
    for entity in spec.entities:
        if entities is not None and entity.name not in entities:
            continue
        if entity.name in given:  # the spec's own data (seed_data.py), as it is
            state.tables[entity.name] = copy.deepcopy(given[entity.name])
            state.counters[entity.name] = len(given[entity.name])
            continue
        rng = random.Random(f"{seed}:{spec.id}:{entity.name}")
        row_maker = _RowMaker(spec, entity, population, rows_per_entity, catalog)
        table = state.tables[entity.name]
        ready = ready_by_entity.get(entity.name, [])
        for index in range(1, rows_per_entity + 1):
            record = row_maker.make(index, rng)
            if index < rows_per_entity:  # the last row keeps its own status, likely one a transition refuses
                record.update(ready[index - 1:index])
            table[record["id"]] = record
        state.counters[entity.name] = rows_per_entity
    _follow_parents(state, spec, seed, keep=set(given))
    return state


def seed_world(specs: Iterable[ServiceSpec], seed: int, rows_per_entity: int = DEFAULT_ROWS,
               population: Population | None = None,
               entities: Mapping[str, Collection[str]] | None = None) -> WorldState:
    """Seed every service of one world from one population (generated from ``seed`` if not given); with
    ``entities``, only those tables of the services it names (see :func:`seed_service_state`)."""
    specs = list(specs)
    population = population or Population.generate(seed)
    return WorldState(services={
        spec.id: seed_service_state(spec, population, seed, rows_per_entity, peers=specs,
                                    entities=None if entities is None or spec.id not in entities
                                    else with_referenced(spec, entities[spec.id]))
        for spec in specs
    })


def with_referenced(spec: ServiceSpec, names: Iterable[str]) -> set[str]:
    """``names`` and every entity of ``spec`` their records refer to, directly or through another."""
    known = {e.name: e for e in spec.entities}
    found: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop()
        if name in found or name not in known:
            continue
        found.add(name)
        todo += [parse_entity_ref(f.type)[1] for f in known[name].fields
                 if isinstance(f.type, str) and is_entity_ref(f.type) and parse_entity_ref(f.type)[0] == spec.id]
    return found


def record_id(id_prefix: str, index: int) -> str:
    return f"{id_prefix}_{index:04d}"


@dataclass(frozen=True)
class _Cast:
    """Who an entity's records are about: each person field's slot and the anchor slot's pool."""

    slots: dict[str, str | None]
    primary: str
    primary_role: str | None

    @classmethod
    def of(cls, entity: EntitySpec) -> _Cast:
        slots = {f.name: person_slot(f) for f in entity.fields if _person_type(f)}
        named = [slot for slot in slots.values() if slot is not None]
        primary = named[0] if named else ""
        return cls(slots, primary, pool_role(primary, entity) if slots else None)


class _RowMaker:
    """Makes the rows of one entity; one instance per table. What the entity's fields are (their types, date
    intervals, currency and amount fields) is worked out once here, not for every row."""

    def __init__(self, spec: ServiceSpec, entity: EntitySpec, population: Population, rows: int,
                 catalog: dict[str, EntitySpec]) -> None:
        self.spec = spec
        self.entity = entity
        self.population = population
        self.rows = rows
        self.catalog = catalog
        self.cast = _Cast.of(entity)
        self.fields = [(f, effective_type(f)) for f in entity.fields]
        self.currencies = currency_fields(entity)
        self.intervals = interval_pairs(entity)
        self.amounts = amount_roles(entity)
        self.casts: dict[str, _Cast | None] = {}  # of the entities this one's references point at

    def make(self, index: int, rng: random.Random, anchor: int | None = None,
             near: date | None = None) -> dict[str, Any]:
        """Row ``index``; its people are those of row ``anchor`` (default ``index``) of other tables.

        With ``near``, dates and datetimes lie around that day (before it for things done,
        after it for things planned) instead of anywhere in the seeded year.
        """
        people: dict[str, Person] = {}
        currency = rng.choice(values.CURRENCIES)
        record: dict[str, Any] = {"id": record_id(self.entity.id_prefix, index)}
        for spec_field, kind in self.fields:
            if not spec_field.required and rng.random() < OPTIONAL_EMPTY_RATE:
                record[spec_field.name] = None
                continue
            record[spec_field.name] = self._value(spec_field, kind, index, rng, people, currency,
                                                  index if anchor is None else anchor)
            if near is not None and kind in ("date", "datetime"):
                record[spec_field.name] = _near_day(near, spec_field, rng)
        main = people.get(self.cast.primary)
        if main is not None:
            _set_currency(record, self.currencies, values.COUNTRY_CURRENCY.get(main.country, currency))
        _order_intervals(record, self.intervals, rng)
        _relate(record, self.amounts, rng)
        return record

    def _value(self, spec_field: FieldSpec, kind: str | None, index: int, rng: random.Random,
               people: dict[str, Person], currency: str, anchor: int) -> Any:
        if spec_field.enum:
            return rng.choice(spec_field.enum)
        if is_entity_ref(kind):
            return self._reference(kind, index, rng, spec_field.required)
        if kind in PERSON_TYPES:
            slot = self.cast.slots.get(spec_field.name)
            person = self._person(self.cast.primary if slot is None else slot, anchor, rng, people)
            return person_value(person, kind, spec_field.name)
        if kind == "currency":
            return currency
        if kind is None and spec_field.name == "username":
            return self._person(self.cast.primary, anchor, rng, people).email.split("@")[0]
        if kind == "url" and _website(spec_field.name):
            person = self._person(self.cast.primary, anchor, rng, people)
            return self.population.company(person.company).website
        if kind is not None:
            return self._typed(kind, spec_field.name, index, rng)
        return self._untyped(spec_field, index, rng)

    def _reference(self, type_name: str, index: int, rng: random.Random, required: bool) -> str | None:
        """An existing id; the same row number when the target's rows are about the same people.

        Row ``n`` of two entities anchored in the same pool concerns the same person, so a
        ticket of customer ``n`` points at order ``n`` of customer ``n``.
        """
        service_id, entity = parse_entity_ref(type_name)
        target = self.catalog.get(type_name)
        prefix = target.id_prefix if target else entity[:4].lower()
        if self.rows == 0:
            return None
        if (service_id, entity) == (self.spec.id, self.entity.name):
            if self.rows == 1:
                return None if not required else record_id(prefix, index)
            return record_id(prefix, rng.choice([n for n in range(1, self.rows + 1) if n != index]))
        if type_name not in self.casts:
            self.casts[type_name] = _Cast.of(target) if target else None
        target_cast = self.casts[type_name]
        if target_cast and target_cast.primary_role is not None \
                and target_cast.primary_role == self.cast.primary_role:
            return record_id(prefix, index)
        return record_id(prefix, rng.randint(1, self.rows))

    def _person(self, slot: str, index: int, rng: random.Random, people: dict[str, Person]) -> Person:
        if slot in people:
            return people[slot]
        pool = self.population.pool(pool_role(slot, self.entity))
        taken = {p.email for p in people.values()}
        if slot == self.cast.primary:
            person = pool[(index - 1) % len(pool)]
        else:
            free = [p for p in pool if p.email not in taken] or pool
            person = rng.choice(free)
        people[slot] = person
        return person

    def _typed(self, kind: str, name: str, index: int, rng: random.Random) -> Any:
        if kind in ("date", "datetime") and set(_words(name)) & BIRTH_WORDS:
            return _near_day(values.EPOCH, FieldSpec(name=name, json_type="string", type=kind), rng)
        if kind == "file_path":
            files = self.population.files
            path = files[(index - 1) % len(files)] if name == "path" else rng.choice(files)
            is_folder = {"folder", "directory"} & set(_words(self.entity.name))
            return path.rsplit("/", 1)[0] if is_folder else path
        if kind == "money":
            low, high = next((r for word, r in MONEY_RANGES.items() if word in name), (5, 5_000))
            return round(rng.uniform(low, high), 2)
        if kind == "url":
            company = rng.choice(self.population.companies + [self.population.home_company])
            return f"{company.website}/{rng.choice(values.WORDS)}/{index}"
        return values.shared_value(kind, rng)

    def _untyped(self, spec_field: FieldSpec, index: int, rng: random.Random) -> Any:
        name = spec_field.name
        match spec_field.json_type:
            case "string":
                return text_for(self.entity.name, name, rng, index)
            case "integer":
                low, high = next((r for word, r in INTEGER_RANGES.items() if word in name), (1, 100))
                return rng.randint(low, high)
            case "number":
                return _number_for(name, rng)
            case "boolean":
                return rng.random() < 0.5
            case "array" if spec_field.items:
                return [values.schema_value(spec_field.items, rng) for _ in range(rng.randint(1, 3))]
            case "array":
                return [values.phrase(rng, 2) for _ in range(rng.randint(1, 3))]
        return {}


def effective_type(spec_field: FieldSpec) -> str | None:
    """The field's shared type if its JSON type fits; for untyped strings, one hinted by the name."""
    return _effective_type(spec_field.type, spec_field.json_type, spec_field.name)


@lru_cache(maxsize=65536)
def _effective_type(kind: str | None, json_type: str, name: str) -> str | None:
    """:func:`effective_type` of the three things it depends on (cached: seeding asks per value)."""
    if kind is not None:
        if is_entity_ref(kind):
            return kind if json_type == "string" else None
        return kind if SHARED_TYPES[kind].json_type == json_type else None
    words = _words(name)
    if json_type == "string":
        if words and words[-1] == "at":
            return "datetime"
        if words and words[-1] in ("date", "on"):
            return "date"
        return next((UNTYPED_HINTS[w] for w in words if w in UNTYPED_HINTS), None)
    if json_type == "number" and set(words) & {"amount", "price", "total", "cost", "balance"}:
        return "money"
    return None


def _person_type(spec_field: FieldSpec) -> bool:
    return spec_field.enum is None and effective_type(spec_field) in PERSON_TYPES


def person_slot(spec_field: FieldSpec) -> str | None:
    """Which person a field describes: its name without type words (``payer_email`` → ``payer``).

    Location fields named as such (``city``, ``shipping_address``) belong to the record's main
    person (None); others (``origin``, ``destination``) get a person of their own.
    """
    words = _words(spec_field.name)
    if effective_type(spec_field) in LOCATION_TYPES and set(words) & LOCATION_TYPES:
        return None
    return "_".join(w for w in words if w not in TYPE_WORDS)


def seeded_role(entity: EntitySpec, field_name: str) -> str:
    """The pool whose people fill person field ``field_name`` of ``entity``'s seeded records: its slot's
    pool, or for a field whose slot is the record's main one (a bare ``email``), the main person's."""
    cast = _Cast.of(entity)
    slot = cast.slots.get(field_name)
    return pool_role(cast.primary if slot is None else slot, entity)


def wanted_role(spec: ServiceSpec, tool: ToolSpec, parameter: str) -> Role | None:
    """The role of the person a parameter of ``tool`` takes, for the graph and the task's values.

    A list or search filter on a person field finds only records that hold that person, and seeded
    records hold people of one pool (:func:`seeded_role`): a filter on a Businessuser's ``email``
    finds customers, whatever its name says, so an employee's email there finds nothing. Any other
    parameter takes the role its words give (:func:`~compoworld_assets.engine.library.roles.parameter_role`).
    """
    named = parameter_role(spec, tool, parameter)
    field = _seeded_field(spec, tool, parameter, LOOKUP_FILTER_EFFECTS)
    return named if field is None else _seeded(named, field[0], parameter)


def url_reaches(spec: ServiceSpec, tool: ToolSpec, path: str, target_spec: ServiceSpec, target_tool: ToolSpec,
                parameter: str) -> bool:
    """Whether a URL output can find a record when it fills a list or search filter.

    Seeded company websites come from the world's one population, so any website output can find a
    record by its website; any other URL is made for its record (``{website}/{word}/{n}``) and is found
    only in that field of the entity that holds it. Parameters that filter no seeded URL field are not
    restricted.
    """
    field = _seeded_field(target_spec, target_tool, parameter, LOOKUP_FILTER_EFFECTS)
    if field is None or effective_type(field[1]) != "url":
        return True
    named = re.sub(r"\[\d*\]", "", path).rsplit(".", 1)[-1]
    if _website(field[1].name):
        return _website(named)
    return (spec.id, tool.entity, named) == (target_spec.id, target_tool.entity, field[1].name)


def field_role(spec: ServiceSpec, entity: EntitySpec, field: FieldSpec) -> Role | None:
    """Whose values a field of ``spec``'s records holds: the seeder's pool for a seeded person field,
    else (and in the spec's own data) the role its words give."""
    named = role_of(field.name, entity.name, field.description)
    return _seeded(named, entity, field.name) if is_seeded(spec, entity) else named


def is_seeded(spec: ServiceSpec, entity: EntitySpec) -> bool:
    """Whether ``entity``'s records are made by the seeder (not given as the spec's own data)."""
    return entity.name not in (spec.seed_records or {})


def _seeded_field(spec: ServiceSpec, tool: ToolSpec, name: str,
                  effects: frozenset[Effect]) -> tuple[EntitySpec, FieldSpec] | None:
    """The seeded record field ``name`` of ``tool``'s entity when ``tool`` has one of ``effects``."""
    if tool.entity is None or tool.effect not in effects:
        return None
    entity = spec.entity(tool.entity)
    field = entity.field(name)
    if field is None or not is_seeded(spec, entity):
        return None
    return entity, field


def _seeded(named: Role | None, entity: EntitySpec, name: str) -> Role | None:
    """The pool a seeded person field holds (``named`` when its words say the same), else ``named``."""
    if not _person_type(entity.field(name)):
        return named
    role = seeded_role(entity, name)
    if named is not None and named.role == role:
        return named
    return Role(role, f"{name}: {entity.name} records are seeded with {role}s")


def _website(name: str) -> bool:
    return bool(WEBSITE_WORDS & set(_words(name)))


def pool_role(slot: str, entity: EntitySpec) -> str:
    """Which pool of the population a slot's person comes from (see :mod:`.roles`).

    The slot's words decide (``owner`` → employee, ``payer`` → customer); a slot without a role word
    takes its entity's role (an ``Employee``'s email, a ``Candidate``'s, a ``Vendor``'s contact).
    """
    role = role_of(slot, entity.name)
    if role is not None:
        return role.role
    return "employee" if set(slot.split("_")) & SEEDED_STAFF_WORDS else "customer"


def currency_fields(entity: EntitySpec) -> list[FieldSpec]:
    """The fields holding the currency of the record's amounts (``currency``, ``currency_code``)."""
    return [f for f in entity.fields if effective_type(f) == "currency" and f.enum is None
            and set(_words(f.name)) <= {"currency", "code"}]


def _set_currency(record: dict[str, Any], fields: list[FieldSpec], currency: str) -> None:
    """Set the record's currency fields (:func:`currency_fields`) that hold a value to ``currency``."""
    for spec_field in fields:
        if record.get(spec_field.name) is not None:
            record[spec_field.name] = currency


def _follow_parents(state: ServiceState, spec: ServiceSpec, seed: int, keep: set[str]) -> None:
    """A record belonging to another record of the same service (a refund's payment, an expense's
    report) takes its currency, and an amount both have stays within the parent's (records of the
    ``keep`` entities, the spec's own data, are left as they are)."""
    for entity in spec.entities:
        if entity.name in keep:
            continue
        rng = random.Random(f"{seed}:{spec.id}:{entity.name}:parents")
        parents = [(f.name, parse_entity_ref(f.type or "")[1]) for f in entity.fields
                   if is_entity_ref(f.type) and parse_entity_ref(f.type or "")[0] == spec.id
                   and parse_entity_ref(f.type or "")[1] != entity.name]
        money = [f.name for f in entity.fields if effective_type(f) == "money"]
        for record_key in sorted(state.tables[entity.name]):
            record = state.tables[entity.name][record_key]
            for name, parent_entity in parents:
                parent = state.tables.get(parent_entity, {}).get(record.get(name) or "")
                if parent is None:
                    continue
                currency = next((parent[f.name] for f in currency_fields(spec.entity(parent_entity))
                                 if parent.get(f.name)), None)
                if currency is not None:
                    _set_currency(record, currency_fields(entity), currency)
                for amount in money:
                    mine, theirs = record.get(amount), parent.get(amount)
                    if isinstance(mine, (int, float)) and isinstance(theirs, (int, float)) and mine > theirs > 0:
                        record[amount] = round(theirs * rng.uniform(0.2, 1.0), 2)


def person_value(person: Person, kind: str, field_name: str = "") -> str:
    """What a person field of type ``kind`` holds about ``person``: for a name, the first or the last name
    where the field's name says which (``firstName``, ``given_name``, ``surname``), else the full name."""
    if kind == "person_name":
        part = name_part(field_name)
        if part is not None:
            return person.first_name if part == "first" else person.last_name
    return {"email": person.email, "person_name": person.full_name, "phone": person.phone,
            "company_name": person.company, "address": person.address, "city": person.city,
            "country": person.country}[kind]


def name_part(field_name: str) -> str | None:
    """``first`` or ``last`` when a name field holds one part of a name (``first_name``, ``familyName``,
    ``surname``); None for a full name."""
    named = _words(field_name)
    for word, after in zip(named, [*named[1:], ""], strict=True):
        if word in NAME_PARTS and after == "name":
            return NAME_PARTS[word]
    return NAME_PART_WORDS.get(named[-1]) if named else None  # ``surname``, not ``surname_prefix``


def _number_for(name: str, rng: random.Random) -> float:
    if "hour" in name:
        return rng.choice([0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 7.5, 8.0])
    if "weight" in name or name.endswith("_kg"):
        return round(rng.uniform(0.2, 25.0), 2)
    if "latitude" in name:
        return round(rng.uniform(-60, 70), 5)
    if "longitude" in name:
        return round(rng.uniform(-170, 170), 5)
    return round(rng.uniform(1, 1000), 2)


def interval_pairs(entity: EntitySpec) -> list[tuple[FieldSpec, FieldSpec, tuple[int, int], tuple[int, int]]]:
    """(start-like field, end-like field, gap in minutes, gap in days) of one record's dates:
    ``start_date``/``end_date``, ``check_in``/``check_out``, ``issue_date``/``due_date``, ``pickupAt``/``returnAt``..."""
    keyed = {"_".join(_words(f.name)): f for f in entity.fields if effective_type(f) in ("date", "datetime")}
    pairs = []
    for key, spec_field in keyed.items():
        for start_word, end_word, minutes, days in INTERVALS:
            partner = keyed.get(key.replace(start_word, end_word, 1)) if start_word in key else None
            if partner is not None and partner is not spec_field \
                    and effective_type(partner) == effective_type(spec_field):
                pairs.append((spec_field, partner, minutes, days))
                break
    return pairs


def _order_intervals(record: dict[str, Any], pairs: list[tuple[FieldSpec, FieldSpec, tuple[int, int], tuple[int, int]]],
                     rng: random.Random) -> None:
    """Put end-like fields a plausible gap after their start-like partner (the entity's :func:`interval_pairs`)."""
    for spec_field, partner, minutes, days in pairs:
        start = record.get(spec_field.name)
        if not isinstance(start, str) or record.get(partner.name) is None:
            continue
        if effective_type(spec_field) == "date":
            end = date.fromisoformat(start) + timedelta(days=rng.randint(*days))
            record[partner.name] = end.isoformat()
        else:
            end_moment = datetime.fromisoformat(start) + timedelta(minutes=rng.randint(*minutes))
            record[partner.name] = end_moment.isoformat().replace("+00:00", "Z")


def _near_day(day: date, spec_field: FieldSpec, rng: random.Random) -> str:
    """A date (or business-hours datetime) near ``day``: before it for done things, after for planned; a birth
    date 18 to 80 years before it."""
    names = set(_words(spec_field.name))
    low, high = (-30, 0) if names & PAST_WORDS else (1, 60) if names & FUTURE_WORDS else (-14, 30)
    if names & BIRTH_WORDS:
        low, high = -BIRTH_DAYS[1], -BIRTH_DAYS[0]
    moment = day + timedelta(days=rng.randint(low, high))
    if effective_type(spec_field) == "date":
        return moment.isoformat()
    minutes = 15 * rng.randint(BUSINESS_MINUTES[0] // 15, BUSINESS_MINUTES[1] // 15)
    return f"{moment.isoformat()}T{minutes // 60:02d}:{minutes % 60:02d}:00Z"


def amount_roles(entity: EntitySpec) -> dict[str, str]:
    """Which numeric fields play which part in a record's arithmetic, by their words.

    Roles: ``gross``, ``tax``, ``net``, ``quantity``, ``unit_price``, ``subtotal``, ``total``.
    """
    roles: dict[str, str] = {}
    for spec_field in entity.fields:
        if spec_field.json_type not in ("number", "integer") or spec_field.enum:
            continue
        names = set(_words(spec_field.name))
        if "unit" in names and names & {"price", "cost", "rate", "amount"}:
            role = "unit_price"
        else:
            role = next((r for r in ("gross", "tax", "net", "subtotal", "total", "quantity") if r in names), "")
            role = role or ("quantity" if names & {"qty", "units"} else "")
        if role and role not in roles.values():
            roles[spec_field.name] = role
    return roles


def relate_amounts(record: dict[str, Any], entity: EntitySpec, rng: random.Random) -> None:
    """Make a record's amounts add up: tax and net below gross (net = gross - tax), a total of
    quantity x unit price (or subtotal + tax), quantities of at least one."""
    _relate(record, amount_roles(entity), rng)


def _relate(record: dict[str, Any], roles: dict[str, str], rng: random.Random) -> None:
    """:func:`relate_amounts` with the entity's :func:`amount_roles` worked out."""
    by_role = {role: name for name, role in roles.items()
               if isinstance(record.get(name), (int, float)) and not isinstance(record.get(name), bool)}
    if "quantity" in by_role and record[by_role["quantity"]] < 1:
        record[by_role["quantity"]] = rng.randint(1, 20)
    if "gross" in by_role:
        gross = record[by_role["gross"]] = abs(record[by_role["gross"]]) or 100.0
        tax = round(gross * rng.uniform(0.12, 0.35), 2)
        if "tax" in by_role:
            record[by_role["tax"]] = tax
        if "net" in by_role:
            record[by_role["net"]] = round(gross - (tax if "tax" in by_role else gross * 0.25), 2)
    if "total" in by_role and {"quantity", "unit_price"} <= set(by_role):
        record[by_role["total"]] = round(record[by_role["quantity"]] * record[by_role["unit_price"]], 2)
    elif "total" in by_role and {"subtotal", "tax"} <= set(by_role) and "gross" not in by_role:
        record[by_role["total"]] = round(record[by_role["subtotal"]] + record[by_role["tax"]], 2)


def draw_record(spec: ServiceSpec, entity: EntitySpec, population: Population, rng: random.Random, *,
                anchor: int, index: int, rows: int = DEFAULT_ROWS, near: date | None = None) -> dict[str, Any]:
    """One new record of ``entity`` as the seeder would make it, every field filled.

    Its people are those of row ``anchor`` of the world (so they exist there); identifier-like
    texts use ``index`` (a row number past the seeded ones keeps them unique); with ``near``,
    dates lie around that day. Used for the values a task's user asks for.
    """
    filled = entity.model_copy(update={"fields": [f.model_copy(update={"required": True}) for f in entity.fields]})
    maker = _RowMaker(spec, filled, population, rows, _entity_catalog((spec,)))
    return maker.make(index, rng, anchor=anchor, near=near)


def _entity_catalog(specs: Iterable[ServiceSpec]) -> dict[str, EntitySpec]:
    """Entity reference type → entity, for the given specs over the built-in library."""
    catalog = dict(_builtin_catalog())
    for spec in specs:
        catalog.update({entity_ref(spec.id, e.name): e for e in spec.entities})
    return catalog


@lru_cache(maxsize=1)
def _builtin_catalog() -> tuple[tuple[str, EntitySpec], ...]:
    return tuple((entity_ref(spec.id, e.name), e) for spec in builtin_specs() for e in spec.entities)
