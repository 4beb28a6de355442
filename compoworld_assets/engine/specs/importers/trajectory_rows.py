"""Importer for agent trajectories in gateway mode: the services an episode saw, rebuilt from its replies.

The reference system publishes its data as JSON lines, one episode a line: ``tools`` (the four gateway
meta-tools), ``messages`` (OpenAI chat messages; tool calls' arguments as objects or JSON text) and
``meta``. The services themselves are not published, but the episode shows them: a ``list_tools`` reply
names a service's tools with their descriptions (``{"service": s, "tools": [{name, description}]}``, or
our envelope around the list), a ``describe_tool`` reply gives one tool's parameter schema, and the
successful ``call_tool`` replies show the shape of what a tool returns. Every service seen in a file
becomes one service (tools merged across its episodes; returns inferred from the observed results with
genson), so the pipeline can build it and the episodes become trajectories over it
(:mod:`compoworld_assets.engine.paper_rows`). A row that is not a gateway episode is quarantined with
the reason; the others are read.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from genson import SchemaBuilder

from compoworld_assets.engine.deadline import check_deadline
from compoworld_assets.engine.specs.importers.naming import safe_tool_name, service_slug
from compoworld_assets.engine.specs.importers.openai_functions import import_openai_functions
from compoworld_assets.engine.specs.model import ImportResult, QuarantinedSpec

KIND = "trajectories"
META_TOOLS = frozenset({"list_services", "list_tools", "describe_tool", "call_tool"})
MAX_OBSERVED_RESULTS = 20  # results of one tool a returns schema is inferred from


@dataclass
class SeenTool:
    description: str = ""
    parameters: dict[str, Any] | None = None
    results: list[Any] = field(default_factory=list)


@dataclass
class SeenService:
    tools: dict[str, SeenTool] = field(default_factory=dict)
    domains: Counter[str] = field(default_factory=Counter)


def is_trajectory_rows(data: Any) -> bool:
    """Whether ``data`` (a JSON-lines file's documents, or one document) holds gateway episodes (a stray row among
    them is quarantined by the importer, not a reason to read the file as something else)."""
    rows = data if isinstance(data, list) else [data]
    return any(_is_episode(r) for r in rows)


def _is_episode(row: Any) -> bool:
    return isinstance(row, dict) and isinstance(row.get("messages"), list) and META_TOOLS <= set(tool_names(
        row.get("tools")))


def tool_names(tools: Any) -> list[str]:
    """The function names of an OpenAI ``tools`` list."""
    names = []
    for tool in tools if isinstance(tools, list) else []:
        function = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            names.append(function["name"])
    return names


def decoded(value: Any) -> Any:
    """A tool call's arguments or a tool message's content as JSON data (text that is not JSON stays text)."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


def unwrapped(reply: Any) -> Any:
    """A meta-tool reply without our envelope (``{"success": true, "data": ...}``); None for an error."""
    if isinstance(reply, dict) and isinstance(reply.get("success"), bool):
        return reply.get("data") if reply["success"] else None
    return reply


def calls_of(row: dict[str, Any]) -> list[tuple[str, Any, Any]]:
    """(function name, decoded arguments, decoded reply) of every tool call of a row that got a reply, in order."""
    asked: dict[str, tuple[str, Any]] = {}
    found = []
    for message in row.get("messages") or []:
        if not isinstance(message, dict):
            continue
        for call in message.get("tool_calls") or []:
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict) and isinstance(call.get("id"), str):
                asked[call["id"]] = (str(function.get("name")), decoded(function.get("arguments")))
        if message.get("role") == "tool" and isinstance(message.get("tool_call_id"), str) \
                and message["tool_call_id"] in asked:
            name, arguments = asked.pop(message["tool_call_id"])
            found.append((name, arguments, decoded(message.get("content"))))
    return found


def listed_tools(reply: Any) -> tuple[str | None, list[dict[str, Any]]]:
    """The service and tools a ``list_tools`` reply names (ours: the list alone, the service from the call)."""
    reply = unwrapped(reply)
    if isinstance(reply, dict) and isinstance(reply.get("tools"), list):
        return (reply.get("service") if isinstance(reply.get("service"), str) else None), reply["tools"]
    return None, reply if isinstance(reply, list) else []


