"""Repairing a tool's JSON schemas so that every later stage can rely on them.

Specs in the wild carry schemas that JSON-schema tools refuse or that no value satisfies, and
each such schema used to crash a stage after import: a list-valued ``type`` where a string was
expected, a ``format`` that is a number, ``minimum > maximum`` (no value to generate), a
``pattern`` Python's ``re`` cannot compile (jsonschema raises ``SchemaError`` at validation),
OpenAPI 3.0's boolean ``exclusiveMinimum`` (invalid in draft 2020-12), ``minLength: 10**9``
(the generated value alone exhausts memory). :func:`repair_tool_schemas` walks a tool's
``parameters`` and ``returns`` structurally, knowing which keywords hold sub-schemas, and
keeps each keyword only when its value is what draft 2020-12 allows:

* ``type``: JSON type names only (a list keeps its valid entries; empty ones are left out);
* ``enum`` a non-empty list of at most :attr:`ImportLimits.max_enum` values; ``required`` strings;
* ``pattern`` (and ``patternProperties`` keys) through :func:`~compoworld_assets.engine.specs.patterns.python_pattern`;
* numbers for bounds, non-negative integers for sizes, strings for ``format``/``title``/``description``;
  contradictory bounds (``minimum > maximum``, ``minLength > maxLength``...) are left out in pairs;
  generated-size minimums above :attr:`ImportLimits.max_generated_size` are left out;
* ``x-cw-type`` only when it names a known shared type or entity reference;
* ``$ref`` s still unresolved here (function schemas) are left out with ``$defs``; ``$schema``,
  ``$id``, ``$anchor`` and the other identifiers go too: every schema is validated as draft 2020-12;
* sub-schemas deeper than :attr:`ImportLimits.max_schema_depth` become ``{}``;
* a schema without ``type`` (and without ``anyOf``/``oneOf``/``allOf``/``enum``/``const``/``not``/
  ``nullable``) that lists ``properties`` gets ``type: object``, one with ``items`` ``type: array``.

Every change is noted as a repair (:mod:`.context`). A tool with more than
:attr:`ImportLimits.max_parameters` parameters or :attr:`ImportLimits.max_schema_nodes` schema
nodes is rejected with :class:`ToolRejected`. The result passes jsonschema's meta-schema check
(the tests hold every imported schema to it).
"""

from __future__ import annotations

import math
from typing import Any

from compoworld_assets.engine.deadline import check_deadline
from compoworld_assets.engine.specs.importers.context import current
from compoworld_assets.engine.specs.limits import ImportLimits
from compoworld_assets.engine.specs.patterns import python_pattern
from compoworld_assets.engine.types import TYPE_KEY, is_known_type

JSON_TYPES = ("string", "integer", "number", "boolean", "array", "object", "null")
_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "dependentSchemas"})
_SCHEMA_LISTS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_SCHEMA_VALUES = frozenset({
    "items", "additionalProperties", "additionalItems", "contains", "propertyNames", "not", "if", "then",
    "else", "unevaluatedItems", "unevaluatedProperties",
})
_IDENTIFIERS = frozenset({
    "$schema", "$id", "$anchor", "$dynamicRef", "$dynamicAnchor", "$recursiveRef", "$recursiveAnchor",
    "$vocabulary", "$comment", "$defs", "definitions", "id",
})
_NUMBERS = frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"})
_EXCLUSIVE = {"exclusiveMinimum": "minimum", "exclusiveMaximum": "maximum"}
_SIZES = {"minLength": "maxLength", "minItems": "maxItems", "minProperties": "maxProperties",
          "minContains": "maxContains"}
_STRINGS = frozenset({"format", "title", "description", "contentMediaType", "contentEncoding"})
_BOOLEANS = frozenset({"uniqueItems", "readOnly", "writeOnly", "deprecated"})
_DEADLINE_EVERY = 1024


class ToolRejected(ValueError):
    """A tool beyond the import limits; the message is the quarantine reason."""


