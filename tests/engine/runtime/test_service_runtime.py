from __future__ import annotations

import dataclasses

import pytest

from compoworld_assets.engine.runtime.executor import SandboxLimits
from compoworld_assets.engine.runtime.sandbox import SandboxLoadError
from compoworld_assets.engine.runtime.service_runtime import (
    RuntimePool,
    ServiceMount,
    ServiceRuntime,
    StateChangedInPlace,
)
from compoworld_assets.engine.runtime.state import ServiceState, WorldState
from compoworld_assets.engine.specs.model import (
    Effect,
    EntitySpec,
    FieldSpec,
    ServiceSpec,
    SourceRef,
    ToolSpec,
)
from compoworld_assets.engine.synthesis.base import SynthesizedModule
from compoworld_assets.engine.world_model import OfflineWorldModel

NOTE_REF = {"type": "string", "x-cw-type": "notes.Note.id"}
NOTES_SOURCE = """
def handle(state, tool, args):
    notes = state["tables"]["Note"]
    if tool == "create_note":
        if not isinstance(args.get("title"), str):
            error = {"code": "invalid_arguments", "message": "title must be a string"}
            return {"success": False, "error": error}
        state["counters"]["Note"] += 1
        note_id = "note_%04d" % state["counters"]["Note"]
        notes[note_id] = {"id": note_id, "title": args["title"]}
        return {"success": True, "data": notes[note_id]}
    if tool == "get_note":
        note = notes.get(args.get("note_id"))
        if note is None:
            return {"success": False, "error": {"code": "not_found", "message": "no such note"}}
        return {"success": True, "data": note}
    return {"success": False, "error": {"code": "unknown_tool", "message": tool}}
"""


def notes_spec(service_id: str = "notes") -> ServiceSpec:
    note = EntitySpec(name="Note", id_prefix="note", fields=[FieldSpec(name="title", json_type="string")])
    ref = {"type": "string", "x-cw-type": f"{service_id}.Note.id"}
    return ServiceSpec(
        id=service_id,
        name="Notes",
        domain="documents",
        description="Notes.",
        source=SourceRef(kind="builtin", location="tests"),
        entities=[note],
        tools=[
            ToolSpec(
                name="create_note",
                description="Create a note.",
                effect=Effect.CREATE,
                entity="Note",
                parameters={
                    "type": "object",
                    "properties": {"title": {"type": "string"}},
                    "required": ["title"],
                },
                returns=note.record_schema(service_id),
            ),
            ToolSpec(
                name="get_note",
                description="Read a note.",
                effect=Effect.READ,
                entity="Note",
                parameters={"type": "object", "properties": {"note_id": ref}, "required": ["note_id"]},
                returns=note.record_schema(service_id),
            ),
            ToolSpec(
                name="suggest_tags",
                description="Suggest tags for a note.",
                effect=Effect.ACTION,
                parameters={
                    "type": "object",
                    "properties": {"note_id": ref, "count": {"type": "integer", "minimum": 1}},
                    "required": ["note_id"],
                    "additionalProperties": False,
                },
                returns={
                    "type": "object",
                    "properties": {"note_id": ref, "tags": {"type": "array", "items": {"type": "string"}}},
                    "required": ["note_id", "tags"],
                },
            ),
        ],
    )


def notes_module(spec: ServiceSpec) -> SynthesizedModule:
    return SynthesizedModule(
        service_id=spec.id,
        service_version=spec.version,
        spec_hash=spec.content_hash(),
        synthesizer="offline",  # trusted, so the pool restores its processes in place between episodes
        synthesizer_version="1",
        source=NOTES_SOURCE,
        implemented_tools=["create_note", "get_note"],
        unimplemented_tools=["suggest_tags"],
    )


LIMITS = SandboxLimits(call_timeout_s=5.0)


@pytest.fixture
def runtime():
    spec = notes_spec()
    with ServiceRuntime(spec, notes_module(spec), None, OfflineWorldModel(), LIMITS) as rt:
        yield rt


