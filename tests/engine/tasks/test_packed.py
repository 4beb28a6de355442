"""Packed tasks and libraries: the same values back, stored, audited and generated from without a difference."""

import gc
import json
import pickle
import weakref

from compoworld_assets.engine import task_tables
from compoworld_assets.engine.canonical import content_hash
from compoworld_assets.engine.runtime.service_runtime import spec_hash
from compoworld_assets.engine.tasks.audit import audit_pool
from compoworld_assets.engine.tasks.goal import ambiguous_nouns
from compoworld_assets.engine.tasks.instantiate import specs_by_id
from compoworld_assets.engine.tasks.packed import PackedLibrary, PackedTask, TaskSpill
from compoworld_assets.engine.tasks.pipeline import (
    GenerationConfig,
    generate_packed_tasks,
    generate_tasks,
    packed_library,
    plan_round,
    tasks_from_plans,
)


def test_a_packed_task_unpacks_to_the_same_task_and_json(tiny_specs, tiny_built):
    tasks, _ = generate_tasks(tiny_specs, tiny_built, seed=3, n=8)
    assert tasks and any(s.tables for t in tasks for s in t.initial_state.services.values())
    spill = TaskSpill()
    for task in tasks:
        packed = PackedTask.pack(task)
        assert packed.unpack() == task
        assert packed.json() == task.model_dump_json()
        assert packed.head.initial_state.services == {}
        assert packed.head.model_copy(update={"initial_state": task.initial_state}) == task
        assert len(packed.data) < len(packed.json())
        moved = packed.updated(split="transfer")
        assert moved.head.split == moved.unpack().split == "transfer"
        assert moved.unpack().initial_state == task.initial_state
        spilled = spill.add(packed)
        assert not isinstance(spilled.data, bytes) and spilled.head == packed.head
        assert spilled.compressed == packed.data and spilled.unpack() == task
        assert pickle.loads(pickle.dumps(spilled)) == packed, "crosses processes with its bytes"
        assert spilled.task_hash == content_hash(json.loads(task.model_dump_json())) and packed.task_hash is None


def test_rows_of_spilled_tasks_take_the_hash_worked_out_when_spilled(tiny_specs, tiny_built, monkeypatch):
    """A round's task hashes are worked out as its tasks are spilled, not again when its rows are written."""
    tasks, _ = generate_tasks(tiny_specs, tiny_built, seed=3, n=4)
    spill = TaskSpill()
    spilled = [spill.add(PackedTask.pack(task)) for task in tasks]
    expected = task_tables.task_rows(tasks, "r1")
    monkeypatch.setattr(task_tables, "task_content_hash", _no_hashing)
    assert task_tables.task_rows(spilled, "r1").equals(expected)


def _no_hashing(text):
    raise AssertionError("hashed again")


def test_packed_and_unpacked_rounds_give_the_same_tables_and_audit(tiny_specs, tiny_built, pool):
    config = GenerationConfig(round_key="r7", transfer_services=(tiny_specs[-1].id,))
    packed, quarantined = generate_packed_tasks(tiny_specs, tiny_built, seed=3, n=12, config=config)
    tasks, same_quarantined = generate_tasks(tiny_specs, tiny_built, seed=3, n=12, config=config)
    assert same_quarantined == quarantined
    assert [p.unpack() for p in packed] == tasks and {t.round for t in tasks} == {"r7"}
    assert not any(isinstance(p.data, bytes) for p in packed if p.head.split != "transfer"), "spilled"
    moved = [p for p in packed if p.head.split == "transfer"]
    assert moved and all(p.unpack().split == "transfer" for p in moved)
    assert task_tables.task_rows(packed, "r7").equals(task_tables.task_rows(tasks, "r7"))
    assert audit_pool(packed, quarantined, tiny_built, pool) == audit_pool(tasks, quarantined, tiny_built, pool)


def test_a_packed_library_unpacks_services_on_use_and_keeps_only_the_recent_ones(tiny_built):
    nouns = ambiguous_nouns(specs_by_id(tiny_built))
    library = PackedLibrary.pack(tiny_built, nouns, keep=1)
    first, second = sorted(tiny_built)[:2]
    assert list(library) == list(tiny_built) and len(library) == len(tiny_built) and first in library
    assert library[first] == tiny_built[first]
    assert library[first] is library[first]  # kept while it is the most recent
    held = library[first]
    assert library[second] == tiny_built[second]
    again = library[first]
    assert again is not held and again == held  # dropped beyond keep, unpacked again
    assert spec_hash(again.spec) == tiny_built[first].spec.content_hash()  # the hash remembered for the new object
    specs = specs_by_id(library)
    assert dict(specs) == specs_by_id(tiny_built)
    assert ambiguous_nouns(specs) is nouns  # the library's own, not worked out again from every spec
    sent = pickle.dumps(library)
    assert pickle.dumps(pickle.loads(sent)) == sent  # only the packed services travel, never the unpacked ones
    assert pickle.loads(sent)[second] == tiny_built[second]


def test_a_round_planned_then_made_from_its_packed_library_holds_none_of_the_specs(tiny_specs, tiny_built):
    """The sampling step lets go of the specs and the graph between planning and making tasks (memory): nothing
    in the engine may keep them alive, and tasks made from the packed library are those of the one-call round."""
    built = {sid: service.model_copy(update={"spec": service.spec.model_copy(deep=True)})
             for sid, service in tiny_built.items()}
    specs = [built[s.id].spec for s in tiny_specs]
    alive = [weakref.ref(spec) for spec in specs]
    plans = plan_round(specs, built, seed=3, n=10)
    library = packed_library(built)
    assert ambiguous_nouns(specs_by_id(library)) == ambiguous_nouns(specs_by_id(tiny_built))
    del specs, built
    gc.collect()
    assert not any(ref() for ref in alive), "a spec outlived the round's planning"
    packed, quarantined = tasks_from_plans(plans, library, seed=3)
    same_packed, same_quarantined = generate_packed_tasks(tiny_specs, tiny_built, seed=3, n=10)
    assert [p.unpack() for p in packed] == [p.unpack() for p in same_packed]
    assert quarantined == same_quarantined


def test_specs_read_from_their_table_and_packed_libraries_carry_their_hashes(tiny_specs, tiny_built, monkeypatch):
    """Hashing a paper-scale library's specs took 2.2 s in every stage that mounts services and in each worker: the
    stored ``spec_hash`` is the hash, and a packed library hands its hashes to the processes that unpack it."""
    from compoworld_assets.engine import tables
    from compoworld_assets.engine.specs.model import ServiceSpec

    rows = tables.spec_rows(tiny_specs)
    sent = pickle.dumps(PackedLibrary.pack(tiny_built, frozenset()))

    def refuse(self):
        raise AssertionError("a spec dumped again to hash it")

    monkeypatch.setattr(ServiceSpec, "content_hash", refuse)
    read = tables.specs_from_rows(rows)
    assert {sid: spec_hash(spec) for sid, spec in read.items()} == dict(zip(rows["service_id"], rows["spec_hash"]))
    received = pickle.loads(sent)
    assert {sid: spec_hash(received[sid].spec) for sid in received} == {
        sid: h for sid, h in zip(rows["service_id"], rows["spec_hash"]) if sid in tiny_built}
