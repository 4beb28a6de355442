"""Cached JSON-schema validation that never raises (the ``x-cw-type`` keyword is unknown to jsonschema and ignored).

Every schema is read as draft 2020-12, whatever its ``$schema`` says (import drops it). A schema
that fails the meta-schema check, or that makes jsonschema raise while applying it, yields an
error message instead of an exception. ``pattern`` is matched with the ``regex`` module under a
time limit, so a pattern that backtracks catastrophically on some value (``^(\\w+\\s?)*$``
against a long near-match) fails that value instead of hanging the caller.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

import regex
from jsonschema import Draft202012Validator, SchemaError, ValidationError, validators
from jsonschema.protocols import Validator

from compoworld_assets.engine.canonical import canonical_json
from compoworld_assets.engine.world_model.plain_schema import plainly_valid

PATTERN_TIMEOUT_S = 0.1
_APPLY_ERRORS = (TypeError, ValueError, KeyError, AttributeError, RecursionError, OverflowError, regex.error)


@lru_cache(maxsize=4096)
def _pattern(pattern: str) -> regex.Pattern[str]:
    return regex.compile(pattern)


def _bounded_pattern(validator: Validator, pattern: str, instance: Any, schema: dict[str, Any]) -> Any:
    if not validator.is_type(instance, "string"):
        return
    try:
        found = _pattern(pattern).search(instance, timeout=PATTERN_TIMEOUT_S)
    except TimeoutError:
        yield ValidationError(f"{instance!r} could not be matched against {pattern!r} within {PATTERN_TIMEOUT_S} s")
        return
    if found is None:
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


BoundedValidator = validators.extend(Draft202012Validator, {"pattern": _bounded_pattern})


@lru_cache(maxsize=4096)
def _checked(schema_json: str) -> tuple[Validator | None, str]:
    schema = json.loads(schema_json)
    if plainly_valid(schema):  # the meta-schema's rules for these keywords, checked directly (plain_schema.py)
        return BoundedValidator(schema), ""
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as error:
        return None, f"the schema is invalid: {error.message[:300]}"
    except _APPLY_ERRORS as error:
        return None, f"the schema cannot be checked: {type(error).__name__}"
    return BoundedValidator(schema), ""


def _validator(schema: Any) -> tuple[Validator | None, str]:
    try:
        return _checked(canonical_json(schema))
    except _APPLY_ERRORS as error:
        return None, f"the schema is not JSON: {type(error).__name__}"


def schema_problem(schema: Any) -> str | None:
    """Why ``schema`` cannot be used for validation (None when it can)."""
    return _validator(schema)[1] or None


def schema_errors(schema: Any, value: Any, limit: int = 3) -> list[str]:
    """Readable messages for the first ``limit`` ways ``value`` violates ``schema`` (or the schema's problem)."""
    validator, problem = _validator(schema)
    if validator is None:
        return [f"$: {problem}"]
    try:
        errors = sorted(validator.iter_errors(value), key=lambda e: [str(p) for p in e.absolute_path])
    except _APPLY_ERRORS as error:
        return [f"$: the schema could not be applied: {type(error).__name__}: {str(error)[:200]}"]
    return [f"{'/'.join(str(p) for p in e.absolute_path) or '$'}: {e.message}" for e in errors[:limit]]


def is_valid(schema: Any, value: Any) -> bool:
    validator, _ = _validator(schema)
    if validator is None:
        return False
    try:
        return validator.is_valid(value)
    except _APPLY_ERRORS:
        return False
