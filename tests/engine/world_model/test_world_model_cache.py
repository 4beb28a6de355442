from __future__ import annotations

import json
import subprocess
import sys

import pytest

from compoworld_assets.engine.envelope import error
from compoworld_assets.engine.world_model import (
    CachedWorldModel,
    InMemoryWorldModelCache,
    LLMWorldModel,
    OfflineWorldModel,
    Simulation,
    SqliteWorldModelCache,
    world_model_key,
)


class CountingModel:
    """A world model that answers with a call counter, so cache hits are visible."""

    model_id = "counting/1"

    def __init__(self, answer=None):
        self.count = 0
        self.answer = answer

    def simulate(self, spec, tool, args, state):
        self.count += 1
        return Simulation(result=self.answer or {"success": True, "data": self.count})


def test_key_depends_on_every_input(spec, state):
    tool = spec.tool("suggest_agent")
    base = world_model_key(spec, tool, {"topic": "vpn"}, state, "m")
    assert base == world_model_key(spec, tool, {"topic": "vpn"}, state.snapshot(), "m")
    changed = state.snapshot()
    changed.tables["Agent"]["agent_0001"]["full_name"] = "Someone Else"
    others = [
        world_model_key(spec, tool, {"topic": "dns"}, state, "m"),
        world_model_key(spec, spec.tool("send_reply"), {"topic": "vpn"}, state, "m"),
        world_model_key(spec, tool, {"topic": "vpn"}, changed, "m"),
        world_model_key(spec, tool, {"topic": "vpn"}, state, "other"),
        world_model_key(spec.model_copy(update={"version": "2"}), tool, {"topic": "vpn"}, state, "m"),
    ]
    assert base not in others and len(set(others)) == len(others)


def test_a_miss_is_answered_as_the_hit_after_it_would_be(spec, state, tmp_path):
    """The agent sees a result's JSON as written: a cold cache's answer (the model's own key order) made its
    trajectories differ from a warm cache's."""
    answer = {"success": True, "data": {"zeta": 1, "alpha": {"y": [{"b": 2, "a": 1}], "x": 0}}}
    tool = spec.tool("suggest_agent")
    for cache in (InMemoryWorldModelCache(), SqliteWorldModelCache(tmp_path / "cache.sqlite")):
        model = CachedWorldModel(CountingModel(answer), cache)
        cold = model.simulate(spec, tool, {"topic": "vpn"}, state)
        warm = model.simulate(spec, tool, {"topic": "vpn"}, state)
        assert (model.hits, model.misses) == (1, 1)
        assert json.dumps(cold.result) == json.dumps(warm.result) == json.dumps(answer, sort_keys=True)


def test_memory_cache_hits_and_misses(spec, state):
    inner = CountingModel()
    model = CachedWorldModel(inner, InMemoryWorldModelCache())
    tool = spec.tool("suggest_agent")
    first = model.simulate(spec, tool, {"topic": "vpn"}, state)
    first.result["data"] = "mutated by the caller"
    assert model.simulate(spec, tool, {"topic": "vpn"}, state).result == {"success": True, "data": 1}
    assert model.simulate(spec, tool, {"topic": "dns"}, state).result == {"success": True, "data": 2}
    assert (model.hits, model.misses, inner.count) == (1, 2, 2)


def test_internal_errors_are_not_cached(spec, state):
    inner = CountingModel(error("internal_error", "model down"))
    model = CachedWorldModel(inner, InMemoryWorldModelCache())
    for _ in range(2):
        model.simulate(spec, spec.tool("suggest_agent"), {"topic": "vpn"}, state)
    assert inner.count == 2 and len(model.cache) == 0


def test_sqlite_cache_replays_across_instances(spec, state, tmp_path):
    path = tmp_path / "wm.sqlite"
    tool = spec.tool("send_reply")
    args = {"to": "zoe.xu@acme.example.com", "body": "Done"}
    writer = SqliteWorldModelCache(path)
    first = CachedWorldModel(CountingModel(), writer).simulate(spec, tool, args, state)
    writer.close()
    reader_inner = CountingModel()
    reader = CachedWorldModel(reader_inner, SqliteWorldModelCache(path))
    assert reader.simulate(spec, tool, args, state) == first
    assert (reader.hits, reader_inner.count) == (1, 0)


