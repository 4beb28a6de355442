"""The data that flows through task generation, rollouts and verification.

Everything here is plain, serialisable data (no callables) so that tasks, rubrics and
trajectories can be stored in DuckDB, exported as JSON lines and replayed elsewhere.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, SerializerFunctionWrapHandler, model_serializer

from compoworld_assets.engine.canonical import content_hash
from compoworld_assets.engine.runtime.state import WorldState

# transfer: held-out tasks that need a service no train task uses (tasks.splits.separate_transfer).
Split = Literal["train", "rl", "heldout", "transfer"]
InstructionStyle = Literal["goal", "explicit"]


class ArgBinding(BaseModel):
    """Where one argument of a plan step comes from.

    ``step_output``: the value at ``path`` in the ``data`` of an earlier step's result
    (paths like ``id``, ``items[0].email``); ``user_known``: a value stated in the
    instruction (the user knows it); ``constant``: a literal chosen by the sampler.
    """

    kind: Literal["step_output", "user_known", "constant"]
    step: int | None = None
    path: str | None = None
    value: Any = None
    type: str | None = Field(default=None, description="Shared type carried by the binding, if any.")
    free: bool = False

    @model_serializer(mode="wrap")
    def _without_default_free(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Leave ``free`` out when false, so plans without free values dump (and hash) as before."""
        data = handler(self)
        if not self.free:
            data.pop("free", None)
        return data


class PlanStep(BaseModel):
    index: int
    service_id: str
    tool: str
    args: dict[str, ArgBinding]

    @property
    def qualified_name(self) -> str:
        return f"{self.service_id}_{self.tool}"


class Plan(BaseModel):
    """A walk over the dependency graph with every argument bound."""

    steps: list[PlanStep]

    @property
    def services(self) -> list[str]:
        return sorted({s.service_id for s in self.steps})

    def plan_hash(self) -> str:
        """Canonical hash of the tool chain and its bindings' shapes (not the seeded values)."""
        shape = [
            (s.service_id, s.tool, sorted((k, b.kind, b.step, b.path) for k, b in s.args.items()))
            for s in self.steps
        ]
        return content_hash(shape)


class Criterion(BaseModel):
    """One executable rubric criterion. ``check`` is declarative data evaluated by the rubric engine.

    kinds: ``state`` (a predicate on the final state for a state-changing step), ``answer``
    (a reported value), ``negative`` (traps and collateral damage: must NOT happen).
    """

    id: str
    kind: Literal["state", "answer", "negative"]
    description: str
    weight: float = 1.0
    check: dict[str, Any]


class CriterionResult(BaseModel):
    id: str
    passed: bool
    detail: str = ""


class Trap(BaseModel):
    """A house rule the obvious plan breaks, the negative criterion that catches it, and that plan."""

    kind: Literal["on_hold", "do_not_email", "threshold", "unmatched", "not_ready"]
    rule: str
    criterion_id: str
    wrong_plan: Plan = Field(description="A plausible wrong plan; the gate checks it fails the criterion.")


class Task(BaseModel):
    task_id: str
    seed: int
    round: str = "0"
    split: Split = "train"
    domain: str
    services: list[str] = Field(description="Services the plan needs.")
    distractor_services: list[str] = Field(
        default_factory=list, description="Services mounted beside the needed ones that the task does not need; "
        "they start at their built seed state, as the padding does.")
    initial_state: WorldState = Field(description="The seeded states of the needed services.")
    instruction: str
    instruction_style: InstructionStyle = Field(
        default="goal", description="goal: the user's goal in their words; explicit: the plan step by step.")
    house_rules: list[str] = Field(default_factory=list)
    traps: list[Trap] = Field(default_factory=list)
    report_fields: list[str] = Field(default_factory=list, description="Values to report at the end.")
    report_sources: dict[str, ArgBinding] = Field(
        default_factory=dict, description="Where each report field's value comes from in the plan's results.")
    plan: Plan
    rubric: list[Criterion]
    capabilities: list[str] = Field(default_factory=list)
    difficulty: dict[str, Any] = Field(default_factory=dict)
    today: str = "2026-06-01"
    walk_hash: str = Field(default="", description="Plan.plan_hash of the walk the task was made from.")

    @property
    def plan_hash(self) -> str:
        """The walk's plan hash (what the sampler deduplicates, so unique within a round). The task's own plan can
        differ from its walk: a threshold trap leaves a write out, and two walks can then share a gold plan."""
        return self.walk_hash or self.plan.plan_hash()

    def answer_form(self) -> str:
        """The JSON object the final answer takes, its keys in report order: ``true or false`` for a value the
        task fixes as a boolean, ``...`` for the rest. The agent interface states it, so that the instruction
        says in words only what to report."""
        def shape(key: str) -> str:
            source = self.report_sources.get(key)
            return "true or false" if source is not None and isinstance(source.value, bool) else "..."

        return "{" + ", ".join(f'"{key}": {shape(key)}' for key in self.report_fields) + "}"


class TaskRubric(BaseModel):
    """What the rubric table and its preview read of a task: a stored task parsed without its seeded world and
    plan (a quarter of the time a whole task takes to parse at paper scale)."""

    task_id: str
    split: Split = "train"
    services: list[str]
    instruction: str
    rubric: list[Criterion]


class ToolCallRecord(BaseModel):
    """One tool call an agent made and what it got back."""

    service_id: str
    tool: str
    arguments: dict[str, Any]
    result: dict[str, Any]


class Trajectory(BaseModel):
    """An episode: OpenAI-format messages plus the structured calls and the final answer."""

    task_id: str
    policy: str
    rollout_idx: int = 0
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] = Field(default_factory=list, description="OpenAI tools the agent saw.")
    calls: list[ToolCallRecord] = Field(default_factory=list)
    final_answer: dict[str, Any] = Field(default_factory=dict)
    final_state_hash: str = ""
    finish_reason: str = "stop"
    discover_mode: Literal["gateway", "direct"] = "gateway"
    meta: dict[str, Any] = Field(default_factory=dict)
