"""Effect checks for one successful valid call: does the state change the way the tool's effect says?

Each check returns a problem description or None. Companion tools of the same entity (the
read, list and search tools) are called on the post-call state when their own code verified.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from compoworld_assets.engine import envelope
from compoworld_assets.engine.runtime.state import ServiceState, diff_service, record_model
from compoworld_assets.engine.specs.model import Effect, ServiceSpec, ToolSpec
from compoworld_assets.engine.synthesis.offline import identifying_parameter

LISTING_LIMIT = 1000

Call = Callable[[str, dict[str, Any]], dict[str, Any]]


@dataclass(frozen=True)
class EffectContext:
    spec: ServiceSpec
    tool: ToolSpec
    args: dict[str, Any]
    data: Any
    before: ServiceState
    after: ServiceState
    call: Call
    trusted: set[str]

    @property
    def entity(self) -> str:
        return self.tool.entity or ""

    def field_arguments(self) -> dict[str, Any]:
        """Arguments named after fields of the tool's entity (the key parameter excluded)."""
        entity = self.spec.entity(self.entity)
        key = identifying_parameter(self.spec, self.tool)
        return {
            name: value for name, value in self.args.items() if entity.field(name) is not None and name != key
        }

    def companions(self, effect: Effect) -> list[ToolSpec]:
        """Verified tools of the same entity with ``effect``."""
        return [
            t
            for t in sorted(self.spec.tools, key=lambda t: t.name)
            if t.effect == effect
            and t.entity == self.entity
            and t.name in self.trusted
            and t.name != self.tool.name
        ]


def check_effect(ctx: EffectContext) -> str | None:
    match ctx.tool.effect:
        case Effect.CREATE:
            return _check_create(ctx)
        case Effect.UPDATE:
            return _check_update(ctx)
        case Effect.DELETE:
            return _check_delete(ctx)
        case Effect.READ:
            return _unchanged(ctx) or _check_read_data(ctx)
        case Effect.LIST | Effect.SEARCH:
            return _unchanged(ctx) or _check_items(ctx)
    return None


def _unchanged(ctx: EffectContext) -> str | None:
    if not ctx.after.same_content(ctx.before):
        return f"a {ctx.tool.effect} tool changed the state: {_changes(ctx)}"
    return None


def _changes(ctx: EffectContext) -> list[str]:
    return [
        f"{c.kind} {c.entity}/{c.id}{list(c.fields) if c.fields else ''}"
        for c in diff_service(ctx.before.tables, ctx.after.tables, ctx.spec.id)
    ]


def _check_read_data(ctx: EffectContext) -> str | None:
    key = ctx.spec.key_parameter(ctx.tool)
    if isinstance(ctx.data, dict) and "id" in ctx.data and ctx.data["id"] != ctx.args.get(key):
        return f"read returned record {ctx.data['id']!r} for {ctx.args.get(key)!r}"
    return None


def _check_items(ctx: EffectContext) -> str | None:
    items = _items(ctx.data)
    if items is None:
        return "the result holds no list of items"
    limit = ctx.args.get("limit") if ctx.spec.entity(ctx.entity).field("limit") is None else None
    if isinstance(limit, int) and len(items) > limit:
        return f"returned {len(items)} items with limit {limit}"
    for name, value in ctx.field_arguments().items():
        if any(item.get(name) != value for item in items):
            return f"an item does not match the filter {name}={value!r}"
    query = ctx.args.get("query") if ctx.tool.effect == Effect.SEARCH else None
    if isinstance(query, str):
        needle = query.lower()
        if any(not any(isinstance(v, str) and needle in v.lower() for v in item.values()) for item in items):
            return f"an item does not contain the query {query!r}"
    return None


def _items(data: Any) -> list[dict[str, Any]] | None:
    items = data.get("items") if isinstance(data, dict) else data
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        return None
    return items


def _check_create(ctx: EffectContext) -> str | None:
    changes = diff_service(ctx.before.tables, ctx.after.tables, ctx.spec.id)
    added = [c for c in changes if c.kind == "added" and c.entity == ctx.entity]
    if len(changes) != 1 or len(added) != 1:
        return f"expected one new {ctx.entity} record, got changes {_changes(ctx)}"
    new_id = added[0].id
    record = ctx.after.tables[ctx.entity][new_id]
    problem = _stored_values(ctx, record) or _valid_record(ctx, record)
    if problem:
        return problem
    if isinstance(ctx.data, dict) and "id" in ctx.data and ctx.data["id"] != new_id:
        return f"returned id {ctx.data['id']!r} but stored {new_id!r}"
    return _found_by_companions(ctx, new_id, record)


