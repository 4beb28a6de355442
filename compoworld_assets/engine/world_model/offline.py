"""A deterministic simulator: results built only from the arguments and the state (or a refusal saying
it cannot answer), and the state change the tool's spec says the call makes.

The change (:func:`spec_change`) follows the spec's semantics, as generated code would: a
``create`` tool stores a record of its entity from the field-named arguments and ``sets``; an
``update`` tool (a derived status transition included) writes them onto the record its key names,
refusing what the transition refuses; a ``delete`` tool removes it. These are tools whose code
failed verification or that are marked not implementable. An ``action`` tool, whose spec says
nothing about its effect, changes nothing here (the LLM backend proposes changes for those).
The result is filled from the state *after* the change, so it agrees with what a read then sees.

The result is seeded from the world-model key, so the same call in the same state always
gives the same answer, and it never makes anything up. Where a returned field's shared type (or
name) matches an argument, the argument is echoed; otherwise, where the state holds values of that
type (emails in records, ids of the referenced entity), one is reused. Objects that carry the id of an
existing record are filled from that record, and arrays of records list existing ones; where
arguments name fields of those records (``email``, ``status``) they are a look-up, and only the
records that match are answered (none: ``not_found``). ``allOf`` parts are merged. What none of
that gives (a summary, a score, a count, a translation) is *invented*: an optional field is left
out, and an answer that needs one says so with an ``unavailable`` error instead of a phrase or
number typed as a result (:class:`_Filler` says what else may be made: identifiers and timestamps
of the call itself). A call that changed the state answers with what the state holds, without the
invented fields.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from compoworld_assets.engine.envelope import CONFLICT, NOT_FOUND, UNAVAILABLE, error, ok
from compoworld_assets.engine.library.wording import words
from compoworld_assets.engine.runtime.state import ServiceState
from compoworld_assets.engine.specs.model import READ_ONLY_EFFECTS, Effect, FieldSpec, ServiceSpec, ToolSpec
from compoworld_assets.engine.types import (
    TYPE_KEY,
    entity_ref,
    is_entity_ref,
    parse_entity_ref,
    value_matches_type,
)
from compoworld_assets.engine.values import merge_all_of, phrase, schema_value
from compoworld_assets.engine.world_model.base import missing_reference, refused_transition, world_model_key
from compoworld_assets.engine.world_model.change import (
    CreatedRecord,
    DeletedRecord,
    InvalidChange,
    Simulation,
    StateChange,
    UpdatedRecord,
    apply_change,
)
from compoworld_assets.engine.world_model.schema import is_valid

MAX_DEPTH = 3
# A boolean named by one of these reports the call's own outcome (``ok``, ``authentication_status``, ``deleted``):
# true, since the call succeeded. Any other boolean of an answer (``is_disposable``) is a fact to look up.
SUCCESS_WORDS = frozenset({"ok", "success", "succeeded", "successful", "accepted", "queued", "sent", "status", "done",
                           "completed", "created", "updated", "deleted", "removed", "saved"})
MAX_LISTED_RECORDS = 3
_MISSING = object()


def _sort_key(value: Any) -> tuple[str, str]:
    return type(value).__name__, str(value)


class ValuePools:
    """The values a simulated result may reuse: arguments by name and type, state values by type."""

    def __init__(self, spec: ServiceSpec, tool: ToolSpec, args: dict[str, Any], state: ServiceState,
                 made: dict[str, str] | None = None) -> None:
        self.args = args
        self.args_by_type: dict[str, Any] = dict(made or {})
        for param, type_name in sorted(tool.input_types().items()):
            if param in args:
                self.args_by_type.setdefault(type_name, args[param])
        self.tables: dict[str, dict[str, dict[str, Any]]] = {}
        self.fields: dict[str, frozenset[str]] = {}
        found: dict[str, set[Any]] = {}
        for entity in spec.entities:
            table = state.tables.get(entity.name, {})
            ref = entity_ref(spec.id, entity.name)
            self.tables[ref] = table
            self.fields[ref] = frozenset(f.name for f in entity.fields) - {"id"}
            found.setdefault(ref, set()).update(table)
            for field in entity.fields:
                if field.type is None:
                    continue
                values = (r.get(field.name) for r in table.values())
                found.setdefault(field.type, set()).update(
                    v for v in values if isinstance(v, (str, int, float, bool))
                )
        self.state_by_type = {t: sorted(vs, key=_sort_key) for t, vs in found.items() if vs}

    def pick(self, type_name: str | None, name: str | None, rng: random.Random) -> Any:
        if name is not None and name in self.args:
            value = self.args[name]
            if type_name is None or value_matches_type(type_name, value):
                return value
        if type_name in self.args_by_type:
            return self.args_by_type[type_name]
        if type_name in self.state_by_type:
            return rng.choice(self.state_by_type[type_name])
        return _MISSING

    def filters(self, ref: str) -> dict[str, Any]:
        """The scalar arguments named like a field of entity ``ref`` (a look-up by those fields)."""
        return {name: value for name, value in sorted(self.args.items())
                if name in self.fields[ref] and isinstance(value, (str, int, float, bool))}

    def matching(self, ref: str) -> list[str] | None:
        """The ids of ``ref``'s records that agree with every :meth:`filters` argument (None: no filter)."""
        filters = self.filters(ref)
        if not filters:
            return None
        return [record_id for record_id, record in sorted(self.tables[ref].items())
                if all(_same(record.get(name), value) for name, value in filters.items())]

    def record_table(self, schema: dict[str, Any]) -> tuple[str, str] | None:
        """The id property and the entity of an object schema that describes a stored record."""
        for prop, sub in (schema.get("properties") or {}).items():
            ref = sub.get(TYPE_KEY) if isinstance(sub, dict) else None
            if ref in self.tables:
                return prop, ref
        return None


