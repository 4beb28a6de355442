"""Normalising reference values and comparing them with envelopes.

Normalisation (:func:`plain`) turns whatever a reference backend returns or holds into JSON
data: dict keys become strings, tuples lists, sets lists sorted by canonical JSON, objects
the dict of their public attributes (``vars`` without ``_``-names), a back-reference to an
object already being converted (a directory's ``parent``) the marker ``"<cycle>"``, and
anything else its ``str``. Equality (:func:`values_equal`) is JSON equality where numbers
compare by value within 1e-9 relative tolerance (``2 == 2.0``) and booleans are never numbers.
"""

from __future__ import annotations

import math
from typing import Any

from compoworld_assets.engine.canonical import canonical_json

CYCLE_MARKER = "<cycle>"
FLOAT_TOLERANCE = 1e-9


def plain(value: Any) -> Any:
    """``value`` normalised to JSON data (see the module docstring)."""
    return _plain(value, frozenset())


def _plain(value: Any, ancestors: frozenset[int]) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if id(value) in ancestors:
        return CYCLE_MARKER
    inner = ancestors | {id(value)}
    if isinstance(value, dict):
        return {str(k): _plain(v, inner) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v, inner) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((_plain(v, inner) for v in value), key=canonical_json)
    if hasattr(value, "__dict__"):
        return {k: _plain(v, inner) for k, v in sorted(vars(value).items()) if not k.startswith("_")}
    return str(value)


def values_equal(left: Any, right: Any) -> bool:
    """JSON equality with numeric tolerance; ``True`` is not ``1``."""
    if isinstance(left, bool) or isinstance(right, bool):
        return isinstance(left, bool) and isinstance(right, bool) and left == right
    if isinstance(left, (int, float)) and isinstance(right, (int, float)):
        return math.isclose(left, right, rel_tol=FLOAT_TOLERANCE, abs_tol=FLOAT_TOLERANCE)
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(values_equal(left[k], right[k]) for k in left)
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(values_equal(a, b) for a, b in zip(left, right, strict=True))
    return type(left) is type(right) and left == right


def reference_failed(result: Any) -> bool:
    """BFCL's failure signal: a returned dict with an ``error`` key (exceptions are caught earlier)."""
    return isinstance(result, dict) and "error" in result


def result_matches(expected: Any, envelope: dict[str, Any]) -> bool:
    """Whether our envelope's ``data`` carries the reference result ``expected`` (already normalised).

    A dict result matches when ours is a dict holding every key of the reference with an equal
    value (extra keys of ours are ignored). Any other result must equal ours, or the single
    value of ours when ours is a one-key dict (``{"result": 3}`` carries ``3``).
    """
    data = envelope.get("data")
    if isinstance(expected, dict):
        return isinstance(data, dict) and all(
            k in data and values_equal(data[k], v) for k, v in expected.items()
        )
    if isinstance(data, dict) and len(data) == 1:
        data = next(iter(data.values()))
    return values_equal(data, expected)


def call_agreement(reference_ok: bool, expected: Any, envelope: dict[str, Any]) -> tuple[bool, bool]:
    """(outcome agrees, result matches) for one call.

    Outcomes agree when both sides succeed or both fail. A result matches when both failed
    (error texts are not compared) or both succeeded and :func:`result_matches` holds.
    """
    ours_ok = envelope.get("success") is True
    if reference_ok != ours_ok:
        return False, False
    return True, (not ours_ok) or result_matches(expected, envelope)