def test_sqlite_cache_replays_in_another_process(spec, state, tmp_path):
    path = tmp_path / "wm.sqlite"
    tool = spec.tool("suggest_agent")
    answer = {
        "data": {"agent_id": "agent_0001", "agent_email": "mei.sato@initech.example.com", "confidence": 0.5}
    }
    llm = LLMWorldModel("openai/gpt-4o-mini", completion_kwargs={"mock_response": json.dumps(answer)})
    first = CachedWorldModel(llm, SqliteWorldModelCache(path)).simulate(spec, tool, {"topic": "vpn"}, state)
    script = f"""
import json, sys
sys.path.insert(0, {str(__import__("pathlib").Path(__file__).parent)!r})
from conftest import helpdesk_spec, helpdesk_state
from compoworld_assets.engine.world_model import CachedWorldModel, LLMWorldModel, SqliteWorldModelCache
spec = helpdesk_spec()
llm = LLMWorldModel("openai/gpt-4o-mini", completion_kwargs={{"mock_response": "not json"}})
model = CachedWorldModel(llm, SqliteWorldModelCache({str(path)!r}))
print(json.dumps([model.simulate(spec, spec.tool("suggest_agent"), {{"topic": "vpn"}}, helpdesk_state())
                  .model_dump(mode="json"), model.hits]))
"""
    out = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=True,
        cwd=str(__import__("pathlib").Path(__file__).parents[3]),
    )
    assert json.loads(out.stdout) == [first.model_dump(mode="json"), 1]


def test_offline_model_through_the_cache_is_stable(spec, state, tmp_path):
    cache = SqliteWorldModelCache(tmp_path / "wm.sqlite")
    model = CachedWorldModel(OfflineWorldModel(), cache)
    tool = spec.tool("send_reply")
    args = {"to": "omar.ito@hooli.example.com", "body": "Done."}
    assert model.simulate(spec, tool, args, state) == OfflineWorldModel().simulate(spec, tool, args, state)
    assert model.simulate(spec, tool, args, state).result["data"]["to"] == "omar.ito@hooli.example.com"
    assert model.hits == 1


def test_sqlite_cache_serves_the_threads_of_concurrent_episodes(spec, state, tmp_path):
    """Rollouts run episodes in threads over one cache: every thread gets the same simulation."""
    from concurrent.futures import ThreadPoolExecutor

    model = CachedWorldModel(OfflineWorldModel(), SqliteWorldModelCache(tmp_path / "wm.sqlite"))
    tool = spec.tool("send_reply")
    model.simulate(spec, tool, {"to": "omar.ito@hooli.example.com", "body": "m"}, state)  # connection made here

    def ask(n: int):
        return model.simulate(spec, tool, {"to": "omar.ito@hooli.example.com", "body": f"m{n % 2}"}, state).result

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(ask, range(24)))
    assert all(r["success"] for r in results), [r for r in results if not r["success"]][:2]
    assert results[2] == results[4] == ask(2)


def test_a_cache_file_locked_while_it_is_opened_is_opened_once_the_lock_goes(tmp_path, monkeypatch):
    """Two processes switching a new file to WAL at once can deadlock; sqlite answers one "database is
    locked" at once, without waiting. That one tries again instead of failing its worker."""
    import sqlite3

    from compoworld_assets.engine.world_model import cache as cache_module

    refusals = {"left": 2}

    class OnceLocked:
        def __init__(self, db):
            self.db = db

        def execute(self, statement, *args):
            if statement.startswith("PRAGMA journal_mode") and refusals["left"]:
                refusals["left"] -= 1
                raise sqlite3.OperationalError("database is locked")
            return self.db.execute(statement, *args)

        def close(self):
            self.db.close()

    real_connect = sqlite3.connect
    monkeypatch.setattr(cache_module.sqlite3, "connect", lambda *a, **k: OnceLocked(real_connect(*a, **k)))
    cache = SqliteWorldModelCache(tmp_path / "wm.sqlite")
    cache.put("k", {"success": True})
    assert refusals["left"] == 0 and cache.get("k") == {"success": True}
    cache.close()
    refusals["left"] = 10**6  # locked for good: the error comes back once the time is up
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        cache_module._retried_when_locked(OnceLocked(real_connect(tmp_path / "wm.sqlite")),
                                          "PRAGMA journal_mode=WAL", timeout_s=0.05)
