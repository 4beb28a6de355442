"""What the agent layer needs from a mounted world, and how a world is mounted for one task.

Any object with the methods of :class:`MountedWorld` works (the real one is
:class:`~compoworld_assets.engine.runtime.service_runtime.WorldRuntime`). A *world factory*
``(task) -> MountedWorld`` returns a world that already holds a fresh copy of the task's
initial state; the rollout engine and the verifier call ``close()`` on it when done, if it
has one.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from typing import Any, Protocol

from compoworld_assets.engine.runtime.state import WorldState
from compoworld_assets.engine.specs.model import ServiceSpec
from compoworld_assets.engine.synthesis.base import SynthesizedModule
from compoworld_assets.engine.tasks.model import Task

DEFAULT_MOUNT_SIZE = 15


class MountedService(Protocol):
    spec: ServiceSpec
    module: SynthesizedModule
    spec_hash: str  # ``spec.content_hash()``, computed once when the service is mounted, not per episode
    module_hash: str  # ``module.source_hash``, likewise


class MountedWorld(Protocol):
    @property
    def service_ids(self) -> list[str]: ...

    def service(self, service_id: str) -> MountedService: ...

    def call(self, service_id: str, tool: str, args: dict[str, Any]) -> dict[str, Any]: ...

    def world_state(self) -> WorldState: ...

    def reset(self, world: WorldState) -> None: ...


WorldFactory = Callable[[Task], MountedWorld]


def mounted_specs(world: MountedWorld) -> dict[str, ServiceSpec]:
    return {sid: world.service(sid).spec for sid in sorted(world.service_ids)}


def environment_versions(world: MountedWorld) -> dict[str, dict[str, str]]:
    """Per mounted service: spec version, spec hash and module source hash (what a replay depends on)."""
    versions = {}
    for sid in sorted(world.service_ids):
        service = world.service(sid)
        versions[sid] = {"version": service.spec.version, "spec_hash": service.spec_hash,
                         "module_hash": service.module_hash}
    return versions


def services_to_mount(task: Task, available: Iterable[str], mount_size: int = DEFAULT_MOUNT_SIZE) -> list[str]:
    """The task's needed and distractor services, padded from ``available`` to ``mount_size``.

    The padding is drawn with a generator seeded by the task id, so a task always mounts the same world.
    """
    chosen = sorted(set(task.services) | set(task.distractor_services))
    pool = sorted(set(available) - set(chosen))
    room = max(0, mount_size - len(chosen))
    padding = random.Random(f"mount:{task.task_id}").sample(pool, min(room, len(pool)))
    return sorted(chosen + padding)


def close_world(world: MountedWorld) -> None:
    close = getattr(world, "close", None)
    if callable(close):
        close()
