"""Importer for CompoWorld-style gateway tool lists.

Gateway tool names carry their service as a prefix (``servicem8_create_job_payment``). Input is
a JSON list of OpenAI-style tools, or ``{"services": {"servicem8": {"domain", "description",
"name"}}, "tools": [...]}``. Each name is split at the longest known service id (header keys
plus ``known_services``); with none known, at the first underscore. One ServiceSpec per service.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from compoworld_assets.engine.deadline import check_deadline
from compoworld_assets.engine.specs.importers.context import within_tool_limit
from compoworld_assets.engine.specs.importers.functions import RawTool, build_function_service
from compoworld_assets.engine.specs.importers.guard import guarded_importer
from compoworld_assets.engine.specs.importers.naming import service_slug
from compoworld_assets.engine.specs.importers.openai_functions import (
    ToolParseError,
    parse_function_tool,
    tool_entries,
)
from compoworld_assets.engine.specs.model import ImportResult, QuarantinedSpec, SourceRef

KIND = "compoworld"


def split_service_prefix(tool_name: str, known_services: Iterable[str]) -> tuple[str, str] | None:
    """(service id, tool name) for a prefixed gateway name, or None when it has no prefix."""
    for service in sorted(set(known_services), key=len, reverse=True):
        if tool_name.startswith(service + "_") and len(tool_name) > len(service) + 1:
            return service, tool_name[len(service) + 1 :]
    service, sep, rest = tool_name.partition("_")
    return (service, rest) if sep and service and rest else None


def service_header(data: Any) -> dict[str, dict[str, Any]]:
    services = data.get("services") if isinstance(data, dict) else None
    if not isinstance(services, dict):
        return {}
    return {str(k): (v if isinstance(v, dict) else {}) for k, v in services.items()}


@guarded_importer(KIND)
def import_compoworld_tools(
    data: Any, *, location: str, known_services: Iterable[str] = (), domain: str | None = None
) -> ImportResult:
    """One service per prefix; unprefixed or malformed tools are quarantined."""
    header = service_header(data)
    tools_data = data.get("tools", []) if header else data
    known = set(header) | set(known_services)
    grouped: dict[str, list[RawTool]] = {}
    result = ImportResult()
    for entry, entry_location in tool_entries(tools_data, f"{location}#/tools" if header else location):
        check_deadline()
        try:
            tool = parse_function_tool(entry, entry_location)
        except ToolParseError as error:
            result.quarantined.append(QuarantinedSpec.from_error(KIND, entry_location, error, entry))
            continue
        split = split_service_prefix(tool.name, known)
        if split is None:
            result.quarantined.append(
                QuarantinedSpec.from_error(
                    KIND, entry_location, f"tool name {tool.name!r} has no service prefix", entry
                )
            )
            continue
        service, short_name = split
        group = grouped.setdefault(service, [])
        if any(t.name == short_name for t in group):
            result.quarantined.append(
                QuarantinedSpec.from_error(KIND, entry_location, f"duplicate tool name {tool.name!r}", entry)
            )
            continue
        group.append(replace(tool, name=short_name))
    for service in sorted(grouped):
        meta = header.get(service, {})
        result.extend(
            build_function_service(
                within_tool_limit(grouped[service], f"{location}#{service}"),
                service_id=service_slug(service),
                name=str(meta.get("name") or service.replace("_", " ").title()),
                domain=str(meta.get("domain") or domain or "general"),
                description=str(meta.get("description") or f"{service} tools imported from {location}."),
                source=SourceRef(kind=KIND, location=f"{location}#{service}"),
            )
        )
    if not result.specs and not result.quarantined:
        result.quarantined.append(QuarantinedSpec.from_error(KIND, location, "input holds no tools", data))
    return result
