"""End to end on the built-in library: graph → plans → tasks → gate (about a minute)."""

import time

import pytest

from compoworld_assets.engine.library import builtin_specs
from compoworld_assets.engine.service_build import BuiltService
from compoworld_assets.engine.synthesis.offline import OfflineSynthesizer
from compoworld_assets.engine.tasks.pipeline import generate_tasks


@pytest.mark.slow
def test_most_library_tasks_pass_the_gate():
    specs = builtin_specs()
    built = {}
    for spec in specs:
        module = OfflineSynthesizer().synthesize(spec)
        built[spec.id] = BuiltService(spec=spec, module=module,
                                      implementation={t: "code" for t in module.implemented_tools})
    start = time.perf_counter()
    tasks, quarantined = generate_tasks(specs, built, seed=21, n=230)
    elapsed = time.perf_counter() - start
    gated = len(tasks) + sum(q.stage == "gate" for q in quarantined)
    print(f"{len(tasks)} tasks, {len(quarantined)} quarantined, gate pass share {len(tasks) / gated:.3f}, "
          f"{elapsed:.1f}s")
    assert len(tasks) >= 200
    assert len(tasks) / gated >= 0.9 and len(tasks) / (len(tasks) + len(quarantined)) >= 0.9
    assert len({t.task_id for t in tasks}) == len(tasks)
    train_combos = {tuple(t.services) for t in tasks if t.split != "heldout"}
    heldout_combos = {tuple(t.services) for t in tasks if t.split == "heldout"}
    assert heldout_combos and not heldout_combos & train_combos
    assert all(len(t.services) >= 2 and 2 <= len(t.distractor_services) <= 4 for t in tasks)