def repair_tool_schemas(
    parameters: dict[str, Any], returns: Any, location: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The repaired (parameters, returns) of one tool; raises ToolRejected beyond the limits."""
    context = current()
    limits = context.limits
    properties = parameters.get("properties")
    if isinstance(properties, dict) and len(properties) > limits.max_parameters:
        raise ToolRejected(f"tool has {len(properties)} parameters (the limit is {limits.max_parameters})")
    repairer = _Repairer(limits, location)
    repaired_parameters = repairer.schema(parameters, "/parameters", 0)
    repaired_returns = repairer.schema(returns, "/returns", 0) if returns else {}
    return (
        repaired_parameters if isinstance(repaired_parameters, dict) else {"type": "object", "properties": {}},
        repaired_returns if isinstance(repaired_returns, dict) else {},
    )


def repair_schema(schema: Any, location: str) -> dict[str, Any]:
    """One repaired schema (an entity field's); a non-object schema becomes ``{}``."""
    repaired = _Repairer(current().limits, location).schema(schema, "", 0)
    return repaired if isinstance(repaired, dict) else {}


class _Repairer:
    def __init__(self, limits: ImportLimits, location: str) -> None:
        self.limits = limits
        self.location = location
        self.repairs = current().repairs
        self.nodes = 0

    def note(self, reason: str, pointer: str, fragment: Any = "") -> None:
        self.repairs.note(reason, f"{self.location}{pointer}", fragment)

    def count(self, n: int) -> None:
        before = self.nodes
        self.nodes += n
        if self.nodes > self.limits.max_schema_nodes:
            raise ToolRejected(f"tool schemas hold more than {self.limits.max_schema_nodes} nodes")
        if self.nodes // _DEADLINE_EVERY != before // _DEADLINE_EVERY:
            check_deadline()

    def schema(self, value: Any, pointer: str, depth: int) -> dict[str, Any] | bool | None:
        """The repaired sub-schema; None when ``value`` is no schema at all."""
        self.count(1)
        if isinstance(value, bool):
            return value
        if not isinstance(value, dict):
            self.note("values that are not schemas left out", pointer, repr(value)[:200])
            return None
        if depth > self.limits.max_schema_depth:
            self.note(f"schemas nested deeper than {self.limits.max_schema_depth} levels cut", pointer)
            return {}
        self.count(len(value))
        out: dict[str, Any] = {}
        for key, sub in value.items():
            here = f"{pointer}/{key}"
            if key in _SCHEMA_MAPS:
                self._schema_map(out, key, sub, here, depth)
            elif key in _SCHEMA_LISTS or (key == "items" and isinstance(sub, list)):
                self._schema_list(out, "prefixItems" if key == "items" else key, sub, here, depth)
            elif key in _SCHEMA_VALUES:
                repaired = self.schema(sub, here, depth + 1)
                if repaired is not None:
                    out[key] = repaired
            elif key == "$ref":
                self.note("unresolved $ref left out", here, sub)
            elif key in _IDENTIFIERS or (key in _EXCLUSIVE and isinstance(sub, bool)):
                continue  # identifiers: see the module docstring; boolean exclusive bounds: see _bounds
            else:
                self._keyword(out, key, sub, here)
        self._bounds(out, value, pointer)
        self._sizes(out, pointer)
        self._implied_type(out, pointer)
        return out

    def _implied_type(self, out: dict[str, Any], pointer: str) -> None:
        """A schema without ``type`` that lists ``properties`` (or ``items``) describes an object (an array), as
        OpenAPI tools read it; without the type any value passes it, so a world model may answer a phrase."""
        if "type" in out or out.get("nullable") is True or any(
                k in out for k in ("anyOf", "oneOf", "allOf", "enum", "const", "not")):
            return  # (an OpenAPI 3.0 ``nullable`` schema also takes null: a type would refuse it)
        implied = "object" if out.get("properties") else "array" if isinstance(out.get("items"), dict) else None
        if implied is not None:
            out["type"] = implied
            self.note(f"'type: {implied}' implied by its keywords", pointer)

    def _schema_map(self, out: dict[str, Any], key: str, value: Any, pointer: str, depth: int) -> None:
        if not isinstance(value, dict):
            self.note(f"'{key}' values that are not objects left out", pointer, repr(value)[:200])
            return
        if key == "properties" and len(value) > self.limits.max_parameters:
            raise ToolRejected(f"a schema has {len(value)} properties (the limit is {self.limits.max_parameters})")
        repaired: dict[str, Any] = {}
        for name, sub in value.items():
            if key == "patternProperties":
                translated, why = python_pattern(name) if len(name) <= self.limits.max_pattern_chars else (None, "")
                if translated is None:
                    self.note("patternProperties Python cannot use left out", pointer, f"{name!r}: {why}"[:400])
                    continue
                name = translated
            schema = self.schema(sub, f"{pointer}/{name}", depth + 1)
            if schema is None or (key == "properties" and schema is False):
                continue
            repaired[name] = {} if key == "properties" and schema is True else schema
        out[key] = repaired

    def _schema_list(self, out: dict[str, Any], key: str, value: Any, pointer: str, depth: int) -> None:
        if not isinstance(value, list):
            self.note(f"'{key}' values that are not lists left out", pointer, repr(value)[:200])
            return
        repaired = [s for i, v in enumerate(value) if (s := self.schema(v, f"{pointer}/{i}", depth + 1)) is not None]
        if repaired:
            out[key] = repaired
        elif key != "prefixItems":
            self.note(f"empty '{key}' left out", pointer)

    def _keyword(self, out: dict[str, Any], key: str, value: Any, pointer: str) -> None:
        kept = _checked(key, value, self.limits)
        if kept is _INVALID:
            self.note(f"invalid '{key}' values left out", pointer, repr(value)[:200])
            return
        if key == "pattern":
            if len(value) > self.limits.max_pattern_chars:
                self.note(f"patterns longer than {self.limits.max_pattern_chars} characters left out", pointer,
                          value[:200])
                return
            kept, why = python_pattern(value)
            if kept is None:
                self.note("patterns Python's re cannot use left out", pointer, f"{value!r}: {why}"[:400])
                return
        out[key] = kept

    def _bounds(self, out: dict[str, Any], raw: dict[str, Any], pointer: str) -> None:
        """OpenAPI 3.0's boolean exclusive bounds made numeric; contradictory bounds left out."""
        for flag, bound in _EXCLUSIVE.items():
            if raw.get(flag) is True and bound in out:
                out[flag] = out.pop(bound)
        low = [out[k] for k in ("minimum", "exclusiveMinimum") if k in out]
        high = [out[k] for k in ("maximum", "exclusiveMaximum") if k in out]
        exclusive = "exclusiveMinimum" in out or "exclusiveMaximum" in out
        if low and high and (max(low) > min(high) or (exclusive and max(low) == min(high))):
            for key in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"):
                out.pop(key, None)
            self.note("contradictory numeric bounds left out", pointer, repr((low, high))[:200])
        if "multipleOf" in out and out["multipleOf"] <= 0:
            self.note("non-positive multipleOf left out", pointer, out.pop("multipleOf"))

    def _sizes(self, out: dict[str, Any], pointer: str) -> None:
        for low, high in _SIZES.items():
            if low in out and high in out and out[low] > out[high]:
                self.note("contradictory size bounds left out", pointer, f"{low}={out.pop(low)} {high}={out.pop(high)}")
            if out.get(low, 0) > self.limits.max_generated_size:
                self.note(f"'{low}' above {self.limits.max_generated_size} left out", pointer, out.pop(low))


_INVALID = object()


def _checked(key: str, value: Any, limits: ImportLimits) -> Any:
    """``value`` as draft 2020-12 allows it for ``key`` (possibly narrowed), or ``_INVALID``."""
    if key == "type":
        names = [value] if isinstance(value, str) else value if isinstance(value, list) else []
        kept = list(dict.fromkeys(t for t in names if isinstance(t, str) and t in JSON_TYPES))
        return _INVALID if not kept else kept[0] if len(kept) == 1 else kept
    if key == "enum":
        return value if isinstance(value, list) and 0 < len(value) <= limits.max_enum else _INVALID
    if key == "required":
        return list(dict.fromkeys(r for r in value if isinstance(r, str))) if isinstance(value, list) else _INVALID
    if key == "pattern" or key in _STRINGS:
        return value if isinstance(value, str) else _INVALID
    if key in _NUMBERS:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        return value if ok else _INVALID
    if key in _SIZES or key in _SIZES.values():
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else _INVALID
    if key in _BOOLEANS:
        return value if isinstance(value, bool) else _INVALID
    if key == TYPE_KEY:
        return value if isinstance(value, str) and is_known_type(value) else _INVALID
    if key == "examples":
        return value if isinstance(value, list) else _INVALID
    if key == "dependentRequired":
        ok = isinstance(value, dict) and all(
            isinstance(v, list) and all(isinstance(x, str) for x in v) for v in value.values())
        return {k: list(dict.fromkeys(v)) for k, v in value.items()} if ok else _INVALID
    return value

