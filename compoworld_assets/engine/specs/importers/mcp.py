"""Importer for MCP ``tools/list`` results.

Accepts ``{"tools": [...]}``, the JSON-RPC response wrapping it (``{"result": {"tools": ...}}``)
or a bare list of tools. ``inputSchema`` → parameters, ``outputSchema`` → returns;
``annotations.readOnlyHint``/``destructiveHint`` veto effects the name would suggest
(a read-only ``create_x`` is an action; a destructive tool is never a read or a create).
"""

from __future__ import annotations

from pathlib import PurePath
from typing import Any

from compoworld_assets.engine.deadline import check_deadline
from compoworld_assets.engine.specs.importers.context import within_tool_limit
from compoworld_assets.engine.specs.importers.functions import RawTool, build_function_service
from compoworld_assets.engine.specs.importers.guard import guarded_importer
from compoworld_assets.engine.specs.importers.naming import safe_tool_name, service_slug
from compoworld_assets.engine.specs.importers.openai_functions import ToolParseError, object_parameters
from compoworld_assets.engine.specs.importers.schema import normalise_schema
from compoworld_assets.engine.specs.model import ImportResult, QuarantinedSpec, SourceRef

KIND = "mcp"


def mcp_tool_list(data: Any) -> list[Any] | None:
    """The tools array of a tools/list result in any accepted wrapping, else None."""
    if isinstance(data, dict) and isinstance(data.get("result"), dict):
        data = data["result"]
    if isinstance(data, dict):
        data = data.get("tools")
    return data if isinstance(data, list) else None


def is_mcp_document(data: Any) -> bool:
    tools = mcp_tool_list(data)
    return bool(tools) and any(isinstance(t, dict) and "inputSchema" in t for t in tools)


def _hint(annotations: Any, key: str) -> bool | None:
    value = annotations.get(key) if isinstance(annotations, dict) else None
    return value if isinstance(value, bool) else None


def parse_mcp_tool(entry: Any, location: str) -> RawTool:
    if not isinstance(entry, dict):
        raise ToolParseError(f"tool entry is not an object (got {type(entry).__name__})")
    name = entry.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ToolParseError("tool has no name")
    annotations = entry.get("annotations") if isinstance(entry.get("annotations"), dict) else {}
    output = entry.get("outputSchema")
    return RawTool(
        name=safe_tool_name(name.strip()),
        description=str(entry.get("description") or annotations.get("title") or "").strip(),
        parameters=object_parameters(entry.get("inputSchema", {"type": "object"}), name),
        returns=normalise_schema(output) if isinstance(output, dict) else {},
        location=location,
        source=entry,
        read_only=_hint(annotations, "readOnlyHint"),
        destructive=_hint(annotations, "destructiveHint"),
    )


@guarded_importer(KIND)
def import_mcp_tools(
    data: Any,
    *,
    location: str,
    service_id: str | None = None,
    name: str | None = None,
    domain: str | None = None,
    description: str | None = None,
) -> ImportResult:
    """One service from an MCP tools/list result; bad tools are quarantined one by one."""
    tools_data = mcp_tool_list(data)
    if tools_data is None:
        return ImportResult(
            quarantined=[
                QuarantinedSpec.from_error(
                    KIND, location, "not an MCP tools/list result (no tools array)", data
                )
            ]
        )
    tools: list[RawTool] = []
    names: set[str] = set()
    quarantined: list[QuarantinedSpec] = []
    for index, entry in enumerate(tools_data):
        check_deadline()
        entry_location = f"{location}#/tools/{index}"
        try:
            tool = parse_mcp_tool(entry, entry_location)
        except ToolParseError as error:
            quarantined.append(QuarantinedSpec.from_error(KIND, entry_location, error, entry))
            continue
        if tool.name in names:
            quarantined.append(
                QuarantinedSpec.from_error(KIND, entry_location, f"duplicate tool name {tool.name!r}", entry)
            )
            continue
        names.add(tool.name)
        tools.append(tool)
    tools = within_tool_limit(tools, location)
    if not tools:
        return ImportResult(
            quarantined=[
                *quarantined,
                QuarantinedSpec.from_error(KIND, location, "no importable tools", data),
            ]
        )
    sid = service_slug(service_id or PurePath(location.split("#")[0]).stem)
    result = build_function_service(
        tools,
        service_id=sid,
        name=name or sid.replace("_", " ").title(),
        domain=domain or "general",
        description=description or f"MCP server tools imported from {location}.",
        source=SourceRef(kind=KIND, location=location),
    )
    result.quarantined[:0] = quarantined
    return result
