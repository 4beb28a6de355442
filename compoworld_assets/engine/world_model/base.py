"""The world-model interface, its cache key and the state checks every backend shares."""

from __future__ import annotations

from typing import Any, Protocol

from compoworld_assets.engine.canonical import content_hash
from compoworld_assets.engine.envelope import CONFLICT, NOT_FOUND, error
from compoworld_assets.engine.runtime.state import ServiceState, state_hash
from compoworld_assets.engine.specs.model import ServiceSpec, ToolSpec
from compoworld_assets.engine.types import is_entity_ref, parse_entity_ref
from compoworld_assets.engine.world_model.change import Simulation


class WorldModel(Protocol):
    model_id: str
    """Identifies the backend and its settings; part of every cache key."""

    def simulate(
        self, spec: ServiceSpec, tool: ToolSpec, args: dict[str, Any], state: ServiceState
    ) -> Simulation:
        """The envelope the tool would return for ``args`` in ``state`` and the state change the call
        makes (valid for :func:`~.change.apply_change`); never raises, never mutates ``state``."""


def world_model_key(
    spec: ServiceSpec, tool: ToolSpec, args: dict[str, Any], state: ServiceState, model_id: str
) -> str:
    """SHA-256 over service id and version, tool, canonical args, the state's hash and the model."""
    return content_hash([spec.id, spec.version, tool.name, args, state_hash(state), model_id])


def missing_reference(
    spec: ServiceSpec, tool: ToolSpec, args: dict[str, Any], state: ServiceState
) -> dict[str, Any] | None:
    """A ``not_found`` envelope when an argument names a record of this service that does not exist."""
    for param, type_name in sorted(tool.input_types().items()):
        if not is_entity_ref(type_name) or not isinstance(args.get(param), str):
            continue
        service_id, entity = parse_entity_ref(type_name)
        table = state.tables.get(entity)
        if service_id == spec.id and table is not None and args[param] not in table:
            return error(NOT_FOUND, f"{entity} {args[param]!r} not found")
    return None


def unheld_references(spec: ServiceSpec, tool: ToolSpec, data: Any, *states: ServiceState) -> list[str]:
    """The records of this service ``data`` names (at the returns schema's entity-typed paths) that none of
    ``states`` (before and after the call's change: a delete names the record it removed) holds: an answer that
    claims to read a record the world has not got."""
    missing = []
    for path, type_name in sorted(tool.output_types().items()):
        if not is_entity_ref(type_name):
            continue
        service_id, entity = parse_entity_ref(type_name)
        tables = [s.tables[entity] for s in states if entity in s.tables]
        if service_id != spec.id or not tables:
            continue
        missing += [f"{path} names {entity} {value!r}, which the state does not hold"
                    for value in _at(data, path.split(".") if path != "$" else [])
                    if isinstance(value, str) and not any(value in table for table in tables)]
    return missing


def _at(value: Any, parts: list[str]) -> list[Any]:
    """The values at a dotted path of :meth:`ToolSpec.output_types` (``items[]`` for every item)."""
    if not parts:
        return [value]
    head, rest = parts[0], parts[1:]
    name, many = (head[:-2], True) if head.endswith("[]") else (head, False)
    if name:
        value = value.get(name) if isinstance(value, dict) else None
    if many:
        return [found for item in value for found in _at(item, rest)] if isinstance(value, list) else []
    return _at(value, rest) if value is not None else []


def refused_transition(spec: ServiceSpec, tool: ToolSpec, args: dict[str, Any], state: ServiceState
                       ) -> dict[str, Any] | None:
    """A ``conflict`` envelope when the tool's transition refuses the record its key names (as code would)."""
    transition = tool.transition
    if transition is None or not transition.key or tool.entity is None:
        return None
    record = state.tables.get(tool.entity, {}).get(args.get(transition.key))
    refusal = transition.refuses(record) if isinstance(record, dict) else None
    return None if refusal is None else error(CONFLICT, f"{tool.entity} {args[transition.key]!r} {refusal}")
