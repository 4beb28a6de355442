"""A deterministic simulator: type-valid results that reuse values from the arguments and state,
and the state change the tool's spec says the call makes.

The change (:func:`spec_change`) follows the spec's semantics, as generated code would: a
``create`` tool stores a record of its entity from the field-named arguments and ``sets``; an
``update`` tool (a derived status transition included) writes them onto the record its key names,
refusing what the transition refuses; a ``delete`` tool removes it. These are tools whose code
failed verification or that are marked not implementable. An ``action`` tool, whose spec says
nothing about its effect, changes nothing here (the LLM backend proposes changes for those).
The result is filled from the state *after* the change, so it agrees with what a read then sees.

The result is seeded from the world-model key, so the same call in the same state always
gives the same answer. Where a returned field's shared type (or name) matches an argument,
the argument is echoed; otherwise, where the state holds values of that type (emails in
records, ids of the referenced entity), one is reused. Objects that carry the id of an
existing record are filled from that record, and arrays of records list existing ones.
``allOf`` parts are merged, and strings with a ``pattern`` get a matching value (``values.pattern_value``).
"""

from __future__ import annotations

import random
from typing import Any

from compoworld_assets.engine.envelope import CONFLICT, NOT_FOUND, error, ok
from compoworld_assets.engine.runtime.state import ServiceState
from compoworld_assets.engine.specs.model import Effect, FieldSpec, ServiceSpec, ToolSpec
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
        found: dict[str, set[Any]] = {}
        for entity in spec.entities:
            table = state.tables.get(entity.name, {})
            ref = entity_ref(spec.id, entity.name)
            self.tables[ref] = table
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

    def record_table(self, schema: dict[str, Any]) -> tuple[str, dict[str, dict[str, Any]]] | None:
        """The id property and the non-empty table of an object schema that describes a stored record."""
        for prop, sub in (schema.get("properties") or {}).items():
            table = self.tables.get(sub.get(TYPE_KEY)) if isinstance(sub, dict) else None
            if table:
                return prop, table
        return None


class _Filler:
    def __init__(self, pools: ValuePools, rng: random.Random) -> None:
        self.pools = pools
        self.rng = rng

    def fill(self, schema: Any, name: str | None, depth: int) -> Any:
        if not isinstance(schema, dict) or depth > MAX_DEPTH:
            return schema_value(schema, self.rng, depth)
        for key in ("anyOf", "oneOf"):
            options = [s for s in schema.get(key) or [] if isinstance(s, dict) and s.get("type") != "null"]
            if options:
                return self.fill(options[0], name, depth)
        if isinstance(schema.get("allOf"), list):
            return self.fill(merge_all_of(schema), name, depth)
        reused = self.pools.pick(schema.get(TYPE_KEY), name, self.rng)
        if reused is not _MISSING and is_valid(schema, reused):
            return reused
        json_type = schema.get("type")
        if json_type == "object" and schema.get("properties"):
            return self.fill_object(schema, depth, record=None)
        if json_type == "array" and isinstance(schema.get("items"), dict):
            return self.fill_array(schema, depth)
        return schema_value(schema, self.rng, depth)

    def fill_object(
        self, schema: dict[str, Any], depth: int, record: dict[str, Any] | None
    ) -> dict[str, Any]:
        props = schema["properties"]
        required = set(schema.get("required") or props)
        value = {k: self.fill(sub, k, depth + 1) for k, sub in props.items() if k in required}
        for undeclared in sorted(required - set(props)):
            value[undeclared] = phrase(self.rng, 2)
        found = self.pools.record_table(schema)
        if found is None:
            return value
        id_prop, table = found
        if record is None and isinstance(value.get(id_prop), str):
            record = table.get(value[id_prop])
        if record is not None:
            value[id_prop] = record["id"]
            for prop in props:
                if prop != id_prop and prop in record and is_valid(props[prop], record[prop]):
                    value[prop] = record[prop]
        return value

    def fill_array(self, schema: dict[str, Any], depth: int) -> list[Any]:
        items = schema["items"]
        count = max(int(schema.get("minItems", 0)), 1)
        found = self.pools.record_table(items) if items.get("type") == "object" else None
        if found is None:
            return [self.fill(items, None, depth + 1) for _ in range(count)]
        table = found[1]
        ids = self.rng.sample(sorted(table), min(len(table), max(count, MAX_LISTED_RECORDS)))
        listed = [self.fill_object(items, depth + 1, table[record_id]) for record_id in ids]
        return listed + [self.fill(items, None, depth + 1) for _ in range(count - len(listed))]


class OfflineWorldModel:
    """Deterministic, state-consistent simulation without any model calls."""

    model_id = "offline/2"

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
        pools = ValuePools(spec, tool, args, after, made)
        data = _Filler(pools, random.Random(seed)).fill(tool.returns, None, 0)
        if not is_valid(tool.returns, data):
            data = schema_value(tool.returns, random.Random(seed))
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
