"""Bring your own initial state: a spec's data file becomes its service's seed world.

A spec file ``shop.json`` may come with data beside it:

* ``shop.data.json`` — one document of collections, each a list of records or an object of
  records keyed by id: ``{"orders": {"#W1": {...}}, "users": [{"user_id": "u1", ...}]}``;
* ``shop.data.jsonl`` — one ``{"collection": name, "record": {...}}`` per line;
* ``shop.data/`` — one file per collection, named after it: ``orders.csv``, ``users.parquet``,
  ``items.jsonl`` (one record per line), ``notes.json`` (a list or an object of records).

Each collection maps to an entity by name (``orders`` → ``Order``) or else by schema (the entity
whose fields the records cover best, at least half of them); one that maps to none becomes a new
entity. Fields the records hold and the entity lacks are added (optional, typed from the values:
the JSON type most of them have, and a shared type where names and values say so; a record whose
value has another type is quarantined, never the field). A record's id is its key in an
object of records, else its ``id``, else its ``<entity>_id``; otherwise one is generated. Every
record is validated against the typed state (record model, enums, shared types, references into
the service's other collections); one that does not fit is quarantined with the reason and the
rest are kept. The kept records are stored on the spec (``ServiceSpec.seed_records``) and are the
seed state of every world the service is in; entities without data are generated as usual.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import polars as pl

from compoworld_assets.engine.runtime.records import record_problem
from compoworld_assets.engine.specs.importers.schema import entity_fields
from compoworld_assets.engine.specs.infer import context_words, entity_name, snake_name
from compoworld_assets.engine.specs.model import ENTITY_NAME_RE, EntitySpec, QuarantinedSpec, ServiceSpec

KIND = "seed_data"
DATA_SUFFIXES = (".json", ".jsonl", ".csv", ".parquet")
MAX_RECORDS = 100_000
_JSON_TYPES = {bool: "boolean", int: "integer", float: "number", str: "string", list: "array", dict: "object"}
_SPECIFICITY = ("integer", "number", "boolean", "string", "array", "object")


class SeedDataError(ValueError):
    """A data file that cannot be read as collections of records."""


def companion_data(spec_path: Path) -> Path | None:
    """The data file or folder beside ``spec_path`` (``<stem>.data.<suffix>`` or ``<stem>.data/``)."""
    folder = spec_path.with_name(f"{spec_path.stem}.data")
    if folder.is_dir():
        return folder
    return next((p for s in DATA_SUFFIXES if (p := spec_path.with_name(f"{spec_path.stem}.data{s}")).is_file()),
                None)


def is_data_path(path: Path) -> bool:
    """Whether ``path`` is seed data (not a spec): ``*.data.<suffix>`` or anything in a ``*.data/`` folder."""
    return path.stem.endswith(".data") or any(part.endswith(".data") for part in path.parent.parts)


Collections = dict[str, "list[tuple[str | None, Any]] | SeedDataError"]


def read_collections(path: Path) -> Collections:
    """Collection name → its (id from the document or None, record) pairs, or the error reading it.

    Raises :class:`SeedDataError` when the file or folder as a whole cannot be read.
    """
    if path.is_dir():
        collections: Collections = {}
        for file in sorted(p for p in path.iterdir() if p.suffix in DATA_SUFFIXES):
            try:
                collections[file.stem] = _records_of(_read_file(file), file.stem)
            except SeedDataError as error:
                collections[file.stem] = error
        return collections
    data = _read_file(path)
    if path.suffix == ".jsonl":
        grouped: dict[str, list[Any]] = {}
        for line in data:
            if not isinstance(line, dict) or not isinstance(line.get("collection"), str):
                raise SeedDataError('each line must be {"collection": <name>, "record": {...}}')
            grouped.setdefault(line["collection"], []).append(line.get("record"))
        data = grouped
    if not isinstance(data, dict):
        raise SeedDataError("the document must be an object of collections")
    collections = {}
    for name, records in data.items():
        try:
            collections[str(name)] = _records_of(records, str(name))
        except SeedDataError as error:
            collections[str(name)] = error
    return collections


def _read_file(path: Path) -> Any:
    try:
        if path.suffix == ".csv":
            return pl.read_csv(path, infer_schema_length=10_000).to_dicts()
        if path.suffix == ".parquet":
            return pl.read_parquet(path).to_dicts()
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".jsonl":
            return [json.loads(line) for line in text.splitlines() if line.strip()]
        return json.loads(text)
    except (OSError, UnicodeDecodeError, ValueError, pl.exceptions.PolarsError) as error:
        raise SeedDataError(f"unreadable data file {path.name}: {type(error).__name__}: {str(error)[:300]}") from error


def _records_of(value: Any, collection: str) -> list[tuple[str | None, dict[str, Any]]]:
    if isinstance(value, dict):
        pairs = [(str(key), record) for key, record in value.items()]
    elif isinstance(value, list):
        pairs = [(None, record) for record in value]
    else:
        raise SeedDataError(f"collection {collection!r} must be a list or an object of records")
    if len(pairs) > MAX_RECORDS:
        raise SeedDataError(f"collection {collection!r} has {len(pairs)} records (the limit is {MAX_RECORDS})")
    return pairs


def attach_seed_data(spec: ServiceSpec, path: Path, location: str) -> tuple[ServiceSpec, list[QuarantinedSpec]]:
    """``spec`` with the records of the data at ``path`` as its seed world, and the rejected records."""
    try:
        collections = read_collections(path)
    except SeedDataError as error:
        return spec, [QuarantinedSpec.from_error(KIND, location, error, "")]
    quarantined = [QuarantinedSpec.from_error(KIND, f"{location}#{name}", error, "")
                   for name, error in sorted(collections.items()) if isinstance(error, SeedDataError)]
    readable = {name: records for name, records in sorted(collections.items()) if not isinstance(records, SeedDataError)}
    entities = {e.name: e.model_copy(deep=True) for e in spec.entities}
    mapped = {name: _entity_for(name, records, entities, spec.id) for name, records in readable.items()}
    rows: dict[str, dict[str, dict[str, Any]]] = {}
    for collection, records in readable.items():
        entity = mapped[collection]
        if entity is None:
            quarantined.append(QuarantinedSpec.from_error(
                KIND, f"{location}#{collection}", f"collection {collection!r} has no records to infer an entity from",
                ""))
            continue
        objects = [(key, record) for key, record in records if isinstance(record, dict)]
        quarantined.extend(
            QuarantinedSpec.from_error(KIND, f"{location}#{collection}/{key or number}", "a record must be an object",
                                       record)
            for number, (key, record) in enumerate(records, start=1) if not isinstance(record, dict))
        _add_fields(entities[entity], objects, spec.id, entities)
        rows.setdefault(entity, {}).update(_with_ids(entities[entity], objects))
    candidate = spec.model_copy(update={"entities": list(entities.values())})
    try:
        candidate = ServiceSpec.model_validate(candidate.model_dump())
    except ValueError as error:
        return spec, [QuarantinedSpec.from_error(KIND, location, f"the data does not fit the spec: {error}", "")]
    kept: dict[str, dict[str, dict[str, Any]]] = {}
    for entity, records in sorted(rows.items()):
        fields = [f.name for f in candidate.entity(entity).fields]
        kept[entity] = {rid: {"id": rid, **{name: record.get(name) for name in fields}}
                        for rid, record in sorted(records.items())}
    for entity, records in sorted(kept.items()):
        for rid in sorted(records):
            problem = record_problem(candidate, entity, records[rid], kept)
            if problem is not None:
                quarantined.append(QuarantinedSpec.from_error(KIND, f"{location}#{entity}/{rid}", problem, records[rid]))
                del records[rid]
    return candidate.model_copy(update={"seed_records": kept}), quarantined


def _entity_for(collection: str, records: list[tuple[str | None, dict[str, Any]]],
                entities: dict[str, EntitySpec], service_id: str) -> str | None:
    """The entity a collection holds records of: by name, else by the fields its records cover."""
    named = entity_name(collection)
    if named in entities:
        return named
    keys = Counter(k for _, record in records if isinstance(record, dict) for k in record)
    best, best_share = None, 0.5
    for entity in sorted(entities.values(), key=lambda e: e.name):
        if not entity.fields:
            continue
        share = sum(1 for f in entity.fields if f.name in keys) / len(entity.fields)
        if share >= best_share and (best is None or share > best_share):
            best, best_share = entity.name, share
    if best is not None:
        return best
    if not named or not ENTITY_NAME_RE.match(named) or not any(isinstance(r, dict) for _, r in records):
        return None
    entities[named] = EntitySpec(name=named, id_prefix=snake_name(named)[:16], fields=[],
                                 description=f"{named} records from {service_id}'s seed data.")
    return named


def _add_fields(entity: EntitySpec, records: list[tuple[str | None, dict[str, Any]]], service_id: str,
                entities: dict[str, EntitySpec]) -> None:
    """Optional fields for the keys the records hold and the entity lacks, typed from their values."""
    id_keys = {"id", f"{snake_name(entity.name)}_id"}
    values: dict[str, list[Any]] = {}
    for _, record in records:
        if isinstance(record, dict):
            for key, value in record.items():
                if key not in id_keys and entity.field(key) is None and value is not None:
                    values.setdefault(key, []).append(value)
    schemas = {}
    for key in sorted(values):
        kind = _column_type(values[key])
        if kind is not None:
            schemas[key] = {"type": kind, "examples": [v for v in values[key] if _JSON_TYPES.get(type(v)) == kind
                                                       or (kind == "number" and type(v) is int)][:5]}
    context = context_words(service_id, entity.name)
    entity.fields.extend(entity_fields(schemas, (), service_id, set(entities), context))


def _column_type(values: list[Any]) -> str | None:
    """The JSON type most of a new field's values have (integers count as numbers where some are not); on a tie the
    more specific type (a number, a boolean, before text, before a list or an object). The records whose value is
    of another type are then quarantined by the record check, one by one, and the field is kept for the others."""
    counts = Counter(_JSON_TYPES.get(type(v)) for v in values)
    if counts["integer"] and counts["number"]:
        counts["number"] += counts.pop("integer")
    counts.pop(None, None)
    if not counts:
        return None
    return max(counts, key=lambda kind: (counts[kind], -_SPECIFICITY.index(kind)))


def _with_ids(entity: EntitySpec, records: list[tuple[str | None, dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    own_key = f"{snake_name(entity.name)}_id"
    found: dict[str, dict[str, Any]] = {}
    for number, (key, record) in enumerate(records, start=1):
        record_id = key or record.get("id") or record.get(own_key) or f"{entity.id_prefix}_{number:04d}"
        found[str(record_id)] = dict(record)
    return found
