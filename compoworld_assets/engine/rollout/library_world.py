"""Built-in services built offline, tasks sampled over them and a world factory: one recipe, one place.

The evaluation suite, the demo training data, the benchmark scripts and the tests that need a
small, real environment without the Dagster pipeline all start from :func:`build_library`,
so they build services, sample tasks and mount worlds exactly as the pipeline's engine does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from compoworld_assets.engine.library import builtin_spec
from compoworld_assets.engine.rollout.worlds import PooledWorldFactory
from compoworld_assets.engine.runtime.sandbox import trusted_executor
from compoworld_assets.engine.runtime.state import ServiceState
from compoworld_assets.engine.service_build import BuiltService, ServiceBuild, build_service
from compoworld_assets.engine.synthesis.offline import OfflineSynthesizer
from compoworld_assets.engine.tasks.gate import QuarantinedTask
from compoworld_assets.engine.tasks.model import Task
from compoworld_assets.engine.tasks.pipeline import GenerationConfig, generate_tasks
from compoworld_assets.engine.world_model.offline import OfflineWorldModel


@dataclass
class LibraryWorld:
    """Built services and the world model that serves their simulated tools."""

    builds: dict[str, ServiceBuild]
    world_model: OfflineWorldModel

    @property
    def built(self) -> dict[str, BuiltService]:
        return {sid: b.built() for sid, b in self.builds.items()}

    @property
    def seed_states(self) -> dict[str, ServiceState]:
        return {sid: b.seed_state for sid, b in self.builds.items()}

    def sample_tasks(self, n: int, seed: int, config: GenerationConfig | None = None, workers: int = 1,
                     ) -> tuple[list[Task], list[QuarantinedTask]]:
        """``n`` walks sampled with ``seed`` into gated tasks (and the plans that were quarantined), made in
        ``workers`` processes (the same tasks for any number)."""
        return generate_tasks([b.spec for b in self.builds.values()], self.built, seed=seed, n=n,
                              config=config or GenerationConfig(), workers=workers)

    def world_factory(self, mount_size: int | None = None) -> PooledWorldFactory:
        """A pooled factory over every built service (the caller closes it); mounts all of them by default."""
        size = len(self.builds) if mount_size is None else mount_size
        return PooledWorldFactory(self.built, self.seed_states, self.world_model, mount_size=size)


def build_library(service_ids: Sequence[str], *, seed: int = 1) -> LibraryWorld:
    """Build ``service_ids`` from the built-in library: offline synthesizer, sandboxed verification."""
    world_model = OfflineWorldModel()
    builds = {sid: build_service(builtin_spec(sid), OfflineSynthesizer(), trusted_executor, world_model, seed=seed)
              for sid in service_ids}
    return LibraryWorld(builds=builds, world_model=world_model)
