"""Limits of the sandboxed processes that run synthesized tools."""


from collections.abc import Callable
from pathlib import Path

import dagster as dg

from compoworld_assets.engine.runtime.executor import SandboxLimits, ToolExecutor


class SandboxResource(dg.ConfigurableResource):
    cpu_seconds: int = 30
    memory_mb: int = 512
    call_timeout_s: float = 5.0
    scratch_root: str | None = None

    def limits(self) -> SandboxLimits:
        return SandboxLimits(
            cpu_seconds=self.cpu_seconds,
            memory_mb=self.memory_mb,
            call_timeout_s=self.call_timeout_s,
            scratch_root=Path(self.scratch_root) if self.scratch_root else None,
        )

    def executor_factory(self) -> Callable[[str], ToolExecutor]:
        from compoworld_assets.engine.runtime.sandbox import SandboxedExecutor

        limits = self.limits()
        return lambda source: SandboxedExecutor(source, limits)
