"""The one result envelope every tool returns.

``{"success": true, "data": ...}`` or
``{"success": false, "error": {"code": ..., "message": ...}}``. Codes are HTTP-like
strings (``"400"``-style meaning is carried by the names below) so agents learn to recover.
"""

from __future__ import annotations

from typing import Any

INVALID_ARGUMENTS = "invalid_arguments"
NOT_FOUND = "not_found"
CONFLICT = "conflict"
UNKNOWN_TOOL = "unknown_tool"
INTERNAL_ERROR = "internal_error"
TIMEOUT = "timeout"
RESOURCE_LIMIT = "resource_limit"
SANDBOX_VIOLATION = "sandbox_violation"
UNAVAILABLE = "unavailable"
"""The tool cannot answer here: the offline world model holds no value it could truthfully return."""

ERROR_CODES = frozenset(
    {INVALID_ARGUMENTS, NOT_FOUND, CONFLICT, UNKNOWN_TOOL, INTERNAL_ERROR, TIMEOUT, RESOURCE_LIMIT,
     SANDBOX_VIOLATION, UNAVAILABLE}
)


def ok(data: Any) -> dict[str, Any]:
    return {"success": True, "data": data}


def error(code: str, message: str) -> dict[str, Any]:
    return {"success": False, "error": {"code": code, "message": message}}


def is_envelope(value: Any) -> bool:
    """True when ``value`` has exactly the envelope's shape."""
    if not isinstance(value, dict) or not isinstance(value.get("success"), bool):
        return False
    if value["success"]:
        return set(value) == {"success", "data"}
    err = value.get("error")
    return (
        set(value) == {"success", "error"}
        and isinstance(err, dict)
        and isinstance(err.get("code"), str)
        and isinstance(err.get("message"), str)
    )
