"""Policies produce the next assistant message of an episode; the oracle follows the task's plan.

A policy is any object with a ``name`` and ``async next_message(messages, tools) -> dict`` that
returns one OpenAI assistant message (``tool_calls`` in OpenAI format, ``arguments`` as JSON
text). A *policy factory* ``(task, mode) -> Policy`` makes one policy per episode.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Generator
from typing import Any, Protocol

from compoworld_assets.engine.agents.interface import (
    CALL_TOOL,
    DESCRIBE_TOOL,
    LIST_SERVICES,
    LIST_TOOLS,
    SUBMIT_ANSWER,
    DiscoverMode,
)
from compoworld_assets.engine.tasks.model import PlanStep, Task
from compoworld_assets.engine.tasks.plan_exec import Unresolved, final_answer, resolve


class Policy(Protocol):
    name: str

    async def next_message(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
        """The next assistant message given the conversation so far."""


PolicyFactory = Callable[[Task, DiscoverMode], Policy]


def tool_call_message(call_id: str, name: str, arguments: dict[str, Any], content: str = "") -> dict[str, Any]:
    return tool_calls_message([(call_id, name, arguments)], content)


def tool_calls_message(calls: list[tuple[str, str, dict[str, Any]]], content: str = "") -> dict[str, Any]:
    """An assistant message making ``calls`` ((id, name, arguments) each) in order."""
    return {"role": "assistant", "content": content, "tool_calls": [
        {"id": call_id, "type": "function",
         "function": {"name": name, "arguments": json.dumps(arguments, sort_keys=True, ensure_ascii=False)}}
        for call_id, name, arguments in calls]}


def bound_arguments(step: PlanStep, results: list[dict[str, Any] | None]) -> dict[str, Any]:
    """A plan step's arguments read from the actual earlier results; unresolvable ones are left out."""
    arguments = {}
    for name, binding in sorted(step.args.items()):
        try:
            arguments[name] = resolve(binding, results)
        except Unresolved:
            continue
    return arguments


class OraclePolicy:
    """Follows the plan through the agent interface, one tool call per turn.

    In gateway mode it first lists the services, and lists a service's tools and describes a
    tool before first using them, as a real agent would. Arguments bound to earlier outputs
    are read from the results the world actually returned (as ``tasks.plan_exec`` does), and
    the submitted answer is the plan's final answer.
    """

    name = "oracle"

    def __init__(self, task: Task, mode: DiscoverMode) -> None:
        self.task = task
        self.mode = mode
        self._script = self._actions()
        self._turn = 0
        self._last_call_id: str | None = None

    async def next_message(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
        if self._last_call_id is None:
            name, arguments = next(self._script)
        else:
            name, arguments = self._script.send(_result_of(messages, self._last_call_id))
        self._turn += 1
        self._last_call_id = f"call_{self._turn}"
        return tool_call_message(self._last_call_id, name, arguments)

    def _actions(self) -> Generator[tuple[str, dict[str, Any]], dict[str, Any], None]:
        gateway = self.mode == "gateway"
        if gateway:
            yield LIST_SERVICES, {}
        listed: set[str] = set()
        described: set[str] = set()
        results: list[dict[str, Any] | None] = []
        for step in self.task.plan.steps:
            if gateway and step.service_id not in listed:
                listed.add(step.service_id)
                yield LIST_TOOLS, {"service": step.service_id}
            if gateway and step.qualified_name not in described:
                described.add(step.qualified_name)
                yield DESCRIBE_TOOL, {"tool": step.qualified_name}
            arguments = bound_arguments(step, results)
            if gateway:
                result = yield CALL_TOOL, {"tool_name": step.qualified_name, "arguments": arguments}
            else:
                result = yield step.qualified_name, arguments
            results.append(result)
        yield SUBMIT_ANSWER, {"answer": final_answer(self.task, results)}


def _result_of(messages: list[dict[str, Any]], call_id: str) -> dict[str, Any]:
    for message in reversed(messages):
        if message.get("role") == "tool" and message.get("tool_call_id") == call_id:
            try:
                return json.loads(message.get("content") or "{}")
            except json.JSONDecodeError:
                return {}
    return {}