def test_routes_code_and_world_model_tools(runtime):
    assert runtime.implementation == {
        "create_note": "code",
        "get_note": "code",
        "suggest_tags": "world_model",
    }
    created = runtime.call("create_note", {"title": "Plan"})
    assert created == {"success": True, "data": {"id": "note_0001", "title": "Plan"}}
    assert runtime.call("get_note", {"note_id": "note_0001"})["data"]["title"] == "Plan"
    tags = runtime.call("suggest_tags", {"note_id": "note_0001"})
    assert tags["success"] and tags["data"]["note_id"] == "note_0001"
    assert runtime.call("suggest_tags", {"note_id": "note_0404"})["error"]["code"] == "not_found"
    assert runtime.state().tables["Note"] == {"note_0001": {"id": "note_0001", "title": "Plan"}}


def notes_state(*titles: str) -> ServiceState:
    notes = {f"note_{i:04d}": {"id": f"note_{i:04d}", "title": t} for i, t in enumerate(titles, 1)}
    return ServiceState(service_id="notes", tables={"Note": notes}, counters={"Note": len(titles)})


def test_states_are_values_handed_back_until_a_call_changes_them(runtime):
    given = notes_state("Plan")
    runtime.reset(given)
    assert runtime.call("get_note", {"note_id": "note_0001"})["success"]
    assert runtime.state() is given  # a read changed nothing: no copy is read back
    version = runtime.executor.version
    runtime.reset(given)  # the runtime holds it: nothing is encoded or sent
    assert runtime.executor.version == version
    runtime.call("create_note", {"title": "Next"})
    after = runtime.state()
    assert after is not given and runtime.state() is after  # read back once, then held
    assert sorted(after.tables["Note"]) == ["note_0001", "note_0002"] and sorted(given.tables["Note"]) == ["note_0001"]
    runtime.reset(given)
    assert runtime.state() is given and runtime.call("get_note", {"note_id": "note_0002"})["error"]["code"] == "not_found"


def test_a_state_changed_in_place_is_caught_when_reused(runtime):
    given = notes_state("Plan")
    runtime.reset(given)
    given.tables["Note"]["note_0001"]["title"] = "Edited"
    with pytest.raises(StateChangedInPlace):
        runtime.state()
    with pytest.raises(StateChangedInPlace):
        runtime.reset(given)
    runtime.reset(notes_state("Plan").snapshot())  # the fix: a copy to change, a fresh value to give
    assert runtime.state().tables["Note"]["note_0001"]["title"] == "Plan"


@pytest.mark.parametrize(
    "args",
    [{}, {"note_id": 5}, {"note_id": "note_0001", "count": 0}, {"note_id": "note_0001", "colour": "red"}],
)
def test_world_model_arguments_are_validated(runtime, args):
    runtime.call("create_note", {"title": "Plan"})
    result = runtime.call("suggest_tags", args)
    assert result["error"]["code"] == "invalid_arguments"


def test_code_tools_validate_their_own_arguments(runtime):
    assert runtime.call("create_note", {"title": 3})["error"] == {
        "code": "invalid_arguments",
        "message": "title must be a string",
    }


def test_unknown_tool_and_bad_arguments(runtime):
    assert runtime.call("drop_tables", {})["error"]["code"] == "unknown_tool"
    assert runtime.call("get_note", ["note_0001"])["error"]["code"] == "invalid_arguments"


def test_reset_and_state(runtime):
    state = ServiceState(
        service_id="notes",
        tables={"Note": {"note_0009": {"id": "note_0009", "title": "Old"}}},
        counters={"Note": 9},
    )
    runtime.reset(state)
    assert runtime.state() == state
    assert runtime.call("create_note", {"title": "New"})["data"]["id"] == "note_0010"
    with pytest.raises(ValueError, match="given to runtime"):
        runtime.reset(ServiceState(service_id="mail"))


def test_world_model_only_service_needs_no_process():
    spec = notes_spec()
    module = notes_module(spec)
    rt = ServiceRuntime(
        spec, module, {"create_note": "world_model", "get_note": "world_model"}, OfflineWorldModel()
    )
    assert rt.executor is None
    created = rt.call("create_note", {"title": "Sim"})
    assert created["success"]
    # the simulated create stores the record, so the simulated read sees it
    [(note_id, note)] = rt.state().tables["Note"].items()
    assert note["title"] == "Sim" and created["data"]["id"] == note_id
    assert rt.call("get_note", {"note_id": note_id})["data"]["title"] == "Sim"
    with pytest.raises(ValueError, match="unknown tools"):
        ServiceRuntime(spec, module, {"nope": "code"}, OfflineWorldModel())
    with pytest.raises(ValueError, match="no world model"):
        ServiceRuntime(spec, module, None, None)


