"""Running a task's plan on a world runtime, resolving bindings from the actual results.

The runtime is anything with ``reset(world_state)``, ``call(service_id, tool, args)`` (an
envelope) and ``world_state()``, i.e. :class:`~compoworld_assets.engine.runtime.service_runtime.WorldRuntime`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Protocol

from compoworld_assets.engine.runtime.state import WorldState
from compoworld_assets.engine.tasks.model import ArgBinding, Task, ToolCallRecord

_SEGMENT = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


class WorldRuntimeLike(Protocol):
    def reset(self, world: WorldState) -> None: ...

    def call(self, service_id: str, tool: str, args: dict[str, Any]) -> dict[str, Any]: ...

    def world_state(self) -> WorldState: ...


class PlanExecutionError(RuntimeError):
    """The gold plan could not run: a step failed or a binding had nothing to read."""


class Unresolved(LookupError):
    pass


@dataclass(frozen=True)
class Override:
    """Replace the value of one argument of one step (used to mutate the gold trajectory)."""

    step: int
    parameter: str
    value: Any


@dataclass(frozen=True)
class Checkpoint:
    """A run just before step ``step``: the world then and the results of the steps before it.

    Services are deterministic given their state, so a replay that changes nothing before ``step``
    may start here instead of from the initial world (the gate's mutations of later steps do).
    """

    step: int
    state: WorldState
    results: tuple[dict[str, Any] | None, ...]


def read_path(data: Any, path: str) -> Any:
    """The value at ``path`` (``id``, ``items[0].email``, ``$`` for the whole value) in ``data``."""
    if path in ("", "$"):
        return data
    value = data
    for name, index in _SEGMENT.findall(path):
        if name:
            if not isinstance(value, dict) or name not in value:
                raise Unresolved(f"no {name!r} in the result")
            value = value[name]
        else:
            if not isinstance(value, list) or int(index) >= len(value):
                raise Unresolved(f"no item {index} in the result")
            value = value[int(index)]
    if value is None:
        raise Unresolved(f"{path!r} is empty in the result")
    return value


def resolve(binding: ArgBinding, results: list[dict[str, Any] | None]) -> Any:
    """A binding's value given the results so far (``None`` for a skipped step)."""
    if binding.kind != "step_output":
        return binding.value
    if binding.step is None or binding.step >= len(results):
        raise Unresolved("binding refers to a later step")
    result = results[binding.step]
    if result is None or not result.get("success"):
        raise Unresolved(f"step {binding.step} has no successful result")
    return read_path(result["data"], binding.path or "$")


def execute_plan(task: Task, runtime: WorldRuntimeLike, checkpoints: list[Checkpoint] | None = None,
                 ) -> tuple[list[ToolCallRecord], WorldState, dict[str, Any]]:
    """Run the gold plan on ``runtime`` (reset to the task's initial world).

    Returns the calls, the final world state and the final answer (report field → value); with
    ``checkpoints``, appends a :class:`Checkpoint` before every step to it.
    Raises :class:`PlanExecutionError` when a step fails or a binding cannot be resolved.
    """
    return replay_plan(task, runtime, strict=True, checkpoints=checkpoints)


def replay_plan(task: Task, runtime: WorldRuntimeLike, *, skip: int | None = None,
                override: Override | None = None, strict: bool = False, start: Checkpoint | None = None,
                checkpoints: list[Checkpoint] | None = None,
                ) -> tuple[list[ToolCallRecord], WorldState, dict[str, Any]]:
    """Run the plan, optionally with one step skipped or one argument replaced.

    Without ``strict`` an argument that cannot be resolved is left out (the call then fails or
    does something else), as an agent that skipped the step producing it would have to. From
    ``start`` (a checkpoint of a run that agrees with this one before its step) only the steps from
    there run, and the calls returned are theirs; ``checkpoints`` collects one before every step run.
    """
    runtime.reset(task.initial_state if start is None else start.state)
    calls: list[ToolCallRecord] = []
    results: list[dict[str, Any] | None] = [] if start is None else list(start.results)
    for step in task.plan.steps[len(results):]:
        if checkpoints is not None:
            checkpoints.append(Checkpoint(step.index, runtime.world_state(), tuple(results)))
        if step.index == skip:
            results.append(None)
            continue
        args: dict[str, Any] = {}
        for name, binding in step.args.items():
            try:
                args[name] = resolve(binding, results)
            except Unresolved as exc:
                if strict:
                    raise PlanExecutionError(
                        f"step {step.index} ({step.qualified_name}) {name}: {exc}") from exc
        if override is not None and override.step == step.index:
            args[override.parameter] = override.value
        result = runtime.call(step.service_id, step.tool, args)
        if strict and not result.get("success"):
            message = result.get("error", {}).get("message", "")
            raise PlanExecutionError(f"step {step.index} ({step.qualified_name}) failed: {message}")
        calls.append(ToolCallRecord(service_id=step.service_id, tool=step.tool, arguments=args,
                                    result=result))
        results.append(result)
    return calls, runtime.world_state(), final_answer(task, results, strict=strict)


def final_answer(task: Task, results: list[dict[str, Any] | None], strict: bool = False) -> dict[str, Any]:
    answer: dict[str, Any] = {}
    for name in task.report_fields:
        source = task.report_sources.get(name)
        if source is None:
            continue
        try:
            answer[name] = resolve(source, results)
        except Unresolved as exc:
            if strict:
                raise PlanExecutionError(f"report field {name!r}: {exc}") from exc
    return answer