def _same(stored: Any, given: Any) -> bool:
    if isinstance(stored, str) and isinstance(given, str):
        return stored.casefold() == given.casefold()
    return stored == given


class _Filler:
    """Fills a returns schema from the pools; what no pool holds is *invented* and its path recorded.

    A value the schema alone determines (``const``, a one-value ``enum``, a ``default``) is not invented, nor,
    for a call that acts (not a read, list, search or query), is a receipt of the call itself: an identifier
    that names no stored entity, a timestamp, or a success flag. An object the schema gives no properties is
    ``{}``. An optional property that would be invented is left out, and so is the item of a list that may be
    empty. A record is the one the call names (or just made), else the one the arguments naming its fields
    look up.
    """

    def __init__(self, pools: ValuePools, rng: random.Random, receipts: bool = True) -> None:
        self.pools = pools
        self.rng = rng
        self.receipts = receipts  # whether the call acts (a read or query has no receipt of its own)
        self.invented: list[str] = []
        self.left_out: list[str] = []
        self.not_found: str | None = None

    def fill(self, schema: Any, name: str | None, depth: int, path: str = "$") -> Any:
        if not isinstance(schema, dict) or depth > MAX_DEPTH:
            return self.leaf(schema, name, depth, path)
        for key in ("anyOf", "oneOf"):
            options = [s for s in schema.get(key) or [] if isinstance(s, dict) and s.get("type") != "null"]
            if options:
                return self.fill(options[0], name, depth, path)
        if isinstance(schema.get("allOf"), list):
            return self.fill(merge_all_of(schema), name, depth, path)
        reused = self.pools.pick(schema.get(TYPE_KEY), name, self.rng)
        if reused is not _MISSING and is_valid(schema, reused):
            return reused
        json_type = schema.get("type")
        if json_type == "object" and schema.get("properties"):
            return self.fill_object(schema, depth, None, path)
        if json_type == "object" and not schema.get("required"):
            return {}
        if json_type == "array" and isinstance(schema.get("items"), dict):
            return self.fill_array(schema, depth, path)
        return self.leaf(schema, name, depth, path)

    def leaf(self, schema: Any, name: str | None, depth: int, path: str) -> Any:
        if isinstance(schema, dict):
            if "const" in schema:
                return schema["const"]
            if isinstance(schema.get("enum"), list) and len(schema["enum"]) == 1:
                return schema["enum"][0]
            if "default" in schema and is_valid(schema, schema["default"]):
                return schema["default"]
        value = schema_value(schema, self.rng, depth)
        if self.receipts and isinstance(value, bool) and name and SUCCESS_WORDS & set(words(name)):
            return True
        if not (self.receipts and _receipt(schema, name)):
            self.invented.append(path)
        return value

    def tentatively(self, fill: Callable[[], Any]) -> Any:
        """``fill()``, or ``_MISSING`` (and nothing recorded) when it invents something."""
        mark, not_found = len(self.invented), self.not_found
        value = fill()
        if len(self.invented) > mark:
            del self.invented[mark:]
            self.not_found = not_found
            return _MISSING
        return value

    def fill_object(self, schema: dict[str, Any], depth: int, record: dict[str, Any] | None,
                    path: str) -> dict[str, Any]:
        props = schema["properties"]
        required = set(schema.get("required") or ())
        value: dict[str, Any] = {}
        for key, sub in props.items():
            if key in required:
                value[key] = self.fill(sub, key, depth + 1, f"{path}.{key}")
                continue
            optional = self.tentatively(lambda sub=sub, key=key: self.fill(sub, key, depth + 1, f"{path}.{key}"))
            if optional is _MISSING:
                self.left_out.append(f"{path}.{key}")
            else:
                value[key] = optional
        for undeclared in sorted(required - set(props)):
            value[undeclared] = phrase(self.rng, 2)
            self.invented.append(f"{path}.{undeclared}")
        found = self.pools.record_table(schema)
        if found is None:
            return value
        id_prop, ref = found
        table = self.pools.tables[ref]
        named = self.pools.args_by_type.get(ref)  # a record the call names, or the one it just made
        if record is None and isinstance(named, str) and named in table:
            record = table[named]
        if record is None:
            matches = self.pools.matching(ref)
            if matches is not None and not matches:
                self.not_found = f"no {parse_entity_ref(ref)[1]} matches {self.pools.filters(ref)}"
            elif matches:
                record = table[matches[0]]
            elif isinstance(value.get(id_prop), str):
                record = table.get(value[id_prop])
        if record is not None:
            value[id_prop] = record["id"]
            for prop in props:
                if prop != id_prop and prop in record and is_valid(props[prop], record[prop]):
                    value[prop] = record[prop]
            self.invented = [p for p in self.invented if not _within(p, path, props, value, record)]
        return value

    def fill_array(self, schema: dict[str, Any], depth: int, path: str) -> list[Any]:
        items = schema["items"]
        least = int(schema.get("minItems", 0))
        found = self.pools.record_table(items) if items.get("type") == "object" else None
        if found is None:
            if least == 0:
                item = self.tentatively(lambda: self.fill(items, None, depth + 1, f"{path}[0]"))
                return [] if item is _MISSING else [item]
            return [self.fill(items, None, depth + 1, f"{path}[{i}]") for i in range(least)]
        table = self.pools.tables[found[1]]
        matches = self.pools.matching(found[1])
        if matches is None:
            ids = self.rng.sample(sorted(table), min(len(table), max(least, 1, MAX_LISTED_RECORDS)))
        else:
            ids = matches[:max(least, MAX_LISTED_RECORDS)]
        listed = [self.fill_object(items, depth + 1, table[record_id], f"{path}[{i}]")
                  for i, record_id in enumerate(ids)]
        return listed + [self.fill(items, None, depth + 1, f"{path}[{i}]") for i in range(len(listed), least)]