def test_pool_mounts_worlds_and_reuses_processes_across_episodes():
    mounts = [ServiceMount(notes_spec(sid), notes_module(notes_spec(sid))) for sid in ("notes", "wiki")]
    with RuntimePool(OfflineWorldModel(), LIMITS) as pool:
        first = pool.world(mounts)
        assert first.call("notes", "create_note", {"title": "A"})["success"]
        assert first.call("wiki", "create_note", {"title": "B"})["data"]["id"] == "note_0001"
        assert first.call("mail", "send", {})["error"]["code"] == "unknown_tool"
        world = first.world_state()
        assert sorted(world.services) == ["notes", "wiki"]
        assert world.services["wiki"].tables["Note"]["note_0001"]["title"] == "B"
        pids = {sid: first.service(sid).executor.pid for sid in first.service_ids}

        second = pool.world(mounts, WorldState(services={"notes": world.services["notes"]}))
        assert len(pool) == 2
        assert {sid: second.service(sid).executor.pid for sid in second.service_ids} == pids
        assert second.world_state().services["wiki"] == ServiceState.empty(mounts[1].spec)
        assert second.call("notes", "create_note", {"title": "C"})["data"]["id"] == "note_0002"
        second.reset(world)
        assert second.world_state() == world
        with pytest.raises(ValueError, match="not mounted"):
            second.reset(WorldState(services={"mail": ServiceState(service_id="mail")}))
        with pytest.raises(ValueError, match="mounted twice"):
            pool.world([mounts[0], mounts[0]])


def test_pool_starts_missing_services_side_by_side_and_keeps_them_when_one_fails():
    mounts = [ServiceMount(notes_spec(sid), notes_module(notes_spec(sid))) for sid in ("notes", "wiki", "docs")]
    broken_spec = notes_spec("broken")
    broken = ServiceMount(broken_spec, notes_module(broken_spec).model_copy(
        update={"source": "raise ValueError('bad module')\n"}))
    with RuntimePool(OfflineWorldModel(), LIMITS) as pool:
        with pytest.raises(SandboxLoadError, match="bad module"):
            pool.world([mounts[0], broken, mounts[1]])
        assert sorted(pool.service_ids) == ["notes", "wiki"]
        world = pool.world(mounts)
        assert len(pool) == 3
        pids = [world.service(sid).executor.pid for sid in world.service_ids]
        assert None not in pids and len(set(pids)) == 3
        assert [world.call(sid, "create_note", {"title": sid})["data"]["id"] for sid in world.service_ids] == [
            "note_0001"] * 3


def test_standby_services_start_no_process_until_called_and_fail_that_call_when_they_cannot_load():
    notes = ServiceMount(notes_spec("notes"), notes_module(notes_spec("notes")))
    wiki = ServiceMount(notes_spec("wiki"), notes_module(notes_spec("wiki")))
    broken_spec = notes_spec("broken")
    broken = ServiceMount(broken_spec, notes_module(broken_spec).model_copy(
        update={"source": "raise ValueError('bad module')\n"}))
    seeded = ServiceState(service_id="wiki", tables={"Note": {"note_0001": {"id": "note_0001", "title": "A"}}},
                          counters={"Note": 1})
    with RuntimePool(OfflineWorldModel(), LIMITS) as pool:
        world = pool.world([notes, wiki, broken], WorldState(services={"wiki": seeded}), standby=["wiki", "broken"])
        assert world.service("notes").executor.pid is not None
        assert world.service("wiki").executor.pid is None and world.service("broken").executor.pid is None
        assert world.world_state().services["wiki"] == seeded  # read without a process
        # the first call starts the process with the state installed
        assert world.call("wiki", "create_note", {"title": "B"})["data"]["id"] == "note_0002"
        assert world.service("wiki").executor.pid is not None
        failed = world.call("broken", "create_note", {"title": "C"})
        assert failed["error"]["code"] == "internal_error" and "could not be started" in failed["error"]["message"]
        assert "bad module" in failed["error"]["message"]
        world.reset(WorldState(services={"wiki": seeded}))  # a reset of a started lazy runtime installs the state
        assert world.call("wiki", "get_note", {"note_id": "note_0001"})["data"]["title"] == "A"
        assert world.world_state().services["wiki"] == seeded