def seen_services(rows: list[dict[str, Any]]) -> tuple[dict[str, SeenService], dict[str, str]]:
    """The services the rows' replies show, by name, and each listed tool name's service."""
    services: dict[str, SeenService] = {}
    owner: dict[str, str] = {}
    for row in rows:
        check_deadline()
        domain = (row.get("meta") or {}).get("domain") if isinstance(row.get("meta"), dict) else None
        calls = calls_of(row)
        for name, arguments, reply in calls:
            if name != "list_tools":
                continue
            service, tools = listed_tools(reply)
            service = service or (arguments.get("service") if isinstance(arguments, dict) else None)
            if not isinstance(service, str) or not service:
                continue
            seen = services.setdefault(service, SeenService())
            if isinstance(domain, str):
                seen.domains[domain] += 1
            for tool in tools:
                if isinstance(tool, dict) and isinstance(tool.get("name"), str):
                    seen.tools.setdefault(tool["name"], SeenTool()).description = str(tool.get("description") or "")
                    owner.setdefault(tool["name"], service)
        for name, arguments, reply in calls:
            if name == "describe_tool":
                described = unwrapped(reply)
                if isinstance(described, dict) and isinstance(described.get("name"), str) and described["name"] in owner:
                    tool = services[owner[described["name"]]].tools[described["name"]]
                    if isinstance(described.get("parameters"), dict):
                        tool.parameters = described["parameters"]
                    tool.description = tool.description or str(described.get("description") or "")
            elif name == "call_tool" and isinstance(arguments, dict) and isinstance(arguments.get("tool_name"), str) \
                    and arguments["tool_name"] in owner:
                tool = services[owner[arguments["tool_name"]]].tools[arguments["tool_name"]]
                if isinstance(reply, dict) and reply.get("success") is True and len(tool.results) < MAX_OBSERVED_RESULTS:
                    tool.results.append(reply.get("data"))
    return services, owner


def returns_schema(results: list[Any]) -> dict[str, Any]:
    """A JSON schema every observed result fits (genson), without the ``$schema`` keyword."""
    if not results:
        return {}
    builder = SchemaBuilder()
    for result in results:
        builder.add_object(result)
    schema = builder.to_schema()
    schema.pop("$schema", None)
    return schema


def spec_tool_name(service: str, listed: str) -> str:
    """The name a listed tool gets in its rebuilt service (a ``<service>_`` prefix is the service's own)."""
    return safe_tool_name(listed.removeprefix(f"{service}_").lstrip("_") or listed)


def import_trajectory_rows(data: Any, *, location: str, domain: str | None = None) -> ImportResult:
    """One service per service the episodes in ``data`` list; rows that are not gateway episodes are quarantined."""
    rows = data if isinstance(data, list) else [data]
    result = ImportResult()
    good = []
    for number, row in enumerate(rows, start=1):
        if _is_episode(row):
            good.append(row)
        else:
            result.quarantined.append(QuarantinedSpec.from_error(
                KIND, f"{location}#row={number}", "not a gateway episode: it needs messages and the four meta-tools "
                "(list_services, list_tools, describe_tool, call_tool)", row))
    services, _ = seen_services(good)
    for name, seen in sorted(services.items()):
        document = [{"name": spec_tool_name(name, listed),
                     "description": tool.description,
                     "parameters": tool.parameters or {"type": "object", "properties": {}},
                     **({"response": returns_schema(tool.results)} if tool.results else {})}
                    for listed, tool in sorted(seen.tools.items())]
        if not document:
            result.quarantined.append(QuarantinedSpec.from_error(
                KIND, f"{location}#service={name}", f"service {name!r} is listed with no tools", ""))
            continue
        imported = import_openai_functions(
            document, location=f"{location}#service={name}", service_id=service_slug(name), name=name,
            domain=domain or (seen.domains.most_common(1)[0][0] if seen.domains else None),
            description=f"The {name} service as episodes in {location} show it.", kind="openai")
        result.specs += imported.specs
        result.quarantined += imported.quarantined
    return result