def _within(invented: str, path: str, props: dict[str, Any], value: dict[str, Any],
            record: dict[str, Any]) -> bool:
    """Whether an invented path lies under a property of ``value`` that the stored ``record`` filled."""
    return any(invented == f"{path}.{p}" or invented.startswith((f"{path}.{p}.", f"{path}.{p}["))
               for p in props if p in record and value.get(p) == record[p])


def _receipt(schema: Any, name: str | None) -> bool:
    """A value the call itself may make up: an identifier naming no stored entity, or a timestamp."""
    if not isinstance(schema, dict):
        return False
    type_name = schema.get(TYPE_KEY)
    if type_name in ("date", "datetime") or schema.get("format") in ("date", "date-time"):
        return True
    if is_entity_ref(type_name):
        return False
    return bool(name) and words(name)[-1:] in (["id"], ["uuid"])


class OfflineWorldModel:
    """Deterministic, state-consistent simulation without any model calls."""

    model_id = "offline/3"  # 3: answers nothing it made up (old cache entries may hold filler)

    def simulate(
        self, spec: ServiceSpec, tool: ToolSpec, args: dict[str, Any], state: ServiceState
    ) -> Simulation:
        refused = missing_reference(spec, tool, args, state) or refused_transition(spec, tool, args, state)
        if refused is not None:
            return Simulation(result=refused)
        seed = int(world_model_key(spec, tool, args, state, self.model_id)[:16], 16)
        change = spec_change(spec, tool, args, state, random.Random(seed))
        if not isinstance(change, StateChange):
            return Simulation(result=change)
        try:
            after = apply_change(spec, tool, state, change)
        except InvalidChange as problem:  # e.g. a required field the call does not give
            return Simulation(result=error(CONFLICT, f"{tool.name}: {problem}"))
        created = _created_ids(change, state, after)
        made = {entity_ref(spec.id, c.entity): after_id for c, after_id in created}
        filler = _Filler(ValuePools(spec, tool, args, after, made), random.Random(seed),
                         receipts=tool.effect not in READ_ONLY_EFFECTS)
        data = filler.fill(tool.returns, None, 0)
        if change.empty and filler.not_found:
            return Simulation(result=error(NOT_FOUND, f"{tool.name}: {filler.not_found}"))
        unknown = filler.invented or (filler.left_out if data == {} else [])
        if change.empty and unknown:  # an answer of nothing but what the caller knew is no answer either
            return Simulation(result=error(UNAVAILABLE, (
                f"{tool.name}: the offline world model cannot answer {', '.join(unknown[:3])}: "
                "no argument or stored record holds it")))
        if filler.invented:  # the change is made: answer with what the state holds
            data = _without(data, filler.invented)
        return Simulation(result=ok(data), change=_with_ids(change, created))


