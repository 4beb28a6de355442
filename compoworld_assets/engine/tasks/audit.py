"""An independent audit of a finished task pool: the value validator run again on every kept task.

Instantiation already refuses draws the validator (:mod:`.consistency`) rejects; the audit replays
each kept task's gold plan on a fresh world and runs the validator on the calls, so a rule broken
after instantiation's check (a trap's changed world handing another record's value to a write, or a
world-model result that differs on replay) would show. It also sums up the
quarantine by validator rule and the shares a reader of the pool wants: per instruction style,
per difficulty level, and the gate pass share.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from compoworld_assets.engine.runtime.service_runtime import RuntimePool
from compoworld_assets.engine.service_build import BuiltService
from compoworld_assets.engine.tasks.consistency import check_task
from compoworld_assets.engine.tasks.gate import QuarantinedTask
from compoworld_assets.engine.tasks.instantiate import INCONSISTENT, simulated_tools, specs_by_id
from compoworld_assets.engine.tasks.model import Task
from compoworld_assets.engine.tasks.packed import PackedTask
from compoworld_assets.engine.tasks.pipeline import task_world
from compoworld_assets.engine.tasks.plan_exec import PlanExecutionError, execute_plan

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
               built: Mapping[str, BuiltService], pool: RuntimePool) -> PoolAudit:
    """Replay and validate every task of ``tasks`` on ``pool`` (same world model as the pool's tasks ran on);
    packed tasks are unpacked one at a time."""
    specs = specs_by_id(built)
    audit = PoolAudit(n_tasks=0)
    for item in tasks:
        task = item.unpack() if isinstance(item, PackedTask) else item
        audit.n_tasks += 1
        try:
            calls, _, answer = execute_plan(task, task_world(task, built, pool))
        except PlanExecutionError as problem:
            audit.unreplayable.append(f"{task.task_id}: {problem}")
            continue
        simulated = simulated_tools(task.plan, built)
        audit.violations += [f"{task.task_id}: {v}" for v in check_task(task, specs, calls, answer, simulated)]
        audit.by_style[task.instruction_style] += 1
        audit.by_level[str(task.difficulty.get("level"))] += 1
    for entry in quarantined:
        audit.quarantined_by_stage[entry.stage] += 1
        found = _RULE.search(entry.reason)
        if found:
            audit.quarantined_by_rule[found.group(1)] += 1
    gated = audit.n_tasks + audit.quarantined_by_stage["gate"]
    audit.gate_pass_share = audit.n_tasks / gated if gated else 0.0
    return audit


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
