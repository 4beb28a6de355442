"""Jobs and backends that fail on purpose, for the worker tests: importable by name in worker processes
(pickled by reference)."""

from __future__ import annotations

import os
from dataclasses import dataclass

from compoworld_assets.engine.backends import BackendRecipe, BuildBackends
from compoworld_assets.engine.runtime.sandbox import trusted_executor
from compoworld_assets.engine.synthesis.offline import OfflineSynthesizer
from compoworld_assets.engine.tasks.instructions import TemplateWriter
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


def exit_on(job: int) -> int:
    """A job for ``run_isolated``: kills its process on 3, raises on 5, else squares."""
    if job == 3:
        os._exit(137)
    if job == 5:
        raise ValueError("five is refused")
    return job * job


def unpicklable_on_two(job: int) -> object:
    """A job for ``run_isolated`` whose result cannot cross back to the parent on 2."""
    return (lambda: job) if job == 2 else job


def start_nothing() -> None:
    """A worker initializer that sets nothing up."""


class FailingWriter(TemplateWriter):
    """Writes like the template writer, except for one plan: kills its process (``die``) or raises."""

    def __init__(self, victim: str, die: bool) -> None:
        self.victim, self.die = victim, die

    def write(self, task, specs):
        if task.plan.plan_hash() == self.victim:
            if self.die:
                os._exit(137)
            raise RuntimeError("the writer broke on this plan")
        return super().write(task, specs)


@dataclass(frozen=True)
class FailingWriterRecipe(BackendRecipe):
    victim: str = ""
    die: bool = True

    def instruction_writer(self) -> FailingWriter:
        return FailingWriter(self.victim, self.die)


_HELD: list[object] = []


def hold_scratch_root(root: str) -> None:
    """A worker initializer: where :func:`open_executor` puts its executors' scratch folders."""
    _HELD.append(root)


def open_executor(job: int) -> int:
    """Starts a sandboxed executor and keeps it open: the worker's exit must release it."""
    from pathlib import Path

    from compoworld_assets.engine.runtime.executor import SandboxLimits
    from compoworld_assets.engine.runtime.sandbox import SandboxedExecutor

    module = "def handle(state, tool, args):\n    return {}\n"
    _HELD.append(SandboxedExecutor(module, SandboxLimits(scratch_root=Path(str(_HELD[0]))), trusted=True))
    return job
