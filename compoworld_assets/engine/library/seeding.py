"""Seeded, realistic initial state for any service spec, built-in or imported.

All services of a world share one :class:`Population`. Within a record, fields that describe
the same person (``payer_email``/``payer_name``, or ``email``/``full_name``/``phone``) form a
*slot* filled from one person; the record's first slot is the row's *anchor*, person number
``row`` of the pool, so row 3 of the CRM contacts, of the mail messages and of the invoices
all concern the same customer. Ids are ``<id_prefix>_<row:04d>`` and every table gets the same
number of rows, so a reference into any entity (same service or another one seeded for the
same world) can name an id that exists without looking at the other service's state.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from functools import lru_cache
from typing import Any

from compoworld_assets.engine import values
from compoworld_assets.engine.library import builtin_specs
from compoworld_assets.engine.library.phrases import text_for
from compoworld_assets.engine.library.population import Person, Population
from compoworld_assets.engine.runtime.state import ServiceState, WorldState
from compoworld_assets.engine.specs.model import EntitySpec, FieldSpec, ServiceSpec
from compoworld_assets.engine.types import SHARED_TYPES, entity_ref, is_entity_ref, parse_entity_ref

__all__ = ["DEFAULT_ROWS", "Person", "Population", "seed_service_state", "seed_world"]

DEFAULT_ROWS = 8
OPTIONAL_EMPTY_RATE = 0.2
PERSON_TYPES = frozenset({"email", "person_name", "phone", "company_name", "address", "city", "country"})
LOCATION_TYPES = frozenset({"address", "city", "country"})
TYPE_WORDS = frozenset({"email", "name", "full", "first", "last", "phone", "mobile", "company", "address",
                        "city", "country"})
STAFF_WORDS = frozenset({"owner", "assignee", "author", "organizer", "employee", "interviewer", "hiring",
                         "manager", "approver", "requester", "submitter", "created", "booked", "head",
                         "sender", "assigned", "agent", "member", "traveller"})
STAFF_ENTITY_WORDS = frozenset({"employee", "user", "staff", "agent", "member", "payslip"})
UNTYPED_HINTS = {"email": "email", "phone": "phone", "url": "url", "website": "url", "city": "city",
                 "country": "country", "address": "address", "path": "file_path", "currency": "currency"}
# An end-like field follows its start-like partner by a gap in minutes (datetimes) or days (dates).
INTERVALS = [("check_in", "check_out", (1440, 8640), (1, 6)), ("departure", "arrival", (60, 720), (0, 1)),
             ("pickup", "return", (1440, 10080), (1, 7)), ("issue", "due", (20160, 43200), (14, 30)),
             ("start", "end", (30, 240), (1, 14))]
MONEY_RANGES = {"salary": (42_000, 165_000), "gross": (2_500, 12_000), "budget": (2_000, 80_000),
                "rate": (40, 420), "price": (5, 900), "cost": (10, 3_000), "balance": (-20_000, 250_000)}
INTEGER_RANGES = {"quantity": (1, 20), "seats": (5, 200), "capacity": (2, 30), "score": (0, 10),
                  "rating": (1, 5), "size_bytes": (2_048, 8_000_000), "reorder_point": (5, 50), "days": (1,
                             14)}


def seed_service_state(spec: ServiceSpec, population: Population, seed: int,
                       rows_per_entity: int = DEFAULT_ROWS,
                       peers: Iterable[ServiceSpec] = ()) -> ServiceState:
    """Fill every entity table of ``spec`` with ``rows_per_entity`` valid, connected rows.

    ``peers`` are the other services of the world; references into them (or into the
    built-in library) use their id prefixes.
    """
    if rows_per_entity < 0:
        raise ValueError("rows_per_entity must be >= 0")
    catalog = _entity_catalog((spec, *peers))
    state = ServiceState.empty(spec)
    for entity in spec.entities:
        rng = random.Random(f"{seed}:{spec.id}:{entity.name}")
        row_maker = _RowMaker(spec, entity, population, rows_per_entity, catalog)
        table = state.tables[entity.name]
        for index in range(1, rows_per_entity + 1):
            record = row_maker.make(index, rng)
            table[record["id"]] = record
        state.counters[entity.name] = rows_per_entity
    return state


def seed_world(specs: Iterable[ServiceSpec], seed: int, rows_per_entity: int = DEFAULT_ROWS,
               population: Population | None = None) -> WorldState:
    """Seed every service of one world from one population (generated from ``seed`` if not given)."""
    specs = list(specs)
    population = population or Population.generate(seed)
    return WorldState(services={
        spec.id: seed_service_state(spec, population, seed, rows_per_entity, peers=specs) for spec in specs
    })


def record_id(id_prefix: str, index: int) -> str:
    return f"{id_prefix}_{index:04d}"


@dataclass(frozen=True)
class _Cast:
    """Who an entity's records are about: each person field's slot and the anchor slot's pool."""

    slots: dict[str, str | None]
    primary: str
    primary_is_staff: bool | None

    @classmethod
    def of(cls, entity: EntitySpec) -> _Cast:
        slots = {f.name: _slot(f) for f in entity.fields if _person_type(f)}
        named = [slot for slot in slots.values() if slot is not None]
        primary = named[0] if named else ""
        return cls(slots, primary, _is_staff(primary, entity, primary) if slots else None)


