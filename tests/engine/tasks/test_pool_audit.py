"""The task-pool audit re-runs the value validator on kept tasks and sums the pool up."""

from compoworld_assets.engine.tasks.audit import audit_lines, audit_pool
from compoworld_assets.engine.tasks.pipeline import generate_tasks


def test_a_generated_pool_has_no_violations_and_a_tampered_task_shows_one(tiny_specs, tiny_built, pool):
    tasks, quarantined = generate_tasks(tiny_specs, tiny_built, seed=3, n=12)
    assert tasks
    clean = audit_pool(tasks, quarantined, tiny_built, pool)
    assert clean.violations == [] and clean.unreplayable == []
    assert sum(clean.by_style.values()) == sum(clean.by_level.values()) == len(tasks)
    assert 0 < clean.gate_pass_share <= 1
    assert any(line.startswith("kept tasks:") for line in audit_lines(clean))

    task = next(t for t in tasks if any(b.kind == "constant" and isinstance(b.value, str)
                                        for s in t.plan.steps for b in s.args.values()))
    step = next(s for s in task.plan.steps if any(b.kind == "constant" and isinstance(b.value, str)
                                                 for b in s.args.values()))
    name = next(n for n, b in step.args.items() if b.kind == "constant" and isinstance(b.value, str))
    emptied = step.model_copy(update={"args": {**step.args, name: step.args[name].model_copy(update={"value": ""})}})
    plan = task.plan.model_copy(update={"steps": [emptied if s.index == step.index else s for s in task.plan.steps]})
    tampered = audit_pool([task.model_copy(update={"plan": plan})], [], tiny_built, pool)
    assert any(": empty: " in v for v in tampered.violations), tampered
