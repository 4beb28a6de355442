"""The verifier gate: a task's rubric must tell the gold behaviour from every cheap failure.

:func:`self_test` runs, on the task's runtime:

* a do-nothing agent (initial state, empty answer) and an agent that only claims success
  (placeholder answers, no calls): both must score 0;
* the gold plan replayed: must score 1;
* each trap's wrong plan (the obvious plan the house rule forbids): must fail the trap's criterion,
  so the trap is reachable;
* mutations of the gold trajectory: each step dropped (arguments that came from it go
  missing), and each argument of each step changed to another plausible value: every one
  whose outcome (final state and answer) differs from the gold outcome must fail at least
  one criterion.

Tasks that fail are quarantined with the reasons.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime, timedelta
from typing import Any, Literal

from pydantic import BaseModel, Field

from compoworld_assets.engine.canonical import canonical_json, plain_canonical_json
from compoworld_assets.engine.runtime.state import ServiceState, WorldState
from compoworld_assets.engine.tasks.model import ArgBinding, PlanStep, Task
from compoworld_assets.engine.tasks.plan_exec import (
    Checkpoint,
    Override,
    PlanExecutionError,
    WorldRuntimeLike,
    execute_plan,
    replay_plan,
)
from compoworld_assets.engine.tasks.rubrics import (
    POSITIVE_KINDS,
    evaluate_criterion,
    evaluate_rubric,
    rubric_score,
)
from compoworld_assets.engine.tasks.traps import falls_into
from compoworld_assets.engine.types import is_entity_ref, parse_entity_ref

PLACEHOLDER_ANSWER = "n/a"

# Where a plan was rejected: ``instantiate`` (it did not fit its world), ``gate`` (the self-test failed),
# ``error`` (an unexpected exception while making its task: a defect, recorded with its type) or ``worker``
# (the worker process making it died, also when it ran alone; see engine/workers.py).
TaskStage = Literal["instantiate", "gate", "error", "worker"]


class GateResult(BaseModel):
    passed: bool
    reasons: list[str] = Field(default_factory=list)
    scores: dict[str, float] = Field(default_factory=dict)


class QuarantinedTask(BaseModel):
    task_id: str
    plan_hash: str
    stage: TaskStage
    reason: str
    task: Task | None = None


def self_test(task: Task, runtime: WorldRuntimeLike, read_only: Callable[[PlanStep], bool] | None = None) -> GateResult:
    """The gate's verdict on ``task``. ``read_only`` says which steps' tools only read (by their specs' effects):
    with it, the steps that only read and whose results nothing reads are not mutated (:func:`_inert_steps`)."""
    reasons: list[str] = []
    scores: dict[str, float] = {}
    if not any(c.kind in POSITIVE_KINDS for c in task.rubric):
        reasons.append("rubric has no state or answer criterion")
    claims = {f: PLACEHOLDER_ANSWER for f in task.report_fields}
    for name, answer in (("do_nothing", {}), ("claim_only", claims)):
        results = evaluate_rubric(task, task.initial_state, answer)
        scores[name] = rubric_score(task, results)
        if scores[name] > 0:
            passing = [r.id for r in results if r.passed and _is_positive(task, r.id)]
            reasons.append(f"{name} scores {scores[name]:.2f} (passes {passing})")
    checkpoints: list[Checkpoint] = []
    try:
        calls, final, answer = execute_plan(task, runtime, checkpoints)
    except PlanExecutionError as exc:
        return GateResult(passed=False, reasons=reasons + [f"gold plan failed: {exc}"], scores=scores)
    gold_results = evaluate_rubric(task, final, answer)
    scores["gold"] = rubric_score(task, gold_results)
    if scores["gold"] < 1.0:
        failing = [f"{r.id}: {r.detail}" for r in gold_results if not r.passed]
        reasons.append(f"gold scores {scores['gold']:.2f} ({failing})")
    reasons += _unreachable_traps(task, runtime)
    gold_passes = all(r.passed for r in gold_results)
    inert = _inert_steps(task, read_only) if read_only is not None else set()
    survivors, total = _mutation_survivors(task, runtime, [c.arguments for c in calls], _Outcome(final, answer),
                                           gold_passes, checkpoints, inert)
    scores["mutations_caught"] = (total - len(survivors)) / total if total else 1.0
    reasons += [f"mutation not caught: {m}" for m in survivors]
    return GateResult(passed=not reasons, reasons=reasons, scores=scores)


def _inert_steps(task: Task, read_only: Callable[[PlanStep], bool]) -> set[int]:
    """Steps whose tool only reads and whose results no later argument and no report reads (a policy the agent
    looks up, a listing it checks): dropping or changing one leaves the final state and the answer as the gold run
    left them, so no outcome check could tell, and replaying it would only confirm that."""
    read = {b.step for step in task.plan.steps for b in step.args.values() if b.kind == "step_output"}
    read |= {b.step for b in task.report_sources.values() if b.kind == "step_output"}
    return {step.index for step in task.plan.steps if step.index not in read and read_only(step)}


def _unreachable_traps(task: Task, runtime: WorldRuntimeLike) -> list[str]:
    found = []
    for trap in task.traps:
        criterion = next((c for c in task.rubric if c.id == trap.criterion_id), None)
        if criterion is None:
            found.append(f"trap {trap.kind} has no criterion {trap.criterion_id!r}")
        elif not falls_into(task, criterion, trap, runtime):
            found.append(f"trap {trap.kind} is not reachable: its wrong plan passes {criterion.id}")
    return found


def _is_positive(task: Task, criterion_id: str) -> bool:
    return any(c.id == criterion_id and c.kind in POSITIVE_KINDS for c in task.rubric)


class _Outcome:
    """The gold run's final state and answer, compared with a replay's by their canonical JSON (what their
    content hashes digest). A service no step of the replay changed is the very object the gold run ended
    with (a runtime hands back the state it was reset with), and so is a table no step after the replay's
    checkpoint changed (a state built from a child's changed tables shares the others), so only the tables a
    replay changed are serialised, and the gold run's once."""

    def __init__(self, final: WorldState, answer: dict[str, Any]) -> None:
        self.final = final
        self.answer = canonical_json(answer)
        self._json: dict[tuple[str, ...], str | None] = {}

    def same(self, final: WorldState, answer: dict[str, Any]) -> bool:
        if canonical_json(answer) != self.answer or final.services.keys() != self.final.services.keys():
            return False
        return all(state is self.final.services[service_id] or self._same_state(state, self.final.services[service_id])
                   for service_id, state in final.services.items())

    def _same_state(self, state: ServiceState, gold: ServiceState) -> bool:
        """Whether the two states' canonical JSON are equal, table by table (equal parts make an equal whole: the
        canonical JSON of a state is that of its id, counters and tables, keys sorted); the whole states' JSON
        when a part is not plain JSON data (``ServiceState.canonical_json`` dumps such a state first)."""
        if state.service_id != gold.service_id or state.tables.keys() != gold.tables.keys():
            return False
        parts = [(("counters",), state.counters, gold.counters)] + [
            (("tables", entity), table, gold.tables[entity]) for entity, table in state.tables.items()
            if table is not gold.tables[entity]]
        for key, mine, theirs in parts:
            key = (gold.service_id, *key)
            if key not in self._json:
                self._json[key] = plain_canonical_json(theirs)
            text = plain_canonical_json(mine)
            if text is None or self._json[key] is None:
                return state.canonical_json() == gold.canonical_json()
            if text != self._json[key]:
                return False
        return True


def _mutation_survivors(task: Task, runtime: WorldRuntimeLike, gold_args: list[dict[str, Any]],
                        gold_outcome: _Outcome, gold_passes: bool, checkpoints: list[Checkpoint],
                        inert: frozenset[int] | set[int] = frozenset()) -> tuple[list[str], int]:
    """Mutations whose outcome differs from the gold one yet pass every criterion, and how many were tried.

    A mutation of step k replays from the gold run's checkpoint before step k: the steps before it
    are the gold ones, so their calls are not run again.

    A mutation that ends in the gold final state with the gold answer (a later step overwrites
    the changed value) cannot be told apart by any outcome check, so it is not counted. Criteria
    are pure functions of the outcome, so when the gold run passes them all, a mutation that
    fails one has an outcome of its own: only mutations that pass every criterion are hashed.
    """
    survivors: list[str] = []
    total = 0
    before = {checkpoint.step: checkpoint for checkpoint in checkpoints}
    mutations: list[tuple[str, int, int | None, Override | None]] = []
    for step in (s for s in task.plan.steps if s.index not in inert):
        mutations.append((f"drop step {step.index} ({step.qualified_name})", step.index, step.index, None))
        for name, binding in sorted(step.args.items()):
            if binding.free:  # the agent's own words: any value is as good as the gold one
                continue
            changed = mutated_value(gold_args[step.index].get(name), binding, task)
            mutations.append((f"step {step.index} ({step.qualified_name}) {name}={changed!r}", step.index, None,
                              Override(step.index, name, changed)))
    for label, at, skip, override in mutations:
        _, final, answer = replay_plan(task, runtime, skip=skip, override=override, start=before[at])
        passes = _passes_every_criterion(task, final, answer)
        if (passes or not gold_passes) and gold_outcome.same(final, answer):
            continue
        total += 1
        if passes:
            survivors.append(label)
    return survivors, total


def _passes_every_criterion(task: Task, final: WorldState, answer: dict[str, Any]) -> bool:
    """Whether every criterion passes, evaluated in rubric order up to the first that fails."""
    return all(evaluate_criterion(c, task.initial_state, final, answer).passed for c in task.rubric)


def mutated_value(value: Any, binding: ArgBinding, task: Task) -> Any:
    """A different value of the same kind: another existing record id, a shifted date, an altered text."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        return round(value + 1.5, 2)
    if not isinstance(value, str):
        return PLACEHOLDER_ANSWER
    if binding.type and is_entity_ref(binding.type):
        service_id, entity = parse_entity_ref(binding.type)
        service = task.initial_state.services.get(service_id)
        others = sorted(set(service.tables.get(entity, {})) - {value}) if service else []
        return others[0] if others else f"{value}_other"
    if binding.type == "email" and "@" in value:
        return "other." + value
    shifted = _shifted_time(value)
    return shifted if shifted is not None else value + " (revised)"


def _shifted_time(value: str) -> str | None:
    try:
        if len(value) == 10:
            return (date.fromisoformat(value) + timedelta(days=1)).isoformat()
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    return (moment + timedelta(hours=1)).isoformat().replace("+00:00", "Z")