def test_standby_runtimes_do_not_count_against_the_running_processes_cap():
    limits = dataclasses.replace(LIMITS, max_live_services=1)
    mounts = {sid: ServiceMount(notes_spec(sid), notes_module(notes_spec(sid))) for sid in ("a", "b", "c", "d")}
    with RuntimePool(OfflineWorldModel(), limits) as pool:
        first = pool.world([mounts["a"], mounts["b"]], standby=["b"])
        assert first.service("a").running and not first.service("b").running
        pool.world([mounts["c"]])  # one process at most: a's closes, b (standby, no process) stays
        assert pool.service_ids == {"b", "c"} and pool.evicted == 1
        pool.world([mounts["c"], mounts["d"]], standby=["d"])  # one standby runtime at most: b's goes
        assert pool.service_ids == {"c", "d"} and pool.evicted == 2


def test_pool_keeps_at_most_max_live_services_closing_the_least_recently_mounted():
    limits = dataclasses.replace(LIMITS, max_live_services=2)
    mounts = {sid: ServiceMount(notes_spec(sid), notes_module(notes_spec(sid))) for sid in ("a", "b", "c")}
    with RuntimePool(OfflineWorldModel(), limits) as pool:
        first = pool.world([mounts["a"], mounts["b"]])
        a_process = first.service("a").executor
        pool.world([mounts["a"]])  # a is now the most recently mounted
        b_process = first.service("b").executor
        third = pool.world([mounts["c"]])
        assert pool.service_ids == {"a", "c"} and pool.evicted == 1
        assert b_process.closed and not a_process.closed
        assert third.call("c", "create_note", {"title": "C"})["success"]
        # a world larger than the cap gets every service it mounts
        big = pool.world(list(mounts.values()))
        assert len(pool) == 3 and big.service("b").executor is not b_process
        assert big.call("b", "create_note", {"title": "B"})["data"]["id"] == "note_0001"
        pool.world([mounts["c"]])
        assert pool.service_ids == {"b", "c"}, "the next world brings the pool back under the cap"


def test_pool_under_a_memory_cap_closes_the_least_recently_mounted_while_their_processes_hold_more():
    mounts = {sid: ServiceMount(notes_spec(sid), notes_module(notes_spec(sid))) for sid in ("a", "b", "c", "d")}
    with RuntimePool(OfflineWorldModel(), LIMITS) as pool:
        sizes = [w.service(sid).resident_bytes() for sid in "ab" for w in [pool.world([mounts[sid]])]]
    assert all(size > 2**20 for size in sizes)  # a live interpreter holds some MB
    # room for about two of these processes, never for three
    limits = dataclasses.replace(LIMITS, max_live_memory_mb=(max(sizes) * 5 // 2) // 2**20)
    with RuntimePool(OfflineWorldModel(), limits) as pool:
        first = pool.world([mounts["a"], mounts["b"]])
        pool.world([mounts["a"]])  # a is now the most recently mounted
        b_process = first.service("b").executor
        # a and b are under the cap, but not with c's process about to start: b, least recently mounted, closes
        pool.world([mounts["c"]])
        assert pool.service_ids == {"a", "c"} and b_process.closed and pool.evicted == 1
        pool.world([mounts["b"]])  # and now a
        assert pool.service_ids == {"b", "c"} and pool.evicted == 2
        # the services a world mounts are never closed for it, whatever the cap
        big = pool.world(list(mounts.values()))
        assert len(pool) == 4 and big.call("b", "create_note", {"title": "B"})["success"]
    assert SandboxLimits(max_live_memory_mb=None).max_live_memory_mb is None
    with pytest.raises(ValueError, match="max_live_memory_mb"):
        SandboxLimits(max_live_memory_mb=0)


def test_pools_that_share_the_caps_each_keep_their_part():
    parts = dataclasses.replace(LIMITS, max_live_services=64, max_live_memory_mb=2048).shared(3)
    assert (parts.max_live_services, parts.max_live_memory_mb) == (21, 682)
    assert dataclasses.replace(LIMITS, max_live_services=1, max_live_memory_mb=None).shared(4).max_live_services == 1
    assert dataclasses.replace(LIMITS, max_live_memory_mb=None).shared(2).max_live_memory_mb is None
