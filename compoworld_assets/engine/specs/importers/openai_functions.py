"""Importer for OpenAI function/tool JSON and BFCL's Gorilla dialect.

Accepted shapes: ``{"type": "function", "function": {...}}``, bare ``{name, description,
parameters}``, lists of either, ``{"tools": [...]}`` / ``{"functions": [...]}`` wrappers, and
BFCL entries (``{"id", "question", "function": [...]}``) whose function lists are flattened.
Gorilla types (``dict``, ``float``, ``tuple``, ``any``) are mapped to JSON schema and a
multi-turn ``response`` schema becomes the tool's returns. One input = one service.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import PurePath
from typing import Any, Literal

from compoworld_assets.engine.deadline import check_deadline
from compoworld_assets.engine.specs.importers.context import current, within_tool_limit
from compoworld_assets.engine.specs.importers.functions import RawTool, build_function_service
from compoworld_assets.engine.specs.importers.guard import guarded_importer
from compoworld_assets.engine.specs.importers.naming import safe_tool_name, service_slug
from compoworld_assets.engine.specs.importers.schema import DIALECT_TYPES, normalise_schema
from compoworld_assets.engine.specs.model import ImportResult, QuarantinedSpec, SourceRef

FunctionKind = Literal["openai", "bfcl"]

_BFCL_PREAMBLE = re.compile(r"^This tool belongs to the (?P<api>[^,.]+?)(?:, which (?P<what>[^.]+))?\.")


class ToolParseError(ValueError):
    """A tool entry that cannot become a RawTool; the message is the quarantine reason."""


def uses_gorilla_dialect(data: Any, depth: int = 0) -> bool:
    """Whether ``data`` uses BFCL's Gorilla dialect (dialect type names or ``response`` schemas)."""
    if depth > 12:
        return False
    if isinstance(data, dict):
        if isinstance(data.get("type"), str) and data["type"] in DIALECT_TYPES and data["type"] != "":
            return True
        if isinstance(data.get("response"), dict) and "name" in data:
            return True
        return any(uses_gorilla_dialect(v, depth + 1) for v in data.values() if isinstance(v, (dict, list)))
    if isinstance(data, list):
        return any(uses_gorilla_dialect(v, depth + 1) for v in data)
    return False


def tool_entries(data: Any, location: str) -> Iterator[tuple[Any, str]]:
    """(entry, location) for every tool entry in the accepted container shapes."""
    if isinstance(data, list):
        for index, item in enumerate(data):
            if isinstance(item, dict) and isinstance(item.get("function"), list):
                yield from tool_entries(item["function"], f"{location}#/{index}/function")
            else:
                yield item, f"{location}#/{index}" if "#" not in location else f"{location}/{index}"
    elif isinstance(data, dict) and isinstance(data.get("tools"), list):
        yield from tool_entries(data["tools"], f"{location}#/tools")
    elif isinstance(data, dict) and isinstance(data.get("functions"), list):
        yield from tool_entries(data["functions"], f"{location}#/functions")
    elif isinstance(data, dict) and isinstance(data.get("function"), list):
        yield from tool_entries(data["function"], f"{location}#/function")
    else:
        yield data, location


def parse_function_tool(entry: Any, location: str, name_prefix: str = "") -> RawTool:
    """A RawTool from one OpenAI/BFCL tool entry; raises ToolParseError with the reason."""
    if (
        isinstance(entry, dict)
        and entry.get("type") == "function"
        and isinstance(entry.get("function"), dict)
    ):
        entry = entry["function"]
    if not isinstance(entry, dict):
        raise ToolParseError(f"tool entry is not an object (got {type(entry).__name__})")
    name = entry.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ToolParseError("tool has no name")
    parameters = entry.get("parameters", {"type": "object", "properties": {}})
    return RawTool(
        name=safe_tool_name(name.strip().removeprefix(name_prefix)),
        description=str(entry.get("description") or "").strip(),
        parameters=object_parameters(parameters, name),
        returns=normalise_schema(entry["response"]) if isinstance(entry.get("response"), dict) else {},
        location=location,
        source=entry,
    )


