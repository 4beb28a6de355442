"""Cached JSON-schema validators (the ``x-cw-type`` keyword is unknown to jsonschema and ignored)."""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.protocols import Validator
from jsonschema.validators import validator_for

from compoworld_assets.engine.canonical import canonical_json


@lru_cache(maxsize=4096)
def _validator(schema_json: str) -> Validator:
    schema = json.loads(schema_json)
    return validator_for(schema, default=Draft202012Validator)(schema)


def validator(schema: dict[str, Any]) -> Validator:
    return _validator(canonical_json(schema))


def schema_errors(schema: dict[str, Any], value: Any, limit: int = 3) -> list[str]:
    """Readable messages for the first ``limit`` ways ``value`` violates ``schema``."""
    errors = sorted(validator(schema).iter_errors(value), key=lambda e: list(e.absolute_path))
    return [f"{'/'.join(str(p) for p in e.absolute_path) or '$'}: {e.message}" for e in errors[:limit]]


def is_valid(schema: dict[str, Any], value: Any) -> bool:
    return validator(schema).is_valid(value)
