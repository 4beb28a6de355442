"""An independent audit of a finished task pool: the value validator run again on every kept task.

Instantiation already refuses draws the validator (:mod:`.consistency`) rejects; the audit replays
each kept task's gold plan on a fresh world and runs the validator on the calls, so a rule broken
after instantiation (a harmonized value, a world-model result) would show. It also sums up the
quarantine by validator rule and the shares a reader of the pool wants: per instruction style,
per difficulty level, and the gate pass share.
"""

from __future__ import annotations

import multiprocessing.util
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from compoworld_assets.engine.backends import BackendRecipe, LLMSettings
from compoworld_assets.engine.runtime.executor import SandboxLimits
from compoworld_assets.engine.runtime.service_runtime import RuntimePool
from compoworld_assets.engine.service_build import BuiltService
from compoworld_assets.engine.specs.model import ServiceSpec
from compoworld_assets.engine.tasks.consistency import check_task
from compoworld_assets.engine.tasks.gate import QuarantinedTask
from compoworld_assets.engine.tasks.goal import ambiguous_nouns
from compoworld_assets.engine.tasks.instantiate import INCONSISTENT, specs_by_id
from compoworld_assets.engine.tasks.model import Task
from compoworld_assets.engine.tasks.packed import PackedLibrary, PackedTask
from compoworld_assets.engine.tasks.pipeline import task_world, worker_backends
from compoworld_assets.engine.tasks.plan_exec import PlanExecutionError, execute_plan
from compoworld_assets.engine.workers import WorkerLost, run_isolated

_RULE = re.compile(re.escape(INCONSISTENT) + r"(\w+):")


@dataclass
class PoolAudit:
    n_tasks: int
    violations: list[str] = field(default_factory=list)
    """``task_id: rule: where: detail`` for every violation in the kept tasks (should be none)."""
    unreplayable: list[str] = field(default_factory=list)
    quarantined_by_rule: Counter[str] = field(default_factory=Counter)
    quarantined_by_stage: Counter[str] = field(default_factory=Counter)
    by_style: Counter[str] = field(default_factory=Counter)
    by_level: Counter[str] = field(default_factory=Counter)
    gate_pass_share: float = 0.0


def audit_pool(tasks: Iterable[Task | PackedTask], quarantined: Iterable[QuarantinedTask],
               built: Mapping[str, BuiltService], pool: RuntimePool | None = None, workers: int = 1,
               backends: BackendRecipe | None = None) -> PoolAudit:
    """Replay and validate every task of ``tasks`` (same world model as the pool's tasks ran on: ``pool``'s, else
    one ``backends`` makes, offline by default); packed tasks are unpacked one at a time.

    With ``workers`` > 1 the tasks are replayed in that many processes, each with a pool made by ``backends``
    and the library packed, as :func:`~.pipeline.generate_packed_tasks` makes tasks; the audit is the same for
    any number of workers. A task whose worker dies also when it runs alone counts as not replayable.
    """
    recipe = backends or BackendRecipe(LLMSettings(), SandboxLimits())
    if workers > 1:
        packed = [t if isinstance(t, PackedTask) else PackedTask.pack(t) for t in tasks]
        library = PackedLibrary.pack(built, ambiguous_nouns(specs_by_id(built)))
        outcomes = run_isolated(packed, _worker_audit, workers, _start_audit_worker,
                                (library, worker_backends(recipe, workers)))
        results = [_lost(p.task_id, o) if isinstance(o, WorkerLost) else o for p, o in zip(packed, outcomes, strict=True)]
    else:
        specs = specs_by_id(built)
        own_pool = pool is None
        pool = pool or recipe.runtime_pool()
        try:
            results = [_audit_task(t.unpack() if isinstance(t, PackedTask) else t, built, specs, pool) for t in tasks]
        finally:
            if own_pool:
                pool.close()
    audit = PoolAudit(n_tasks=len(results))
    for result in results:
        if result.unreplayable:
            audit.unreplayable.append(result.unreplayable)
            continue
        audit.violations += result.violations
        audit.by_style[result.style] += 1
        audit.by_level[result.level] += 1
    for entry in quarantined:
        audit.quarantined_by_stage[entry.stage] += 1
        found = _RULE.search(entry.reason)
        if found:
            audit.quarantined_by_rule[found.group(1)] += 1
    gated = audit.n_tasks + audit.quarantined_by_stage["gate"]
    audit.gate_pass_share = audit.n_tasks / gated if gated else 0.0
    return audit


@dataclass(frozen=True)
class _TaskAudit:
    """One task's audit: its violations, or why its gold plan no longer replays."""

    violations: list[str]
    unreplayable: str = ""
    style: str = ""
    level: str = ""


def _audit_task(task: Task, built: Mapping[str, BuiltService], specs: Mapping[str, ServiceSpec],
                pool: RuntimePool) -> _TaskAudit:
    try:
        calls, _, _ = execute_plan(task, task_world(task, built, pool))
    except PlanExecutionError as problem:
        return _TaskAudit([], unreplayable=f"{task.task_id}: {problem}")
    return _TaskAudit([f"{task.task_id}: {v}" for v in check_task(task, specs, calls)],
                      style=task.instruction_style, level=str(task.difficulty.get("level")))


def _lost(task_id: str, lost: WorkerLost) -> _TaskAudit:
    return _TaskAudit([], unreplayable=f"{task_id}: its worker was lost: {lost.error_type}: {lost.message}")


# One audit worker's library and runtime pool, set once when the worker starts.
_WORKER: dict[str, Any] = {}


def _start_audit_worker(library: PackedLibrary, backends: BackendRecipe) -> None:
    pool = backends.runtime_pool()
    multiprocessing.util.Finalize(pool, pool.close, exitpriority=10)  # worker processes skip atexit
    _WORKER.update(built=library, pool=pool)


def _worker_audit(packed: PackedTask) -> _TaskAudit:
    library = _WORKER["built"]
    return _audit_task(packed.unpack(), library, specs_by_id(library), _WORKER["pool"])


def audit_lines(audit: PoolAudit) -> list[str]:
    """The audit as report lines."""
    def shares(counts: Counter[str]) -> str:
        total = sum(counts.values()) or 1
        return ", ".join(f"{k} {v} ({v / total:.0%})" for k, v in sorted(counts.items())) or "none"

    lines = [f"kept tasks:                 {audit.n_tasks} (gate pass share {audit.gate_pass_share:.1%})",
             (f"  value violations (audit): {len(audit.violations)}; gold plans that no longer replay: "
              f"{len(audit.unreplayable)}"),
             f"  by instruction style:     {shares(audit.by_style)}",
             f"  by difficulty level:      {shares(audit.by_level)}",
             f"quarantined by stage:       {shares(audit.quarantined_by_stage)}",
             f"  by validator rule:        {shares(audit.quarantined_by_rule)}"]
    lines += [f"  violation: {v}" for v in audit.violations[:10]]
    return lines