class _RowMaker:
    """Makes the rows of one entity; one instance per table."""

    def __init__(self, spec: ServiceSpec, entity: EntitySpec, population: Population, rows: int,
                 catalog: dict[str, EntitySpec]) -> None:
        self.spec = spec
        self.entity = entity
        self.population = population
        self.rows = rows
        self.catalog = catalog
        self.cast = _Cast.of(entity)

    def make(self, index: int, rng: random.Random) -> dict[str, Any]:
        people: dict[str, Person] = {}
        currency = rng.choice(values.CURRENCIES)
        record: dict[str, Any] = {"id": record_id(self.entity.id_prefix, index)}
        for spec_field in self.entity.fields:
            if not spec_field.required and rng.random() < OPTIONAL_EMPTY_RATE:
                record[spec_field.name] = None
                continue
            record[spec_field.name] = self._value(spec_field, index, rng, people, currency)
        _order_intervals(record, self.entity, rng)
        return record

    def _value(self, spec_field: FieldSpec, index: int, rng: random.Random, people: dict[str, Person],
               currency: str) -> Any:
        if spec_field.enum:
            return rng.choice(spec_field.enum)
        kind = _effective_type(spec_field)
        if is_entity_ref(kind):
            return self._reference(kind, index, rng, spec_field.required)
        if kind in PERSON_TYPES:
            slot = self.cast.slots.get(spec_field.name)
            person = self._person(self.cast.primary if slot is None else slot, index, rng, people)
            return _person_value(person, kind)
        if kind == "currency":
            return currency
        if kind is None and spec_field.name == "username":
            return self._person(self.cast.primary, index, rng, people).email.split("@")[0]
        if kind == "url" and {"website", "homepage"} & set(_words(spec_field.name)):
            person = self._person(self.cast.primary, index, rng, people)
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
        target_cast = _Cast.of(target) if target else None
        if target_cast and target_cast.primary_is_staff is not None \
                and target_cast.primary_is_staff == self.cast.primary_is_staff:
            return record_id(prefix, index)
        return record_id(prefix, rng.randint(1, self.rows))

    def _person(self, slot: str, index: int, rng: random.Random, people: dict[str, Person]) -> Person:
        if slot in people:
            return people[slot]
        staff = _is_staff(slot, self.entity, self.cast.primary)
        pool = self.population.staff if staff else self.population.customers
        taken = {p.email for p in people.values()}
        if slot == self.cast.primary:
            person = pool[(index - 1) % len(pool)]
        else:
            free = [p for p in pool if p.email not in taken] or pool
            person = rng.choice(free)
        people[slot] = person
        return person

    def _typed(self, kind: str, name: str, index: int, rng: random.Random) -> Any:
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


