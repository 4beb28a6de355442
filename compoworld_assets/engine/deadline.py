"""Cooperative time limits for per-spec and per-service work.

Importers and builds run where Dagster runs the step: in the CLI's process (in-process executor)
or in a step subprocess (the UI's multiprocess executor), on whatever thread that is. Signals and
thread interruption do not work in all of those places, so limits are cooperative: the work
calls :func:`check_deadline` at its loop heads (per operation, per tool, per verification case,
every few thousand nodes of a walk). Import bounds every size (:mod:`compoworld_assets.engine.specs.limits`),
so the work between two checks is small; sandboxed calls carry their own wall-clock timeout.

The active deadline lives in a context variable, so nothing below needs an extra parameter and
nested limits keep the earliest one.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass


class DeadlineExceeded(Exception):
    """Raised by :func:`check_deadline` once the active time limit has passed."""

    def __init__(self, what: str, seconds: float) -> None:
        super().__init__(f"{what} exceeded its time limit of {seconds:g} s")
        self.what = what
        self.seconds = seconds


@dataclass(frozen=True)
class _Deadline:
    what: str
    seconds: float
    expires_at: float


_ACTIVE: ContextVar[_Deadline | None] = ContextVar("compoworld_deadline", default=None)


@contextmanager
def time_limit(seconds: float | None, what: str) -> Iterator[None]:
    """Work inside the block raises :class:`DeadlineExceeded` at its next check after ``seconds``.

    ``None`` sets no limit of its own; an enclosing limit that expires sooner stays in force.
    """
    outer = _ACTIVE.get()
    if seconds is None:
        yield
        return
    deadline = _Deadline(what, seconds, time.monotonic() + seconds)
    token = _ACTIVE.set(deadline if outer is None or deadline.expires_at < outer.expires_at else outer)
    try:
        yield
    finally:
        _ACTIVE.reset(token)


def check_deadline() -> None:
    """Raise :class:`DeadlineExceeded` when the active time limit has passed (no-op without one)."""
    deadline = _ACTIVE.get()
    if deadline is not None and time.monotonic() >= deadline.expires_at:
        raise DeadlineExceeded(deadline.what, deadline.seconds)
