"""Instruction writers: what the user asks, given what they know, without the intermediate values.

Each task has an ``instruction_style``, a difficulty level of its own:

* ``goal`` (default): :class:`~compoworld_assets.engine.tasks.goal.GoalWriter` states the goal in
  terms of records and values the user knows; the agent finds the services, tools and order.
* ``explicit``: :class:`RecipeWriter`, one numbered sentence per plan step naming the service and
  the tool (as words), pointing to earlier steps for values the agent has to find.

:class:`TemplateWriter` is offline and deterministic and writes each task in its style.
:class:`LLMWriter` asks a model (through litellm, imported lazily) to rewrite that text naturally
and falls back to it when the rewrite drops a value the agent needs. A workflow task's request is written by
its pattern (:mod:`.workflows.build`); a writer's :meth:`revise` may rewrite it (:mod:`.rewrite`: refused,
with the reason recorded, when it drops, adds or reveals a value; cached so reruns read the same prose).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from compoworld_assets.engine.library.intents import entity_noun, intent_for
from compoworld_assets.engine.specs.model import ServiceSpec
from compoworld_assets.engine.tasks.goal import GoalWriter
from compoworld_assets.engine.tasks.model import ArgBinding, PlanStep, Task
from compoworld_assets.engine.tasks.rewrite import RequestRewriter

REWRITE_PROMPT = (
    "Rewrite the following task as a request a user would type to an assistant that can use business "
    "services. Keep every value exactly as written (you may drop the quotes), keep what has to be done "
    "and in which order, do not add new facts or values, do not name tools, and keep the last sentence "
    "about what to report with its JSON keys. Answer with the request only.\n\n{text}"
)


class InstructionWriter(Protocol):
    name: str

    def write(self, task: Task, specs: Mapping[str, ServiceSpec]) -> str:
        """The instruction for ``task`` (its plan, report fields and today's date are set)."""

    def revise(self, task: Task) -> Task:
        """A workflow task with its request rewritten, or as it is."""


def stated_values(task: Task) -> list[str]:
    """The literal values the instruction must contain: every user-known and constant argument."""
    found: list[str] = []
    for step in task.plan.steps:
        for binding in step.args.values():
            if binding.kind != "step_output":
                text = _literal(binding.value)
                if text not in found:
                    found.append(text)
    return found


class TemplateWriter:
    """Writes each task offline in its own style (goal or explicit)."""

    name = "template"

    def write(self, task: Task, specs: Mapping[str, ServiceSpec]) -> str:
        writer = RecipeWriter() if task.instruction_style == "explicit" else GoalWriter()
        return writer.write(task, specs)

    def revise(self, task: Task) -> Task:
        return task


class RecipeWriter:
    """The explicit style: the plan as numbered steps."""

    name = "explicit"

    def write(self, task: Task, specs: Mapping[str, ServiceSpec]) -> str:
        lines = ["Please do the following:"]
        lines += [_step_sentence(step, specs[step.service_id]) for step in task.plan.steps]
        if task.report_fields:
            lines.append("When you are done, report " + ", ".join(task.report_fields)
                         + " in your final answer as a JSON object with exactly these keys.")
        return "\n".join(lines)


class LLMWriter:
    """Rewrites the template instruction with a model.

    ``completion`` defaults to ``litellm.completion`` (imported on first use); ``completion_kwargs``
    go to it (``mock_response`` makes litellm answer offline).
    """

    name = "llm"

    def __init__(self, model: str, completion: Callable[..., Any] | None = None, cache: Any = None,
                 **completion_kwargs: Any) -> None:
        self.model = model
        self.completion = completion
        self.cache = cache
        self.completion_kwargs = completion_kwargs
        self.template = TemplateWriter()

    def _completion(self) -> Callable[..., Any]:
        if self.completion is None:
            import litellm

            self.completion = litellm.completion
        return self.completion

    def revise(self, task: Task) -> Task:
        return RequestRewriter(self.model, self._completion(), self.cache, **self.completion_kwargs).revise(task)

    def write(self, task: Task, specs: Mapping[str, ServiceSpec]) -> str:
        self._completion()
        text = self.template.write(task, specs)
        response = self.completion(
            model=self.model,
            messages=[{"role": "user", "content": REWRITE_PROMPT.format(text=text)}],
            temperature=0,
            **self.completion_kwargs,
        )
        rewritten = (response.choices[0].message.content or "").strip()
        if not rewritten or not keeps_values(rewritten, task):
            return text
        return rewritten


def keeps_values(text: str, task: Task) -> bool:
    """Whether ``text`` mentions every value the agent must be told (the report's keys are the agent
    interface's to state: :meth:`.Task.answer_form`)."""
    folded = text.casefold()
    return all(value.casefold() in folded for value in stated_values(task))


def _step_sentence(step: PlanStep, spec: ServiceSpec) -> str:
    tool = spec.tool(step.tool)
    action = intent_for(spec, tool).phrase(f"the {entity_noun(spec, tool.entity) if tool.entity else 'record'}")
    details = [_argument_phrase(name, binding) for name, binding in sorted(step.args.items())]
    suffix = f" with {'; '.join(details)}" if details else ""
    return f"{step.index + 1}. In {spec.name} ({spec.id}), {action}{suffix}."


def _argument_phrase(name: str, binding: ArgBinding) -> str:
    label = name.replace("_", " ")
    if binding.kind == "step_output":
        source = (binding.path or "result").replace("items[0].", "first result's ").replace("_", " ")
        return f"{label} = the {source} from step {(binding.step or 0) + 1}"
    return f'{label} "{_literal(binding.value)}"'


def _literal(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True)
