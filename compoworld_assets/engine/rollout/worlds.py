"""A world factory over built services: mounts the task's world, reusing service processes.

Each call leases a :class:`RuntimePool` (one per episode in flight, so concurrent episodes
never share a service process), mounts the task's services (needed, distractors and padding
up to ``mount_size``) and resets them to the task's initial state; services the task's state
does not cover start from their seed state. ``close()`` on the returned world hands the pool
back for the next episode. The lease goes to the free pool that already runs the most of the
task's services, so few processes start once the pools are warm, and a reset to a state a
process already holds (a padding service's seed state) sends nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any, Self

from compoworld_assets.engine.agents.world import DEFAULT_MOUNT_SIZE, services_to_mount
from compoworld_assets.engine.runtime.executor import SandboxLimits
from compoworld_assets.engine.runtime.service_runtime import (
    RuntimePool,
    ServiceMount,
    ServiceRuntime,
    WorldRuntime,
)
from compoworld_assets.engine.runtime.state import ServiceState, WorldState
from compoworld_assets.engine.service_build import BuiltService
from compoworld_assets.engine.tasks.model import Task
from compoworld_assets.engine.world_model.base import WorldModel

DEFAULT_LIMITS = SandboxLimits()


class LeasedWorld:
    """A :class:`WorldRuntime` on a leased pool; ``close()`` returns the pool."""

    def __init__(self, world: WorldRuntime, release: Callable[[], None]) -> None:
        self._world = world
        self._release: Callable[[], None] | None = release

    @property
    def service_ids(self) -> list[str]:
        return self._world.service_ids

    def service(self, service_id: str) -> ServiceRuntime:
        return self._world.service(service_id)

    def call(self, service_id: str, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        return self._world.call(service_id, tool, args)

    def world_state(self) -> WorldState:
        return self._world.world_state()

    def reset(self, world: WorldState) -> None:
        self._world.reset(world)

    def close(self) -> None:
        if self._release is not None:
            self._release()
            self._release = None


class PooledWorldFactory:
    """``factory(task) -> LeasedWorld``; call :meth:`close` at the end to stop every service process."""

    def __init__(self, built: Mapping[str, BuiltService], seed_states: Mapping[str, ServiceState] | None = None,
                 world_model: WorldModel | None = None, mount_size: int = DEFAULT_MOUNT_SIZE,
                 limits: SandboxLimits = DEFAULT_LIMITS) -> None:
        self.built = dict(built)
        self.seed_states = dict(seed_states or {})
        self.world_model = world_model
        self.mount_size = mount_size
        self.limits = limits
        self._mounts: dict[str, ServiceMount] = {}
        self._free: list[RuntimePool] = []
        self._all: list[RuntimePool] = []
        self._lock = threading.Lock()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def mounts(self, task: Task) -> list[str]:
        return services_to_mount(task, self.built, self.mount_size)

    def initial_world(self, task: Task, service_ids: list[str]) -> WorldState:
        states = {sid: self.seed_states[sid] for sid in service_ids if sid in self.seed_states}
        states.update({sid: state for sid, state in task.initial_state.services.items() if sid in service_ids})
        return WorldState(services=states)

    def __call__(self, task: Task) -> LeasedWorld:
        service_ids = self.mounts(task)
        missing = sorted(set(service_ids) - set(self.built))
        if missing:
            raise KeyError(f"task {task.task_id} needs services that were not built: {missing}")
        pool = self._lease(service_ids)
        mounts = [self._mount(sid) for sid in service_ids]
        try:
            world = pool.world(mounts, self.initial_world(task, service_ids),
                               standby=[sid for sid in service_ids if sid not in task.services])
        except BaseException:
            self._give_back(pool)
            raise
        return LeasedWorld(world, lambda: self._give_back(pool))

    def _mount(self, service_id: str) -> ServiceMount:
        """One mount object per service, so that pools work out its key once (``RuntimePool``)."""
        mount = self._mounts.get(service_id)
        return mount if mount is not None else self._mounts.setdefault(service_id, self.built[service_id].mount())

    def _lease(self, service_ids: list[str]) -> RuntimePool:
        with self._lock:
            if self._free:
                best = max(range(len(self._free)),
                           key=lambda i: len(self._free[i].service_ids.intersection(service_ids)))
                return self._free.pop(best)
            pool = RuntimePool(self.world_model, self.limits)
            self._all.append(pool)
            return pool

    def _give_back(self, pool: RuntimePool) -> None:
        with self._lock:
            self._free.append(pool)

    def close(self) -> None:
        with self._lock:
            for pool in self._all:
                pool.close()
            self._all.clear()
            self._free.clear()
