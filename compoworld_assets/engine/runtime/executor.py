"""The contract between the runtime and whatever executes a service's tools.

A synthesized service module is Python source that defines::

    def handle(state: dict, tool: str, args: dict) -> dict

``state`` is ``ServiceState.model_dump()`` (``{"service_id", "tables", "counters"}``), mutated
in place; the return value is an envelope (:mod:`compoworld_assets.engine.envelope`). It may
import only the standard library modules ``copy``, ``json``, ``re``, ``math``, ``datetime``.
Executors host such a module and keep the state between calls.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

from compoworld_assets.engine.runtime.state import ServiceState


@dataclass(frozen=True)
class SandboxLimits:
    """Per-service-process limits. ``scratch_root`` None means a fresh temporary directory.

    ``max_reply_mb`` bounds one reply frame (result plus state) in bytes and ``max_reply_items`` in
    JSON values (a few MB of ``{},`` decode into millions of objects). ``allow_unisolated`` is the
    explicit opt-in to run untrusted (LLM-written) modules where bubblewrap cannot isolate them.
    ``max_live_services`` caps the service runtimes (each a process when it runs code) one
    :class:`~compoworld_assets.engine.runtime.service_runtime.RuntimePool` keeps alive, and
    ``max_live_memory_mb`` their processes' resident memory together (None: no cap): a service with a large
    state takes hundreds of MB, so a cap by number alone lets a large library's pool grow to many GB.
    """

    cpu_seconds: int = 30
    memory_mb: int = 512
    call_timeout_s: float = 5.0
    scratch_root: Path | None = None
    max_reply_mb: int = 64
    max_reply_items: int = 1_000_000
    allow_unisolated: bool = False
    max_live_services: int = 64
    max_live_memory_mb: int | None = 2048

    def shared(self, parts: int) -> SandboxLimits:
        """These limits for each of ``parts`` runtime pools that share the caps on live service processes (task
        workers, concurrent episodes): each keeps its part of their number and memory, so together they follow
        the sandbox's settings whatever their number."""
        memory = None if self.max_live_memory_mb is None else max(1, self.max_live_memory_mb // parts)
        return replace(self, max_live_services=max(1, self.max_live_services // parts), max_live_memory_mb=memory)

    def __post_init__(self) -> None:
        if self.max_live_services < 1:
            raise ValueError(f"max_live_services must be at least 1, got {self.max_live_services}")
        if self.max_live_memory_mb is not None and self.max_live_memory_mb < 1:
            raise ValueError(f"max_live_memory_mb must be at least 1 or None, got {self.max_live_memory_mb}")


class ToolExecutor(Protocol):
    def reset(self, state: ServiceState) -> None:
        """Replace the hosted state."""

    def restore(self) -> None:
        """Go back to the state of the last :meth:`reset` (cheaper than resetting it again)."""

    @property
    def changed(self) -> bool:
        """Whether a call changed the hosted state since the last :meth:`reset` or :meth:`restore`."""

    def call(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        """Run one tool; always returns an envelope, never raises for tool failures."""

    def state(self) -> ServiceState:
        """The current hosted state (a copy)."""

    def close(self) -> None:
        """Release the process."""
