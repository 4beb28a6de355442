"""Turning arbitrary names from real specs into valid service ids, tool names and entity names."""

from __future__ import annotations

import re

from compoworld_assets.engine.specs.infer import snake_name
from compoworld_assets.engine.specs.model import TOOL_NAME_RE

MAX_SERVICE_ID = 63
_MAX_TOOL_NAME = 128


def service_slug(text: str) -> str:
    """A valid service id (``^[a-z][a-z0-9_]{0,62}$``) from a title or file stem."""
    slug = re.sub(r"_+", "_", snake_name(text)).strip("_")
    if not slug:
        return "service"
    if not slug[0].isalpha():
        slug = "api_" + slug
    return slug[:MAX_SERVICE_ID].rstrip("_")


def tool_slug(text: str) -> str:
    """A valid tool name from an operationId or a dotted function name (``math.add`` → ``math_add``)."""
    slug = re.sub(r"_+", "_", snake_name(text)).strip("_")
    if not slug:
        return "tool"
    if slug[0].isdigit():
        slug = "op_" + slug
    return slug[:_MAX_TOOL_NAME].rstrip("_")


def safe_tool_name(name: str) -> str:
    """The function's own name when it is a valid identifier, else invalid characters → ``_``.

    Function-calling tools keep their spelling (``activateParkingBrake``) so calls recorded
    against the source still match; only ``math.add``-style names are rewritten.
    """
    if TOOL_NAME_RE.match(name):
        return name
    cleaned = re.sub(r"_+", "_", re.sub(r"[^A-Za-z0-9_]", "_", name)).strip("_")
    if not cleaned:
        return "tool"
    if cleaned[0].isdigit():
        cleaned = "op_" + cleaned
    return cleaned[:_MAX_TOOL_NAME]


def unique_name(name: str, taken: set[str]) -> str:
    """``name``, or ``name_2``, ``name_3``... whichever is first not in ``taken``."""
    candidate, counter = name, 1
    while candidate in taken:
        counter += 1
        suffix = f"_{counter}"
        candidate = name[: _MAX_TOOL_NAME - len(suffix)] + suffix
    return candidate
