"""The agent interface: the OpenAI tools an agent sees for one task, and what calling them does.

Two discovery modes over one mounted world:

* ``gateway``: four meta tools. ``list_services()`` lists every mounted service,
  ``list_tools(service)`` its tools (qualified names and descriptions, no schemas),
  ``describe_tool(tool)`` one tool's parameter schema, and ``call_tool(tool_name, arguments)``
  runs it. Only a few mounted services are needed; the rest are distractors.
* ``direct``: every tool of the task's needed and distractor services is its own function tool.

Tool names are qualified ``<service>_<tool>``; parameter schemas are shown without ``x-cw-type``.
Every result is an envelope; an unknown service or tool is an ``unknown_tool`` error.

**The final answer.** In both modes the agent ends the episode by calling
``submit_answer(answer)`` with a JSON object holding the task's report fields (an empty object
when there is nothing to report). Policies, the rollout engine and the verifier all read the
answer from that call and nowhere else.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from compoworld_assets.engine.agents.world import MountedWorld, mounted_specs
from compoworld_assets.engine.envelope import INVALID_ARGUMENTS, UNKNOWN_TOOL, error, ok
from compoworld_assets.engine.identity_cache import WeakIdentityCache
from compoworld_assets.engine.specs.model import ServiceSpec, ToolSpec
from compoworld_assets.engine.tasks.model import Task, ToolCallRecord
from compoworld_assets.engine.types import TYPE_KEY

DiscoverMode = Literal["gateway", "direct"]

SUBMIT_ANSWER = "submit_answer"
LIST_SERVICES = "list_services"
LIST_TOOLS = "list_tools"
DESCRIBE_TOOL = "describe_tool"
CALL_TOOL = "call_tool"
GATEWAY_TOOLS = (LIST_SERVICES, LIST_TOOLS, DESCRIBE_TOOL, CALL_TOOL)


def function_tool(name: str, description: str, parameters: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "description": description, "parameters": parameters}}


def _object(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required}


SUBMIT_TOOL = function_tool(
    SUBMIT_ANSWER,
    "Finish the task. Call it exactly once, last, with an object holding the values the user asked you to "
    "report (an empty object when nothing is to be reported).",
    _object({"answer": {"type": "object", "description": "Report field name -> value."}}, ["answer"]),
)

GATEWAY_FUNCTION_TOOLS = [
    function_tool(LIST_SERVICES, "List the services you can use: id, name, domain and description.",
                  _object({}, [])),
    function_tool(LIST_TOOLS, "List one service's tools: qualified name and description.",
                  _object({"service": {"type": "string", "description": "A service id from list_services."}},
                          ["service"])),
    function_tool(DESCRIBE_TOOL, "Show one tool's full parameter schema.",
                  _object({"tool": {"type": "string", "description": "A qualified tool name from list_tools."}},
                          ["tool"])),
    function_tool(CALL_TOOL, "Run one tool with its arguments and return its result.",
                  _object({"tool_name": {"type": "string", "description": "A qualified tool name."},
                           "arguments": {"type": "object", "description": "The tool's arguments."}},
                          ["tool_name", "arguments"])),
]


def strip_types(schema: Any) -> Any:
    """A copy of a JSON schema without the ``x-cw-type`` keyword (agents see plain JSON schema)."""
    if isinstance(schema, dict):
        return {k: strip_types(v) for k, v in schema.items() if k != TYPE_KEY}
    if isinstance(schema, list):
        return [strip_types(v) for v in schema]
    return schema


@dataclass(frozen=True)
class ToolOutcome:
    """What one agent tool call produced: the envelope shown to the agent, and its side products."""

    result: dict[str, Any]
    record: ToolCallRecord | None = None
    answer: dict[str, Any] | None = None


class AgentInterface:
    """The tools of one episode and their execution against a mounted world."""

    def __init__(self, task: Task, world: MountedWorld, mode: DiscoverMode) -> None:
        self.task = task
        self.world = world
        self.mode = mode
        self.specs = mounted_specs(world)
        missing = sorted(set(task.services) - set(self.specs))
        if missing:
            raise ValueError(f"task {task.task_id}: needed services are not mounted: {missing}")
        visible = self.specs if mode == "gateway" else {
            sid: self.specs[sid] for sid in sorted(set(task.services) | set(task.distractor_services))
            if sid in self.specs}
        self.qualified = _qualified_names(visible)
        self.tools = (GATEWAY_FUNCTION_TOOLS if mode == "gateway" else [
            function_tool(name, self._tool_spec(name).description, strip_types(self._tool_spec(name).parameters))
            for name in self.qualified
        ]) + [SUBMIT_TOOL]

    def _tool_spec(self, qualified: str) -> ToolSpec:
        service_id, tool = self.qualified[qualified]
        return self.specs[service_id].tool(tool)

    def system_prompt(self) -> str:
        discovery = ("Discover what you need with list_services, list_tools and describe_tool, then run tools "
                     "with call_tool." if self.mode == "gateway" else "Call the tools directly.")
        return (
            f"Today is {self.task.today}. You are an assistant that completes the user's request by calling "
            f"tools. {discovery} Every tool returns {{\"success\": true, \"data\": ...}} or "
            "{\"success\": false, \"error\": {\"code\": ..., \"message\": ...}}; read errors and recover. "
            "Rules: use only values the user gave you or that tools returned, never invent ids; do not change "
            "anything the request does not ask for; follow the house rules. When you are done, call "
            f"{SUBMIT_ANSWER} once with the values the user asked you to report."
        )

    def user_prompt(self) -> str:
        parts = [self.task.instruction]
        if self.task.house_rules:
            parts.append("House rules:\n" + "\n".join(f"- {rule}" for rule in self.task.house_rules))
        if self.task.report_fields:
            parts.append(f"Give your answer to {SUBMIT_ANSWER} in this form: {self.task.answer_form()}")
        return "\n\n".join(parts)

    def initial_messages(self) -> list[dict[str, Any]]:
        return [{"role": "system", "content": self.system_prompt()},
                {"role": "user", "content": self.user_prompt()}]

    def execute(self, name: str, arguments: Any) -> ToolOutcome:
        """Run one agent tool call; ``arguments`` is the decoded object or the raw JSON text."""
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments) if arguments.strip() else {}
            except json.JSONDecodeError as exc:
                return ToolOutcome(error(INVALID_ARGUMENTS, f"arguments are not valid JSON: {exc}"))
        if not isinstance(arguments, dict):
            return ToolOutcome(error(INVALID_ARGUMENTS, "arguments must be a JSON object"))
        if name == SUBMIT_ANSWER:
            answer = arguments.get("answer")
            if not isinstance(answer, dict):
                return ToolOutcome(error(INVALID_ARGUMENTS, "submit_answer needs an object 'answer'"))
            return ToolOutcome(ok({"submitted": True}), answer=answer)
        if self.mode == "direct":
            return self._run(name, arguments)
        if name == LIST_SERVICES:
            return ToolOutcome(ok([{"id": s.id, "name": s.name, "domain": s.domain, "description": s.description}
                                   for s in self.specs.values()]))
        if name == LIST_TOOLS:
            return ToolOutcome(self._list_tools(arguments.get("service")))
        if name == DESCRIBE_TOOL:
            return ToolOutcome(self._describe(arguments.get("tool")))
        if name == CALL_TOOL:
            tool_args = arguments.get("arguments", {})
            if not isinstance(tool_args, dict):
                return ToolOutcome(error(INVALID_ARGUMENTS, "call_tool 'arguments' must be an object"))
            return self._run(arguments.get("tool_name"), tool_args)
        return ToolOutcome(error(UNKNOWN_TOOL, f"no tool {name!r}; use one of {list(GATEWAY_TOOLS)}"))

    def _list_tools(self, service: Any) -> dict[str, Any]:
        spec = self.specs.get(service) if isinstance(service, str) else None
        if spec is None:
            return error(UNKNOWN_TOOL, f"no service {service!r}; list_services shows the mounted ones")
        return ok([{"name": spec.qualified_tool_name(t.name), "description": t.description} for t in spec.tools])

    def _describe(self, tool: Any) -> dict[str, Any]:
        if tool not in self.qualified:
            return error(UNKNOWN_TOOL, f"no tool {tool!r}; list_tools shows a service's tools")
        spec = self._tool_spec(tool)
        return ok({"name": tool, "description": spec.description, "parameters": strip_types(spec.parameters)})

    def _run(self, qualified: Any, arguments: dict[str, Any]) -> ToolOutcome:
        if qualified not in self.qualified:
            return ToolOutcome(error(UNKNOWN_TOOL, f"no tool {qualified!r}"))
        service_id, tool = self.qualified[qualified]
        result = self.world.call(service_id, tool, arguments)
        return ToolOutcome(result, ToolCallRecord(service_id=service_id, tool=tool, arguments=arguments,
                                                  result=result))


def _qualified_names(specs: dict[str, ServiceSpec]) -> dict[str, tuple[str, str]]:
    names: dict[str, tuple[str, str]] = {}
    for sid, spec in specs.items():
        own = _spec_names(spec) if sid == spec.id else _names_of(spec, sid)
        if names.keys() & own.keys():
            name = next(name for name in own if name in names)
            raise ValueError(f"qualified tool name {name!r} is ambiguous: {names[name]} and {own[name]}")
        names.update(own)
    return names


def _names_of(spec: ServiceSpec, service_id: str) -> dict[str, tuple[str, str]]:
    """``spec``'s tools by the names agents see, as tools of ``service_id``."""
    names: dict[str, tuple[str, str]] = {}
    for tool in spec.tools:
        name = spec.qualified_tool_name(tool.name)
        if name in names:
            raise ValueError(f"qualified tool name {name!r} is ambiguous: {names[name]} and {(service_id, tool.name)}")
        names[name] = (service_id, tool.name)
    return names


# Once per spec object: a gateway episode names every mounted service's tools (15 services, hundreds of tools at
# paper scale: 3.8% of a rollout's interpreter time went to naming them again per episode).
_spec_names: WeakIdentityCache[ServiceSpec, dict[str, tuple[str, str]]] = WeakIdentityCache(
    lambda spec: _names_of(spec, spec.id))
