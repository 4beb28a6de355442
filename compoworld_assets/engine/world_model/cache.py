"""Caching world-model simulations (result and state change) so that replays, in this process or a
later one, are identical."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Protocol

from compoworld_assets.engine.canonical import canonical_json
from compoworld_assets.engine.envelope import INTERNAL_ERROR
from compoworld_assets.engine.runtime.state import ServiceState
from compoworld_assets.engine.specs.model import ServiceSpec, ToolSpec
from compoworld_assets.engine.world_model.base import WorldModel, world_model_key
from compoworld_assets.engine.world_model.change import Simulation


class WorldModelCache(Protocol):
    def get(self, key: str) -> dict[str, Any] | None:
        """The stored simulation (result and state change, a fresh copy) or None."""

    def put(self, key: str, envelope: dict[str, Any]) -> None:
        """Store the simulation unless ``key`` is present already (the first answer wins)."""


class InMemoryWorldModelCache:
    def __init__(self) -> None:
        self._entries: dict[str, str] = {}

    def get(self, key: str) -> dict[str, Any] | None:
        text = self._entries.get(key)
        return None if text is None else json.loads(text)

    def put(self, key: str, envelope: dict[str, Any]) -> None:
        self._entries.setdefault(key, canonical_json(envelope))

    def __len__(self) -> int:
        return len(self._entries)


LOCK_TIMEOUT_S = 30.0


def _retried_when_locked(db: sqlite3.Connection, statement: str, timeout_s: float = LOCK_TIMEOUT_S) -> None:
    """Run ``statement``, again while the file is locked, for at most ``timeout_s``.

    Processes that open a new cache file at once (the build workers starting together) all switch it to
    WAL; two such switches can deadlock, and sqlite then answers one of them "database is locked" at once,
    without waiting out the busy timeout. That one backs off and tries again.
    """
    deadline = time.monotonic() + timeout_s
    delay = 0.01
    while True:
        try:
            db.execute(statement)
            return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or time.monotonic() + delay > deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.5)


class SqliteWorldModelCache:
    """A cache file shared by processes (sqlite handles the locking) and by the threads of one
    (rollouts run episodes concurrently): one connection, used under a lock.

    Each write is its own transaction, so another process sees it at once. In WAL mode with
    ``synchronous=NORMAL`` a commit does not wait for the disk (only checkpoints do): a process that
    dies loses nothing it committed, the file stays consistent, and only a power loss can drop the
    last writes, which are then simulated again (``benchmarks/world_model_cache.py``: ~5× the writes
    per second of sqlite's default ``FULL``).
    """

    def __init__(self, path: str | Path) -> None:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(path), timeout=LOCK_TIMEOUT_S, isolation_level=None,
                                   check_same_thread=False)
        _retried_when_locked(self._db, "PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")  # per connection; see the class doc
        _retried_when_locked(
            self._db, "CREATE TABLE IF NOT EXISTS world_model_cache (key TEXT PRIMARY KEY, envelope TEXT NOT NULL)"
        )

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._db.execute("SELECT envelope FROM world_model_cache WHERE key = ?", (key,)).fetchone()
        return None if row is None else json.loads(row[0])

    def put(self, key: str, envelope: dict[str, Any]) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR IGNORE INTO world_model_cache (key, envelope) VALUES (?, ?)",
                (key, canonical_json(envelope)),
            )

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM world_model_cache").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._db.close()


class CachedWorldModel:
    """Answers from ``cache`` when it can; stores every answer except transient internal errors."""

    def __init__(self, inner: WorldModel, cache: WorldModelCache) -> None:
        self.inner = inner
        self.cache = cache
        self.hits = 0
        self.misses = 0

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    def simulate(
        self, spec: ServiceSpec, tool: ToolSpec, args: dict[str, Any], state: ServiceState
    ) -> Simulation:
        key = world_model_key(spec, tool, args, state, self.inner.model_id)
        cached = self.cache.get(key)
        if cached is not None:
            try:
                simulation = Simulation.model_validate(cached)
            except ValueError:  # an entry of an older format: answered again
                simulation = None
            if simulation is not None:
                self.hits += 1
                return simulation
        self.misses += 1
        simulation = self.inner.simulate(spec, tool, args, state)
        result = simulation.result
        stored = simulation.model_dump(mode="json")
        if result["success"] or result["error"]["code"] != INTERNAL_ERROR:
            self.cache.put(key, stored)
        # Answered as a hit would be (keys in canonical order): the agent sees the result's JSON as written, so an
        # answer in the model's own key order made a cold cache's trajectories differ from a warm one's.
        return Simulation.model_validate(json.loads(canonical_json(stored)))
