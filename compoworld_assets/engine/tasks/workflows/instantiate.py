"""A workflow draft made into a complete task: built, run once for its gold answer, checked for sane values.

The rubric gets, beside the builder's criteria, one answer criterion per reported value (the gold run's value)
and the collateral criterion (every change the gold run made, nothing else). The gate
(:func:`~compoworld_assets.engine.tasks.gate.self_test`) then runs on it as on every task.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from compoworld_assets.engine.specs.model import ServiceSpec
from compoworld_assets.engine.tasks.consistency import check_task
from compoworld_assets.engine.tasks.instantiate import (
    INCONSISTENT,
    TaskConfig,
    TaskGenerationError,
    distractor_services,
)
from compoworld_assets.engine.tasks.model import Criterion, Split, Task
from compoworld_assets.engine.tasks.plan_exec import WorldRuntimeLike, execute_plan
from compoworld_assets.engine.tasks.rubrics import collateral_criterion
from compoworld_assets.engine.tasks.workflows.build import Built, WorkflowDraft, build_task
from compoworld_assets.engine.tasks.workflows.patterns import PATTERNS

# Validator rules a workflow's own choices answer for: its messages are sent today by the person asking
# (a ``when`` slot), and its policy records and shaped cases are the world, not values the agent writes.
_PATTERNS = {p.name: p for p in PATTERNS}


def instantiate_workflow(draft: WorkflowDraft, specs: Mapping[str, ServiceSpec], seed: int, split: Split,
                         runtime_for: Callable[[Task], WorldRuntimeLike], config: TaskConfig) -> Task:
    """The complete task of ``draft``; raises :class:`TaskGenerationError` (a :class:`WorkflowError` where the
    world does not fit, with the validator's rule where a value is inconsistent) or
    :class:`~compoworld_assets.engine.tasks.plan_exec.PlanExecutionError` when the gold run fails."""
    distractors = distractor_services(draft.plan_hash(), draft.services, specs, seed, config)
    task, built = build_task(draft, specs, seed, split, runtime_for, config.rows_per_entity, config.today,
                             distractors)
    calls, final, answer = execute_plan(task, runtime_for(task))
    violations = check_task(task, specs, calls)
    if violations:
        raise TaskGenerationError(INCONSISTENT + "; ".join(str(v) for v in violations[:5]))
    words = {key: what for key, (_, what) in built.report.items()}
    answers = [Criterion(id=f"answer_{key}", kind="answer", description=f"reports {words[key]} (as {key})",
                         check={"op": "answer_equals", "field": key, "value": answer[key]})
               for key in task.report_fields]
    rubric = task.rubric[:len(built.criteria)] + answers + [collateral_criterion(task.initial_state, final)] + \
        task.rubric[len(built.criteria):]
    return task.model_copy(update={"rubric": rubric, "capabilities": _capabilities(draft, built),
                                   "difficulty": _difficulty(task, draft, built, specs)})


def _capabilities(draft: WorkflowDraft, built: Built) -> list[str]:
    found = set(_PATTERNS[draft.pattern].capabilities) | set(built.capabilities)
    if built.decisions:
        found.add("decision")
    return sorted(found)


def _difficulty(task: Task, draft: WorkflowDraft, built: Built, specs: Mapping[str, ServiceSpec]) -> dict:
    """Levels by the work, not the length: decisions, rules to consult, calls and services."""
    calls = len(task.plan.steps)
    services = len({s.service_id for s in task.plan.steps})
    writes = sum(specs[s.service_id].tool(s.tool).changes_state for s in task.plan.steps)
    if calls >= 10 and services >= 3 and built.decisions >= 2:
        level = "hard"
    elif built.rules == 0 and built.decisions <= 1 and calls <= 4:
        level = "easy"
    else:
        level = "medium"
    return {"level": level, "pattern": draft.pattern, "decisions": built.decisions, "rules": built.rules,
            "calls": calls, "services": services, "write_steps": writes, "length": calls,
            "traps": len(task.traps), "trap_kinds": sorted(t.kind for t in task.traps),
            "distractors": len(task.distractor_services), "instruction_style": task.instruction_style}