def _stored_values(ctx: EffectContext, record: dict[str, Any]) -> str | None:
    expected = {**ctx.field_arguments(), **ctx.tool.sets}
    for name, value in expected.items():
        if record.get(name) != value:
            return f"stored {name}={record.get(name)!r}, expected {value!r}"
    return None


def _valid_record(ctx: EffectContext, record: dict[str, Any]) -> str | None:
    entity = ctx.spec.entity(ctx.entity)
    try:
        record_model(ctx.spec.id, entity.model_dump_json()).model_validate(record)
    except ValueError as exc:
        return f"stored record does not fit {entity.name}: {str(exc)[:300]}"
    return None


def _found_by_companions(ctx: EffectContext, new_id: str, record: dict[str, Any]) -> str | None:
    for reader in ctx.companions(Effect.READ):
        key = ctx.spec.key_parameter(reader)
        if set(reader.required_parameters()) - {key}:
            continue
        result = ctx.call(reader.name, {key: new_id})
        if (
            not result["success"]
            or not isinstance(result["data"], dict)
            or result["data"].get("id") != new_id
        ):
            return f"{reader.name} did not return the new record {new_id!r}"
    query = _query_for(record)
    for lister in ctx.companions(Effect.LIST) + ctx.companions(Effect.SEARCH):
        args = {"query": query} if lister.effect == Effect.SEARCH else {}
        if "limit" in lister.parameter_properties():
            args["limit"] = lister.parameter_properties()["limit"].get("maximum", LISTING_LIMIT)
        if set(lister.required_parameters()) - set(args) or (
            lister.effect == Effect.SEARCH and query is None
        ):
            continue
        items = _items(ctx.call(lister.name, args).get("data"))
        if items is None or new_id not in {i.get("id") for i in items}:
            return f"{lister.name}({args}) did not find the new record {new_id!r}"
    return None


def _query_for(record: dict[str, Any]) -> str | None:
    for name in sorted(record):
        value = record[name]
        if name != "id" and isinstance(value, str) and value.split():
            return value.split()[0]
    return None


def _check_update(ctx: EffectContext) -> str | None:
    key = ctx.spec.key_parameter(ctx.tool)
    record_id = ctx.args.get(key)
    allowed = set(ctx.field_arguments()) | set(ctx.tool.sets)
    for change in diff_service(ctx.before.tables, ctx.after.tables, ctx.spec.id):
        if change.kind != "changed" or change.entity != ctx.entity or change.id != record_id:
            return f"update touched other records: {_changes(ctx)}"
        extra = sorted(set(change.fields) - allowed)
        if extra:
            return f"update changed fields it was not asked to: {extra}"
    record = ctx.after.tables.get(ctx.entity, {}).get(record_id)
    if record is None:
        return f"the updated record {record_id!r} is gone"
    problem = _stored_values(ctx, record) or _valid_record(ctx, record)
    if problem:
        return problem
    if isinstance(ctx.data, dict) and "id" in ctx.data and ctx.data["id"] != record_id:
        return f"returned record {ctx.data['id']!r} for {record_id!r}"
    return None


def _check_delete(ctx: EffectContext) -> str | None:
    key = ctx.spec.key_parameter(ctx.tool)
    record_id = ctx.args.get(key)
    changes = diff_service(ctx.before.tables, ctx.after.tables, ctx.spec.id)
    if [(c.kind, c.entity, c.id) for c in changes] != [("removed", ctx.entity, record_id)]:
        return f"expected only {ctx.entity}/{record_id} removed, got {_changes(ctx)}"
    if isinstance(ctx.data, dict) and "deleted" in ctx.data and ctx.data["deleted"] != record_id:
        return f"reported {ctx.data['deleted']!r} deleted instead of {record_id!r}"
    for reader in ctx.companions(Effect.READ):
        reader_key = ctx.spec.key_parameter(reader)
        if set(reader.required_parameters()) - {reader_key}:
            continue
        result = ctx.call(reader.name, {reader_key: record_id})
        if result["success"] or result["error"]["code"] != envelope.NOT_FOUND:
            return f"{reader.name} after delete gave {result.get('error') or 'success'} instead of not_found"
    return None
