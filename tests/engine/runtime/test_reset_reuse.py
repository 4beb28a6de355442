"""Resets to a state the sandbox child already holds: skipped or restored locally, never stale."""

from __future__ import annotations

import copy
import os
import random
import signal

import pytest

from compoworld_assets.engine.runtime.executor import SandboxLimits
from compoworld_assets.engine.runtime.sandbox import SandboxedExecutor
from compoworld_assets.engine.runtime.state import ServiceState

SOURCE = """
def ok(data):
    return {"success": True, "data": data}

def handle(state, tool, args):
    counters = state["counters"]
    items = state["tables"].setdefault("Item", {})
    if tool == "bump":
        counters["n"] = counters.get("n", 0) + 1
        return ok(counters["n"])
    if tool == "add":
        items[args["id"]] = {"id": args["id"], "n": counters.get("n", 0)}
        return ok(sorted(items))
    if tool == "peek":
        return ok([counters.get("n"), sorted(items)])
    counters["n"] = -1
    if tool == "fail":
        raise KeyError("boom")
    if tool == "not_envelope":
        return [1, 2]
    return ok("unknown")
"""


def reference_handle():
    namespace: dict = {}
    exec(compile(SOURCE, "<reference>", "exec"), namespace)  # noqa: S102 - the module under test
    return namespace["handle"]


def world(n: int, items: tuple[str, ...] = ()) -> ServiceState:
    return ServiceState(service_id="svc", tables={"Item": {i: {"id": i, "n": n} for i in items}},
                        counters={"n": n})


@pytest.fixture
def executor(tmp_path):
    """A trusted module's executor: resets restore in place (untrusted ones get a fresh process, below)."""
    with SandboxedExecutor(SOURCE, SandboxLimits(call_timeout_s=5.0, memory_mb=256, scratch_root=tmp_path),
                           service_id="svc", trusted=True) as ex:
        yield ex


def test_an_untrusted_module_gets_a_fresh_process_for_every_episode_that_follows_a_call(tmp_path):
    limits = SandboxLimits(call_timeout_s=5.0, memory_mb=256, scratch_root=tmp_path)
    with SandboxedExecutor(SOURCE, limits, service_id="svc") as untrusted:
        untrusted.reset(world(3))
        first = untrusted.pid
        untrusted.reset(world(3))
        assert untrusted.pid == first  # no call ran: nothing to undo
        assert untrusted.call("bump", {}) == {"success": True, "data": 4}
        untrusted.reset(world(3))
        assert untrusted.pid != first and untrusted.starts == 2
        assert untrusted.call("bump", {}) == {"success": True, "data": 4}


def count_exchanges(executor: SandboxedExecutor, monkeypatch) -> list[bytes]:
    sent: list[bytes] = []
    original = executor._exchange

    def counting(request: bytes, timeout_s: float):
        sent.append(request)
        return original(request, timeout_s)

    monkeypatch.setattr(executor, "_exchange", counting)
    return sent


def test_reset_to_the_held_state_sends_nothing(executor, monkeypatch):
    executor.reset(world(3, ("a",)))
    sent = count_exchanges(executor, monkeypatch)
    executor.reset(world(3, ("a",)))
    assert sent == []
    executor.call("peek", {})
    executor.reset(world(3, ("a",)))
    assert len(sent) == 1
    executor.reset(world(4))
    assert len(sent) == 2 and b'"op":"reset"' in sent[-1]


def test_reset_after_a_change_restores_with_the_next_call(executor, monkeypatch):
    executor.reset(world(3, ("a",)))
    assert executor.call("bump", {}) == {"success": True, "data": 4}
    sent = count_exchanges(executor, monkeypatch)
    executor.reset(world(3, ("a",)))
    assert sent == []
    assert executor.state() == world(3, ("a",))
    assert executor.call("peek", {}) == {"success": True, "data": [3, ["a"]]}
    assert len(sent) == 1 and b'"restore":true' in sent[0]
    assert executor.call("bump", {}) == {"success": True, "data": 4}
    assert b'"restore":false' in sent[-1]


def test_a_child_killed_before_a_pending_restore_comes_back_with_the_reset_state(executor):
    executor.reset(world(3))
    executor.call("bump", {})
    executor.reset(world(3))
    pid = executor.pid
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    assert executor.call("peek", {})["error"]["code"] == "resource_limit"
    assert executor.state() == world(3)
    assert executor.call("bump", {}) == {"success": True, "data": 4}
    assert executor.starts == 2