def _effective_type(spec_field: FieldSpec) -> str | None:
    """The field's shared type if its JSON type fits; for untyped strings, one hinted by the name."""
    kind = spec_field.type
    if kind is not None:
        if is_entity_ref(kind):
            return kind if spec_field.json_type == "string" else None
        return kind if SHARED_TYPES[kind].json_type == spec_field.json_type else None
    words = _words(spec_field.name)
    if spec_field.json_type == "string":
        if words and words[-1] == "at":
            return "datetime"
        if words and words[-1] in ("date", "on"):
            return "date"
        return next((UNTYPED_HINTS[w] for w in words if w in UNTYPED_HINTS), None)
    if spec_field.json_type == "number" and set(words) & {"amount", "price", "total", "cost", "balance"}:
        return "money"
    return None


def _person_type(spec_field: FieldSpec) -> bool:
    return spec_field.enum is None and _effective_type(spec_field) in PERSON_TYPES


def _slot(spec_field: FieldSpec) -> str | None:
    """Which person a field describes: its name without type words (``payer_email`` → ``payer``).

    Location fields named as such (``city``, ``shipping_address``) belong to the record's main
    person (None); others (``origin``, ``destination``) get a person of their own.
    """
    words = _words(spec_field.name)
    if _effective_type(spec_field) in LOCATION_TYPES and set(words) & LOCATION_TYPES:
        return None
    return "_".join(w for w in words if w not in TYPE_WORDS)


def _is_staff(slot: str, entity: EntitySpec, primary: str) -> bool:
    """Whether a slot is one of the home company's staff rather than an outside customer.

    Named roles decide (``owner``, ``assignee``...); the main person of an entity such as
    ``Employee`` or ``UserAccount`` is staff too.
    """
    if set(slot.split("_")) & STAFF_WORDS:
        return True
    return slot == primary and bool(set(_words(entity.name)) & STAFF_ENTITY_WORDS)


def _person_value(person: Person, kind: str) -> str:
    return {"email": person.email, "person_name": person.full_name, "phone": person.phone,
            "company_name": person.company, "address": person.address, "city": person.city,
            "country": person.country}[kind]


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


def _order_intervals(record: dict[str, Any], entity: EntitySpec, rng: random.Random) -> None:
    """Put end-like fields a plausible gap after their start-like partner (``start``→``end``...)."""
    for spec_field in entity.fields:
        start = record.get(spec_field.name)
        if spec_field.type not in ("date", "datetime") or not isinstance(start, str):
            continue
        for start_word, end_word, minutes, days in INTERVALS:
            if start_word not in spec_field.name:
                continue
            partner = entity.field(spec_field.name.replace(start_word, end_word))
            if partner is None or partner.type != spec_field.type or record.get(partner.name) is None:
                continue
            if spec_field.type == "date":
                end = date.fromisoformat(start) + timedelta(days=rng.randint(*days))
                record[partner.name] = end.isoformat()
            else:
                moment = datetime.fromisoformat(start)
                end_moment = moment + timedelta(minutes=rng.randint(*minutes))
                record[partner.name] = end_moment.isoformat().replace("+00:00", "Z")
            break


def _words(name: str) -> list[str]:
    """Lower-case words of a snake_case or CamelCase name."""
    spaced = "".join(f"_{c}" if c.isupper() else c for c in name)
    return [w for w in spaced.lower().split("_") if w]


def _entity_catalog(specs: Iterable[ServiceSpec]) -> dict[str, EntitySpec]:
    """Entity reference type → entity, for the given specs over the built-in library."""
    catalog = dict(_builtin_catalog())
    for spec in specs:
        catalog.update({entity_ref(spec.id, e.name): e for e in spec.entities})
    return catalog


@lru_cache(maxsize=1)
def _builtin_catalog() -> tuple[tuple[str, EntitySpec], ...]:
    return tuple((entity_ref(spec.id, e.name), e) for spec in builtin_specs() for e in spec.entities)
