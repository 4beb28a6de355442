"""Limits and isolation policy of the sandboxed processes that run synthesized tools."""


from collections.abc import Callable
from pathlib import Path

import dagster as dg
from pydantic import Field

from compoworld_assets.engine import backends
from compoworld_assets.engine.runtime.executor import SandboxLimits, ToolExecutor


class SandboxResource(dg.ConfigurableResource):
    cpu_seconds: int = 30
    memory_mb: int = 512
    call_timeout_s: float = 5.0
    scratch_root: str | None = None
    max_reply_mb: int = 64
    max_reply_items: int = 1_000_000
    allow_unisolated: bool = Field(
        default=False,
        description="Run LLM-written service modules even where bubblewrap cannot isolate them "
        "(seccomp and resource limits only). Off: such modules are refused with the reason.",
    )
    max_live_services: int = Field(
        default=64, ge=1,
        description="Service processes one runtime pool keeps alive; the least recently mounted are "
        "closed first (each is ~24 MB). A task round's worker processes, and the concurrent episodes of a "
        "round's rollouts (one pool each), share this many out between them.",
    )
    max_live_memory_mb: int | None = Field(
        default=2048, ge=1,
        description="Resident memory of the service processes one runtime pool keeps alive, together; the "
        "least recently mounted are closed first while it is above this (large services hold hundreds of MB). "
        "Shared out as max_live_services is. None: only max_live_services caps them.",
    )

    def limits(self) -> SandboxLimits:
        return SandboxLimits(
            cpu_seconds=self.cpu_seconds,
            memory_mb=self.memory_mb,
            call_timeout_s=self.call_timeout_s,
            scratch_root=Path(self.scratch_root) if self.scratch_root else None,
            max_reply_mb=self.max_reply_mb,
            max_reply_items=self.max_reply_items,
            allow_unisolated=self.allow_unisolated,
            max_live_services=self.max_live_services,
            max_live_memory_mb=self.max_live_memory_mb,
        )

    def executor_factory(self, *, trusted: bool) -> Callable[[str], ToolExecutor]:
        """Executors for modules of one origin (see :func:`compoworld_assets.engine.backends.executor_factory`)."""
        return backends.executor_factory(self.limits(), trusted=trusted)
