"""Canonical JSON and content hashes: the basis of determinism and cache keys."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def canonical_json(value: Any) -> str:
    """Serialise ``value`` so that equal values always give identical text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def plain_canonical_json(value: Any) -> str | None:
    """:func:`canonical_json` of plain JSON data (strings, numbers, booleans, None, lists, tuples, dicts keyed by
    strings); ``None`` for NaN, infinities and other types, whose text only the caller can say (pydantic's JSON
    dump, say, which writes a date as ISO text where ``default=str`` would not). Dicts keyed by numbers are
    encoded, not refused: JSON turns their keys into strings, but they sort as numbers."""
    try:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):
        return None


def content_hash(value: Any) -> str:
    """SHA-256 hex digest of the canonical JSON of ``value``."""
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
