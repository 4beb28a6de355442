"""Generated verification cases: seeded calls of one tool, valid and deliberately invalid.

Valid arguments are built from the seed state so that referenced records exist (list and
search filters are taken from a stored record so that they match something); other values come
from :func:`compoworld_assets.engine.values.schema_value`.
"""

from __future__ import annotations

import random
from typing import Any

from compoworld_assets.engine.runtime.state import ServiceState
from compoworld_assets.engine.specs.model import Effect, ServiceSpec, ToolSpec
from compoworld_assets.engine.synthesis.offline import identifying_parameter, same_service_references
from compoworld_assets.engine.values import schema_value
from compoworld_assets.engine.verification.models import VerificationCase

WRONG_TYPE_VALUES: dict[str, Any] = {
    "string": 12345,
    "integer": "not a number",
    "number": "not a number",
    "boolean": "not a boolean",
    "array": "not an array",
    "object": "not an object",
}
UNKNOWN_PARAMETER = "cw_unexpected_parameter"
LIST_LIMIT = 5


def reference_parameters(spec: ServiceSpec, tool: ToolSpec) -> dict[str, str]:
    """Parameter → entity for each parameter naming a record of this service, the identifying one included."""
    refs = dict(same_service_references(spec, tool))
    key = identifying_parameter(spec, tool)
    if key is not None and tool.entity is not None:
        refs[key] = tool.entity
    return dict(sorted(refs.items()))


def must_exist_parameters(spec: ServiceSpec, tool: ToolSpec) -> dict[str, str]:
    """The references a call must point at existing records: the identifying one, and for create and
    update every other same-service reference (list and search may filter on any id)."""
    refs = reference_parameters(spec, tool)
    if tool.effect in (Effect.CREATE, Effect.UPDATE):
        return refs
    key = identifying_parameter(spec, tool)
    return {name: entity for name, entity in refs.items() if name == key}


def generate_cases(
    spec: ServiceSpec, tool: ToolSpec, seed_state: ServiceState, seed: int
) -> list[VerificationCase]:
    """The valid and invalid cases for ``tool``; no valid case when the seed state lacks needed records.

    The two valid cases (all parameters, required ones only) point at different stored records
    when there are several, so that a bug showing on one record only is more likely caught.
    """
    builder = _ArgumentBuilder(spec, tool, seed_state, random.Random(f"{seed}:{spec.id}:{tool.name}"))
    cases: list[VerificationCase] = []
    full = builder.build()
    second = builder.build()
    required = set(tool.required_parameters())
    required_only = None if second is None else {k: v for k, v in second.items() if k in required}
    if required_only is not None:
        cases.append(
            VerificationCase(tool=tool.name, name="valid[required]", kind="valid", args=required_only)
        )
    if full is not None and full != required_only:
        cases.append(VerificationCase(tool=tool.name, name="valid[all]", kind="valid", args=full))
    base = full if full is not None else builder.placeholder_args()
    cases.extend(_invalid_cases(spec, tool, base, seed_state))
    return cases


def _refused_record(spec: ServiceSpec, tool: ToolSpec, seed_state: ServiceState) -> str | None:
    """A stored record the tool's transition must refuse (its status does not allow it), if any."""
    transition = tool.transition
    if transition is None or not transition.field or not transition.key or tool.entity is None:
        return None
    rows = seed_state.tables.get(tool.entity, {})
    return next((rid for rid in sorted(rows) if transition.refuses(rows[rid]) is not None), None)


def _invalid_cases(
    spec: ServiceSpec, tool: ToolSpec, base: dict[str, Any], seed_state: ServiceState
) -> list[VerificationCase]:
    cases: list[VerificationCase] = []
    for name in tool.required_parameters():
        args = {k: v for k, v in base.items() if k != name}
        cases.append(
            VerificationCase(tool=tool.name, name=f"missing_required[{name}]", kind="invalid", args=args)
        )
    for name, schema in sorted(tool.parameter_properties().items()):
        wrong = wrong_type_value(schema.get("type") if isinstance(schema, dict) else None)
        if wrong is not _NO_VALUE:
            args = {**base, name: wrong}
            cases.append(
                VerificationCase(tool=tool.name, name=f"wrong_type[{name}]", kind="invalid", args=args)
            )
    for name, entity in must_exist_parameters(spec, tool).items():
        args = {**base, name: f"{spec.entity(entity).id_prefix}_unknown"}
        cases.append(VerificationCase(tool=tool.name, name=f"unknown_id[{name}]", kind="invalid", args=args))
    refused = _refused_record(spec, tool, seed_state)
    if refused is not None:
        args = {**base, tool.transition.key: refused}
        cases.append(VerificationCase(tool=tool.name, name=f"precondition[{tool.transition.field}]",
                                      kind="invalid", args=args))
    if tool.parameters.get("additionalProperties") is False:
        args = {**base, UNKNOWN_PARAMETER: 1}
        cases.append(VerificationCase(tool=tool.name, name="unknown_parameter", kind="invalid", args=args))
    return cases


