"""The reference system's published trajectory rows, both ways.

A row is one gateway episode as JSON: ``tools`` (the four meta-tools), ``messages`` (OpenAI chat messages; a tool
call's ``arguments`` is an object; replies are JSON text: ``{"services": [...]}`` from ``list_services``,
``{"service", "tools"}`` from ``list_tools``, ``{"name", "description", "parameters"}`` from ``describe_tool``, an
envelope from ``call_tool``), ``meta`` (:data:`PAPER_META` and more) and ``source``.

* **In.** The services a file of rows shows are rebuilt by the importer (:mod:`.specs.importers.trajectory_rows`);
  :func:`trajectory_from_row` makes a row a :class:`Trajectory` over them (its ``call_tool`` calls as calls of the
  rebuilt tools) that keeps the row's own messages, meta and source, and :func:`row_from_trajectory` writes it
  back: the same JSON.
* **Out.** :func:`paper_row` writes one of our exported samples (:mod:`.exports`) in the same shape: arguments
  as objects, the meta-tools' replies in the row's shapes, the row's meta keys. The importer reads it back.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from compoworld_assets.engine.specs.importers.naming import service_slug
from compoworld_assets.engine.specs.importers.trajectory_rows import (
    calls_of,
    decoded,
    seen_services,
    spec_tool_name,
    unwrapped,
)
from compoworld_assets.engine.specs.model import ServiceSpec
from compoworld_assets.engine.tasks.model import ToolCallRecord, Trajectory

PAPER_META = ("task_id", "rollout_idx", "rubric_score", "score", "net_score", "n_tool_calls", "n_real_tool_calls",
              "n_steps", "discover_mode", "finish_reason", "services", "domain", "capabilities")
_ROW = "paper_row"  # the Trajectory.meta key that keeps what a row holds beside its tools and messages


class RowError(ValueError):
    """A row that cannot be a trajectory over the services rebuilt from its file."""


def trajectory_from_row(row: Mapping[str, Any], specs: Mapping[str, ServiceSpec]) -> Trajectory:
    """The trajectory of a published row over ``specs`` (by id: the services the importer rebuilt from its file).

    Raises :class:`RowError` when the row calls a tool no ``list_tools`` reply of it names, or one whose rebuilt
    service is not in ``specs``."""
    if not isinstance(row.get("messages"), list):
        raise RowError("a row needs its messages")
    _, owner = seen_services([dict(row)])
    calls = []
    for name, arguments, reply in calls_of(dict(row)):
        if name != "call_tool" or not isinstance(arguments, dict):
            continue
        listed = arguments.get("tool_name")
        service = owner.get(listed) if isinstance(listed, str) else None
        if service is None:
            raise RowError(f"the row calls {listed!r}, which no list_tools reply of it names")
        spec = specs.get(service_slug(service))
        tool = spec_tool_name(service, listed)
        if spec is None or all(t.name != tool for t in spec.tools):
            raise RowError(f"{listed!r} of service {service!r} is not a tool of the rebuilt services")
        given = arguments.get("arguments")
        calls.append(ToolCallRecord(service_id=spec.id, tool=tool, arguments=given if isinstance(given, dict) else {},
                                    result=reply if isinstance(reply, dict) else {"success": False, "error": {
                                        "code": "unreadable", "message": str(reply)[:200]}}))
    meta = row.get("meta") if isinstance(row.get("meta"), dict) else {}
    kept = {key: value for key, value in row.items() if key not in ("tools", "messages")}
    return Trajectory(task_id=str(meta.get("task_id", "")), policy=str(row.get("source") or "unknown"),
                      rollout_idx=int(meta.get("rollout_idx") or 0), messages=list(row["messages"]),
                      tools=list(row.get("tools") or []), calls=calls,
                      finish_reason=str(meta.get("finish_reason") or "stop"), discover_mode="gateway",
                      meta={_ROW: kept})


def row_from_trajectory(trajectory: Trajectory) -> dict[str, Any]:
    """The published row a trajectory was read from (:func:`trajectory_from_row`), as it was."""
    if _ROW not in trajectory.meta:
        raise RowError(f"trajectory of task {trajectory.task_id!r} was not read from a published row")
    return {"tools": trajectory.tools, "messages": trajectory.messages, **trajectory.meta[_ROW]}


def paper_row(sample: Mapping[str, Any]) -> dict[str, Any]:
    """One of our exported samples (:func:`~compoworld_assets.engine.exports.sample_record`) as a published row."""
    meta = sample["meta"]
    row_meta = {key: meta[key] for key in PAPER_META if key in meta}
    row_meta["net_score"] = meta["rubric_score"] if meta.get("score") else 0.0  # what is left once the gate applies
    return {"tools": sample["tools"], "meta": {key: row_meta[key] for key in PAPER_META if key in row_meta},
            "source": f"compoworld/{meta.get('policy', 'unknown')}", "messages": _row_messages(sample["messages"])}


def _row_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Our messages with call arguments as objects and the meta-tools' replies in the published shapes."""
    asked: dict[str, tuple[str, Any]] = {}
    out = []
    for message in messages:
        message = dict(message)
        if message.get("tool_calls"):
            message["tool_calls"] = [_with_object_arguments(call) for call in message["tool_calls"]]
            for call in message["tool_calls"]:
                asked[call.get("id")] = (call["function"].get("name"), call["function"].get("arguments"))
        if message.get("role") == "tool" and message.get("tool_call_id") in asked:
            name, arguments = asked[message["tool_call_id"]]
            message.setdefault("name", name)
            message["content"] = _row_reply(name, arguments, decoded(message.get("content")), message.get("content"))
        out.append(message)
    return out


def _with_object_arguments(call: dict[str, Any]) -> dict[str, Any]:
    function = dict(call.get("function") or {})
    arguments = decoded(function.get("arguments"))
    function["arguments"] = arguments if isinstance(arguments, dict) else {}
    return {**call, "function": function}


def _row_reply(name: str, arguments: Any, reply: Any, text: Any) -> Any:
    """A meta-tool's reply in the published shape (errors and every other reply stay as they are)."""
    data = unwrapped(reply)
    if data is None or name not in ("list_services", "list_tools", "describe_tool"):
        return text
    if name == "list_services" and isinstance(data, list):
        data = {"services": [s.get("id") if isinstance(s, dict) else s for s in data]}
    elif name == "list_tools" and isinstance(data, list):
        data = {"service": (arguments or {}).get("service"), "tools": data}
    return json.dumps(data, ensure_ascii=False)