def spec_change(spec: ServiceSpec, tool: ToolSpec, args: dict[str, Any], state: ServiceState,
                rng: random.Random) -> StateChange | dict[str, Any]:
    """The change the tool's effect says ``args`` make (``sets`` included), or the ``not_found`` refusing it.

    A created record's required fields the call does not give get type-valid values drawn with ``rng``
    (an email field an email, an enum field one of its values).
    """
    if tool.entity is None or tool.effect not in (Effect.CREATE, Effect.UPDATE, Effect.DELETE):
        return StateChange()
    entity = spec.entity(tool.entity)
    given = {f.name: args[f.name] for f in entity.fields if f.name in args}
    sets = {name: value for name, value in tool.sets.items() if entity.field(name) is not None}
    if tool.effect == Effect.CREATE:
        record = {f.name: _drawn(spec, f, state, rng) if f.required else None for f in entity.fields}
        record |= given | sets
        return StateChange(created=[CreatedRecord(entity=entity.name, record=record)])
    key = spec.key_parameter(tool)
    record_id = args.get(key) if key else None
    record = state.tables.get(entity.name, {}).get(record_id) if isinstance(record_id, str) else None
    if record is None:
        return error(NOT_FOUND, f"{entity.name} {record_id!r} not found")
    if tool.effect == Effect.DELETE:
        return StateChange(deleted=[DeletedRecord(entity=entity.name, id=record_id)])
    fields = {name: value for name, value in (given | sets).items() if name != key}
    return StateChange(updated=[UpdatedRecord(entity=entity.name, id=record_id, fields=fields)] if fields else [])


def _drawn(spec: ServiceSpec, field: FieldSpec, state: ServiceState, rng: random.Random) -> Any:
    """A value for a required field a create does not give: an existing record for a reference."""
    if is_entity_ref(field.type):
        service, target = parse_entity_ref(field.type or "")
        ids = sorted(state.tables.get(target, {})) if service == spec.id else []
        if ids:
            return rng.choice(ids)
    return schema_value(field.json_schema(), rng)


def _without(data: Any, paths: list[str]) -> Any:
    """``data`` with the values at ``paths`` (``$.a.b``, ``$.a[0]``) left out (None for the whole)."""
    if "$" in paths:
        return None
    dropped = set(paths)

    def strip(value: Any, path: str) -> Any:
        if isinstance(value, dict):
            return {k: strip(v, f"{path}.{k}") for k, v in value.items() if f"{path}.{k}" not in dropped}
        if isinstance(value, list):
            return [strip(v, f"{path}[{i}]") for i, v in enumerate(value) if f"{path}[{i}]" not in dropped]
        return value

    return strip(data, "$")


def _created_ids(change: StateChange, before: ServiceState, after: ServiceState) -> list[tuple[CreatedRecord, str]]:
    """(created record, the id it got) pairs."""
    pairs = []
    for created in change.created:
        new = sorted(set(after.tables.get(created.entity, {})) - set(before.tables.get(created.entity, {})))
        taken = {i for _, i in pairs}
        pairs.append((created, next((i for i in new if i not in taken), "")))
    return pairs


def _with_ids(change: StateChange, created: list[tuple[CreatedRecord, str]]) -> StateChange:
    """The change with the ids its created records got, so that applying it again gives the same state."""
    created = [CreatedRecord(entity=c.entity, record={**c.record, "id": i}) for c, i in created]
    return change.model_copy(update={"created": created})