def wrong_type_value(declared: Any) -> Any:
    """A value of none of the declared JSON types (``_NO_VALUE`` when the type is absent or unknown).

    ``declared`` is a type name or, as JSON schema allows, a list of them (``["string", "null"]``).
    """
    if isinstance(declared, str):
        return WRONG_TYPE_VALUES.get(declared, _NO_VALUE)
    if not isinstance(declared, list) or not declared or not all(t in _JSON_KINDS for t in declared):
        return _NO_VALUE
    accepted = {kind for t in declared for kind in _JSON_KINDS[t]}
    return next((v for v in WRONG_TYPE_VALUES.values() if _kind_of(v) not in accepted), _NO_VALUE)


def _kind_of(value: Any) -> str:
    return {bool: "boolean", int: "integer", float: "number", str: "string", list: "array", dict: "object"}[
        type(value)]


# The kinds of value each JSON type accepts (a number may be an integer).
_JSON_KINDS: dict[str, tuple[str, ...]] = {
    "string": ("string",), "integer": ("integer",), "number": ("number", "integer"), "boolean": ("boolean",),
    "array": ("array",), "object": ("object",), "null": ("null",),
}


class _ArgumentBuilder:
    def __init__(
        self, spec: ServiceSpec, tool: ToolSpec, seed_state: ServiceState, rng: random.Random
    ) -> None:
        self.spec = spec
        self.tool = tool
        self.state = seed_state
        self.rng = rng
        self.refs = reference_parameters(spec, tool)
        entity = spec.entity(tool.entity) if tool.entity else None
        self.field_names = {f.name for f in entity.fields} if entity else set()
        self.sample = self._sample_record()
        self.draws: dict[str, int] = {}

    def build(self) -> dict[str, Any] | None:
        """Valid values for every parameter, or None when a required reference has no record to point at."""
        required = set(self.tool.required_parameters())
        args: dict[str, Any] = {}
        for name, schema in self.tool.parameter_properties().items():
            value = self._value(name, schema if isinstance(schema, dict) else {})
            if value is _NO_VALUE:
                if name in required:
                    return None
                continue
            args[name] = value
        return args

    def placeholder_args(self) -> dict[str, Any]:
        """Arguments of the right shape whose references point nowhere (for the invalid cases)."""
        return {
            name: (
                f"{self.spec.entity(self.refs[name]).id_prefix}_unknown"
                if name in self.refs
                else schema_value(schema, self.rng)
            )
            for name, schema in self.tool.parameter_properties().items()
        }

    def _value(self, name: str, schema: dict[str, Any]) -> Any:
        if name in self.refs:
            return self._next_id(name)
        if name == "limit" and name not in self.field_names:
            low, high = schema.get("minimum", 1), schema.get("maximum", LIST_LIMIT)
            return max(low, min(LIST_LIMIT, high))
        if name == "query" and self.tool.effect == Effect.SEARCH and name not in self.field_names:
            return self._query()
        if (
            self.tool.effect in (Effect.LIST, Effect.SEARCH)
            and self.sample is not None
            and self.sample.get(name) is not None
        ):
            return self.sample[name]
        return schema_value(schema, self.rng)

    def _next_id(self, name: str) -> Any:
        """Successive builds point at successive stored records (from a seeded start); the record a
        transition acts on is one whose status allows it."""
        rows = self.state.tables.get(self.refs[name], {})
        transition = self.tool.transition
        ids = sorted(
            rid for rid in rows
            if transition is None or name != transition.key or transition.refuses(rows[rid]) is None
        )
        if not ids:
            return _NO_VALUE
        if name not in self.draws:
            self.draws[name] = self.rng.randrange(len(ids))
        self.draws[name] += 1
        return ids[self.draws[name] % len(ids)]

    def _sample_record(self) -> dict[str, Any] | None:
        rows = self.state.tables.get(self.tool.entity or "", {})
        return rows[self.rng.choice(sorted(rows))] if rows else None

    def _query(self) -> str:
        """An upper-cased word of a text field of the sample record, so a correct search finds it."""
        if self.sample is not None:
            for name in sorted(self.field_names):
                value = self.sample.get(name)
                if isinstance(value, str) and value.split():
                    return value.split()[0].upper()
        return schema_value({"type": "string"}, self.rng)


_NO_VALUE = object()
