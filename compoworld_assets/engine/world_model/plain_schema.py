"""Draft 2020-12 schemas plain enough to be known valid without jsonschema's meta-schema check.

``Draft202012Validator.check_schema`` validates a schema against the 2020-12 meta-schema, resolving its
``$dynamicRef`` for every subschema: half of a paper-scale service build's time went there (every tool's
parameter and return schemas, and the records' field schemas, each checked once per process). Most tool schemas
use a few keywords whose meta-schema rules are simple: :func:`plainly_valid` checks exactly those rules and says
True only when the whole schema uses nothing else (keywords the meta-schema does not define are allowed, as
there). Anything else, and every schema that breaks a rule, goes to the full check, which says why. A test
holds the keyword list to the meta-schema's and the verdicts to ``check_schema``'s on generated schemas.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

MAX_DEPTH = 64

SIMPLE_TYPES = frozenset({"array", "boolean", "integer", "null", "number", "object", "string"})

# Every property the 2020-12 meta-schema and its vocabularies define (tests/engine/world_model: held equal).
META_SCHEMA_KEYWORDS = frozenset({
    "$anchor", "$comment", "$defs", "$dynamicAnchor", "$dynamicRef", "$id", "$recursiveAnchor", "$recursiveRef",
    "$ref", "$schema", "$vocabulary", "additionalProperties", "allOf", "anyOf", "const", "contains",
    "contentEncoding", "contentMediaType", "contentSchema", "default", "definitions", "dependencies",
    "dependentRequired", "dependentSchemas", "deprecated", "description", "else", "enum", "examples",
    "exclusiveMaximum", "exclusiveMinimum", "format", "if", "items", "maxContains", "maxItems", "maxLength",
    "maxProperties", "maximum", "minContains", "minItems", "minLength", "minProperties", "minimum", "multipleOf",
    "not", "oneOf", "pattern", "patternProperties", "prefixItems", "properties", "propertyNames", "readOnly",
    "required", "then", "title", "type", "unevaluatedItems", "unevaluatedProperties", "uniqueItems", "writeOnly",
})


def plainly_valid(schema: Any) -> bool:
    """Whether ``schema`` (parsed JSON) is valid under the 2020-12 meta-schema by the rules checked here; False
    also when it is not known (a keyword not handled here, a subschema nested deeper than :data:`MAX_DEPTH`)."""
    return _schema(schema, 0)


def _schema(value: Any, depth: int) -> bool:
    if isinstance(value, bool):
        return True
    if not isinstance(value, dict) or depth > MAX_DEPTH:
        return False
    for keyword, argument in value.items():
        rule = _RULES.get(keyword)
        if rule is None:
            if keyword in META_SCHEMA_KEYWORDS:
                return False  # a keyword the meta-schema constrains in ways not checked here
            continue
        if not rule(argument, depth + 1):
            return False
    return True


def _is_integer(value: Any) -> bool:  # jsonschema's "integer": an int, or a float with no fraction; never a bool
    return not isinstance(value, bool) and (isinstance(value, int) or (isinstance(value, float) and value.is_integer()))


def _is_number(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, int | float)


def _unique_strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value) and len(set(value)) == len(value)


def _type(value: Any, depth: int) -> bool:
    if isinstance(value, str):
        return value in SIMPLE_TYPES
    return (isinstance(value, list) and bool(value) and _unique_strings(value)
            and all(v in SIMPLE_TYPES for v in value))


def _schema_map(value: Any, depth: int) -> bool:
    return isinstance(value, dict) and all(_schema(v, depth) for v in value.values())


def _schema_list(value: Any, depth: int) -> bool:
    return isinstance(value, list) and bool(value) and all(_schema(v, depth) for v in value)


def _regex(value: Any, depth: int) -> bool:
    """A string Python's ``re`` compiles (the meta-schema's ``format: regex``, as jsonschema asserts it)."""
    if not isinstance(value, str):
        return False
    try:
        re.compile(value)
    except Exception:  # noqa: BLE001 - whatever compiling raises, the full check says what it means
        return False
    return True


_RULES: dict[str, Callable[[Any, int], bool]] = {
    "type": _type,
    "properties": _schema_map,
    "$defs": _schema_map,
    "items": _schema,
    "additionalProperties": _schema,
    "not": _schema,
    "allOf": _schema_list,
    "anyOf": _schema_list,
    "oneOf": _schema_list,
    "required": lambda v, d: _unique_strings(v),
    "enum": lambda v, d: isinstance(v, list),
    "examples": lambda v, d: isinstance(v, list),
    "const": lambda v, d: True,
    "default": lambda v, d: True,
    "title": lambda v, d: isinstance(v, str),
    "description": lambda v, d: isinstance(v, str),
    "$comment": lambda v, d: isinstance(v, str),
    "format": lambda v, d: isinstance(v, str),
    "deprecated": lambda v, d: isinstance(v, bool),
    "readOnly": lambda v, d: isinstance(v, bool),
    "writeOnly": lambda v, d: isinstance(v, bool),
    "uniqueItems": lambda v, d: isinstance(v, bool),
    "minimum": lambda v, d: _is_number(v),
    "maximum": lambda v, d: _is_number(v),
    "exclusiveMinimum": lambda v, d: _is_number(v),
    "exclusiveMaximum": lambda v, d: _is_number(v),
    "multipleOf": lambda v, d: _is_number(v) and v > 0,
    "minLength": lambda v, d: _is_integer(v) and v >= 0,
    "maxLength": lambda v, d: _is_integer(v) and v >= 0,
    "minItems": lambda v, d: _is_integer(v) and v >= 0,
    "maxItems": lambda v, d: _is_integer(v) and v >= 0,
    "minProperties": lambda v, d: _is_integer(v) and v >= 0,
    "maxProperties": lambda v, d: _is_integer(v) and v >= 0,
    "pattern": _regex,
}
