"""Backends for the parallel-build tests, importable by name in worker processes (pickled by reference)."""

from __future__ import annotations

import os
from dataclasses import dataclass

from compoworld_assets.engine.backends import BuildBackends
from compoworld_assets.engine.runtime.sandbox import trusted_executor
from compoworld_assets.engine.synthesis.offline import OfflineSynthesizer
from compoworld_assets.engine.world_model.offline import OfflineWorldModel


class _DyingSynthesizer(OfflineSynthesizer):
    """Kills its own process on one service, as the kernel's OOM killer would."""

    def __init__(self, victim: str) -> None:
        super().__init__()
        self.victim = victim

    def synthesize(self, spec):
        if spec.id == self.victim:
            os._exit(137)
        return super().synthesize(spec)


@dataclass(frozen=True)
class DyingRecipe:
    victim: str

    def __call__(self) -> BuildBackends:
        return BuildBackends(_DyingSynthesizer(self.victim), trusted_executor, OfflineWorldModel())