def object_parameters(parameters: Any, tool_name: str) -> dict[str, Any]:
    """The normalised parameters schema, which must describe an object."""
    if not isinstance(parameters, dict):
        raise ToolParseError(
            f"tool {tool_name!r}: parameters is not an object (got {type(parameters).__name__})"
        )
    properties = parameters.get("properties")
    limit = current().limits.max_parameters
    if isinstance(properties, dict) and len(properties) > limit:
        raise ToolParseError(f"tool {tool_name!r} has {len(properties)} parameters (the limit is {limit})")
    schema = normalise_schema(parameters)
    schema.setdefault("type", "object")
    if schema["type"] != "object":
        raise ToolParseError(
            f"tool {tool_name!r}: parameters must be a JSON-schema object, got {schema['type']!r}"
        )
    if not isinstance(schema.setdefault("properties", {}), dict):
        raise ToolParseError(f"tool {tool_name!r}: parameters.properties is not an object")
    return schema


def collect_tools(
    data: Any, location: str, kind: str, name_prefix: str = ""
) -> tuple[list[RawTool], list[QuarantinedSpec]]:
    """Parse every entry; identical repeats are skipped, conflicting repeats quarantined."""
    tools: dict[str, RawTool] = {}
    quarantined: list[QuarantinedSpec] = []
    for entry, entry_location in tool_entries(data, location):
        check_deadline()
        try:
            tool = parse_function_tool(entry, entry_location, name_prefix)
        except ToolParseError as error:
            quarantined.append(QuarantinedSpec.from_error(kind, entry_location, error, entry))
            continue
        previous = tools.get(tool.name)
        if previous is None:
            tools[tool.name] = tool
        elif previous.source != tool.source:
            quarantined.append(
                QuarantinedSpec.from_error(
                    kind,
                    entry_location,
                    f"duplicate tool name {tool.name!r} with a different definition",
                    entry,
                )
            )
    return within_tool_limit(list(tools.values()), location), quarantined


def bfcl_service_text(tools: list[RawTool]) -> tuple[str, str] | None:
    """(name, description) from BFCL's shared "This tool belongs to the X API, which ..." preamble."""
    matches = [_BFCL_PREAMBLE.match(t.description) for t in tools]
    if not matches or not all(matches) or len({m.group(0) for m in matches if m}) != 1:
        return None
    first = matches[0]
    assert first is not None
    api = first["api"].removeprefix("The ").strip()
    what = f", which {first['what']}" if first["what"] else ""
    return api, f"The {api}{what}."


@guarded_importer("openai")
def import_openai_functions(
    data: Any,
    *,
    location: str,
    service_id: str | None = None,
    name: str | None = None,
    domain: str | None = None,
    description: str | None = None,
    kind: FunctionKind | None = None,
) -> ImportResult:
    """One service from OpenAI/BFCL function tools; ``kind`` None detects the Gorilla dialect."""
    source_kind: FunctionKind = kind or ("bfcl" if uses_gorilla_dialect(data) else "openai")
    sid = service_slug(service_id or PurePath(location.split("#")[0]).stem)
    tools, quarantined = collect_tools(data, location, source_kind)
    if not tools:
        reason = "no importable tools" if quarantined else "input holds no tools"
        return ImportResult(
            quarantined=[*quarantined, QuarantinedSpec.from_error(source_kind, location, reason, data)]
        )
    bfcl_text = bfcl_service_text(tools)
    result = build_function_service(
        tools,
        service_id=sid,
        name=name or (bfcl_text[0] if bfcl_text else sid.replace("_", " ").title()),
        domain=domain or "general",
        description=description or (bfcl_text[1] if bfcl_text else f"Tools imported from {location}."),
        source=SourceRef(kind=source_kind, location=location),
    )
    result.quarantined[:0] = quarantined
    return result