def test_restore_goes_back_to_the_last_reset_without_sending_it(executor, monkeypatch):
    executor.reset(world(3, ("a",)))
    assert not executor.changed
    executor.call("peek", {})
    assert not executor.changed  # a read leaves the state as it was
    executor.call("add", {"id": "b"})
    assert executor.changed
    sent = count_exchanges(executor, monkeypatch)
    executor.restore()
    assert sent == [] and not executor.changed
    assert executor.state() == world(3, ("a",))
    assert executor.call("fail", {})["success"] is False  # touches the restored copy, then raises
    assert not executor.changed
    assert executor.call("peek", {}) == {"success": True, "data": [3, ["a"]]}
    assert len(sent) == 2 and b'"restore":true' in sent[0]


def test_the_installed_copy_survives_calls_that_mutate_nested_records(executor):
    executor.reset(world(1, ("a", "b")))
    for _ in range(3):
        executor.call("add", {"id": "c"})
        executor.call("bump", {})
        executor.reset(world(1, ("a", "b")))
        assert executor.call("peek", {}) == {"success": True, "data": [1, ["a", "b"]]}


@pytest.mark.parametrize("seed", range(3))
def test_random_sessions_match_an_in_process_reference(executor, seed):
    """Every result and every state equal those of the module run in-process with plain resets."""
    rng = random.Random(seed)
    handle = reference_handle()
    states = [world(0), world(2, ("a",)), world(5, ("a", "b"))]
    installed = states[0].model_dump()
    reference = copy.deepcopy(installed)
    executor.reset(states[0])
    for step in range(160):
        draw = rng.random()
        if draw < 0.25:
            state = rng.choice(states)
            executor.reset(state)
            installed = state.model_dump()
            reference = copy.deepcopy(installed)
            continue
        if draw < 0.4:
            executor.restore()
            reference = copy.deepcopy(installed)
            assert not executor.changed
            continue
        tool = rng.choice(["bump", "bump", "add", "peek", "fail", "not_envelope"])
        args = {"id": f"i{rng.randrange(4)}"}
        before = copy.deepcopy(reference)
        try:
            expected = handle(reference, tool, args)
        except KeyError:
            expected = None
        if not isinstance(expected, dict):
            reference = before
        result = executor.call(tool, args)
        if isinstance(expected, dict):
            assert result == expected, (step, tool)
        else:
            assert result["success"] is False, (step, tool)
        assert executor.changed == (reference != installed), (step, tool)
        assert executor.state().model_dump() == reference, (step, tool)
        if rng.random() < 0.2:  # a second read parses the state again
            assert executor.state().model_dump() == reference, (step, tool)


def test_a_reset_to_the_state_the_last_reset_was_given_encodes_it_once(executor, monkeypatch):
    """The gate resets a service to the same checkpoint for every mutation of a step: the state is a value, so its
    JSON is written once, and the child, back at it after each mutation, is right each time."""
    from compoworld_assets.engine.runtime import sandbox

    encoded = []
    monkeypatch.setattr(sandbox._state_json, "_compute",
                        lambda state: encoded.append(state) or sandbox._encoded_state(state))
    checkpoint = world(3, ("a",))
    for item in ("b", "c"):
        executor.reset(checkpoint)
        assert executor.call("add", {"id": item})["data"] == ["a", item]
    executor.reset(world(3, ("a",)))  # an equal state, another object: encoded
    assert executor.call("peek", {})["data"] == [3, ["a"]]
    assert [state is checkpoint for state in encoded] == [True, False]


def test_a_state_object_is_encoded_once_for_every_executor_it_is_given_to(tmp_path, monkeypatch):
    """A service's seed state goes to every new runtime of the service (a paper-scale episode makes ~20): a state is
    a value, so its JSON is written once per object, and each child installs it."""
    from compoworld_assets.engine.runtime import sandbox

    encoded = []
    monkeypatch.setattr(sandbox._state_json, "_compute",
                        lambda state: encoded.append(state) or sandbox._encoded_state(state))
    seed = world(4, ("a",))
    limits = SandboxLimits(call_timeout_s=5.0, memory_mb=256, scratch_root=tmp_path)
    for item in ("b", "c"):
        with SandboxedExecutor(SOURCE, limits, service_id="svc", trusted=True) as fresh:
            fresh.reset(seed)
            assert fresh.call("add", {"id": item})["data"] == ["a", item]
    assert encoded == [seed]
    assert sandbox._encoded_state(seed) == sandbox._state_json(seed)
