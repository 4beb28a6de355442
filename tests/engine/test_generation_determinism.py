"""Task generation is a pure function of its inputs, however the service processes are reused.

The golden digests were taken from ``generate_tasks(builtin specs, offline-synthesized modules,
seed=0, n=200)`` after walks drew the next service rather than the next tool (before: person lookups took
the role their records are seeded with, bridge walks, issue 11's world-drawn consistent values,
goal-stated instructions, traps, roles, difficulty), computed twice in a row with identical results; the
tasks' digest again when tasks recorded their walk's hash (``Task.walk_hash``: without that field the tasks
give the earlier digest, aaba6eff…); and again when a task's distractor services stopped being seeded with its
world (187 of the 189 tasks are the earlier ones without the distractors' states; two trapped tasks draw another
look-alike from the smaller world); and again when nine in ten plans became workflows (tasks.workflows: 180 of
them, all kept), walks whose tasks a person would not ask for were quarantined (tasks.realism.task_defects: 9
of the 20 walks) and walks started in the services no workflow uses; and again when seeded records took titles
that say what they are (library.titles), a sweep's passed date had to call for its move, statuses that record an
event (delivered, paid) were left to reconciliations, an approval stopped counting as a reconciliation's witness,
the writers' openers, frames and rule pointers varied, no pattern moved a record back or rejected one by rank, walks lost
the look-alike trap, a task's world seeded only the tables its steps reach, only a spend was cut by size and a
publication stopped counting as a reconciliation's witness (188 tasks, 12 quarantined, computed twice); and the tasks'
again when a sweep's line and an approval limit took the scale of the amounts the world holds and a yes-or-no
report named its key once (same counts, computed twice); and again when instructions stopped opening with the date
(the system prompt gives it) and asked for the values in words and as the JSON object to answer with, and again
when a priority pick ranked only work that moves on (no call-off, no closing by rank; same counts, computed twice),
and again when a request was laid out as a note (introduced or signed, `workflows/letter.py`) whose report is asked in
words only, the JSON form moving to the agent interface (same counts, computed twice), and again when orders gained
an order number and a delivered mark and a reconciliation's witness had to record the same kind of outcome as the
case's move (same counts, computed twice), and again when every sweep's call-off took cases not yet committed to
(same counts, computed twice), and again when a field naming who did something reads as that person ("the person who
booked room booking rbk_0001", not "the booked by of"; same counts, computed twice), and again when a fifth pattern
carried out requests for a set-up in another service (`fulfil`; drafts also preferring the least-used services in
all; 190 tasks, 10 quarantined, computed twice). A change to sampling, seeding, instructions or rubrics changes them on
purpose: rerun this file, check the new digests are stable, and update them.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from compoworld_assets.engine.backends import LLMSettings
from compoworld_assets.engine.library import builtin_specs
from compoworld_assets.engine.runtime.executor import SandboxLimits
from compoworld_assets.engine.runtime.mount_order import reuse_order
from compoworld_assets.engine.runtime.service_runtime import RuntimePool
from compoworld_assets.engine.service_build import BuiltService
from compoworld_assets.engine.synthesis.offline import OfflineSynthesizer
from compoworld_assets.engine.tasks.graph import built_services_graph
from compoworld_assets.engine.tasks.pipeline import GenerationConfig, generate_tasks
from compoworld_assets.engine.tasks.sampling import WalkConfig, sample_plans
from compoworld_assets.engine.world_model.offline import OfflineWorldModel

GOLDEN_TASKS = "85c7ea2430da1ac73dc2fad0a3c57adce5d44a7d6dc4a13726c4e75178442687"
GOLDEN_QUARANTINED = "58ddd2a242ac77a038b620b9aa9f633824397fc2a318170097b26e5c4797fb70"


def digest(models) -> str:
    return hashlib.sha256("\n".join(m.model_dump_json() for m in models).encode()).hexdigest()


@pytest.fixture(scope="module")
def library():
    specs = builtin_specs()
    built = {}
    for spec in specs:
        module = OfflineSynthesizer().synthesize(spec)
        built[spec.id] = BuiltService(spec=spec, module=module,
                                      implementation={t: "code" for t in module.implemented_tools})
    return specs, built


@pytest.mark.slow
def test_generation_matches_the_golden_digests(library):
    specs, built = library
    tasks, quarantined = generate_tasks(specs, built, seed=0, n=200)
    assert (len(tasks), len(quarantined)) == (190, 10)
    assert digest(tasks) == GOLDEN_TASKS
    assert digest(quarantined) == GOLDEN_QUARANTINED


def test_plans_become_tasks_in_an_order_that_reuses_their_services(library):
    """The order plans are made in (:func:`reuse_order`) keeps plans over the same services together (their
    processes are reused); the golden digests above show it changes no task."""
    specs, built = library
    plans = sample_plans(built_services_graph(built), specs, 0, 80, WalkConfig())
    order = reuse_order([plan.services for plan in plans], live=8)
    assert sorted(order) == list(range(len(plans)))
    keys = [tuple(sorted(set(plans[i].services))) for i in order]
    runs = [key for i, key in enumerate(keys) if i == 0 or keys[i - 1] != key]
    assert len(runs) < len(plans)  # plans over the same services come together


@pytest.mark.slow
def test_a_warm_pool_with_another_history_gives_the_same_tasks(library):
    """Children that served other worlds (and were left changed) must not leak into the next run."""
    specs, built = library
    fresh_tasks, fresh_quarantined = generate_tasks(specs, built, seed=0, n=60)
    with RuntimePool(world_model=OfflineWorldModel()) as pool:
        generate_tasks(specs, built, seed=5, n=40, pool=pool)
        warm_tasks, warm_quarantined = generate_tasks(specs, built, seed=0, n=60, pool=pool)
        again_tasks, _ = generate_tasks(specs, built, seed=0, n=60, pool=pool)
    assert fresh_tasks and digest(warm_tasks) == digest(fresh_tasks) == digest(again_tasks)
    assert [q.reason for q in warm_quarantined] == [q.reason for q in fresh_quarantined]
    assert digest(warm_quarantined) == digest(fresh_quarantined)


@pytest.mark.slow
def test_tasks_made_in_worker_processes_are_the_tasks_of_one_process(library):
    specs, built = library
    one_tasks, one_quarantined = generate_tasks(specs, built, seed=0, n=40)
    two_tasks, two_quarantined = generate_tasks(specs, built, seed=0, n=40, workers=2)
    assert one_tasks and digest(two_tasks) == digest(one_tasks)
    assert digest(two_quarantined) == digest(one_quarantined)


@pytest.mark.slow
def test_a_plan_that_breaks_its_task_is_quarantined_and_the_round_goes_on(library, monkeypatch):
    """A defect on one plan (an exception no rule foresaw, or a worker killed by it) costs that plan only."""
    monkeypatch.syspath_prepend(str(Path(__file__).parent))  # workers import the recipe's module by name
    from worker_faults import FailingWriter, FailingWriterRecipe

    specs, built = library
    walks = GenerationConfig(workflow_share=0.0)  # the writer breaks: walks are what it writes
    tasks, quarantined = generate_tasks(specs, built, seed=0, n=24, config=walks)
    victim = tasks[2]
    others = digest([t for t in tasks if t.task_id != victim.task_id])

    raised, raised_quarantined = generate_tasks(specs, built, seed=0, n=24, config=walks,
                                                writer=FailingWriter(victim.plan.plan_hash(), die=False))
    error = next(q for q in raised_quarantined if q.task_id == victim.task_id)
    assert error.stage == "error" and error.reason == "RuntimeError: the writer broke on this plan"
    assert digest(raised) == others

    recipe = FailingWriterRecipe(LLMSettings(), SandboxLimits(), victim=victim.plan.plan_hash(), die=True)
    survived, survived_quarantined = generate_tasks(specs, built, seed=0, n=24, config=walks, workers=2,
                                                    backends=recipe)
    lost = next(q for q in survived_quarantined if q.task_id == victim.task_id)
    assert lost.stage == "worker" and lost.reason.startswith("BrokenProcessPool")
    assert digest(survived) == others
    assert digest([q for q in survived_quarantined if q.task_id != victim.task_id]) == digest(quarantined)
