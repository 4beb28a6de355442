"""The state of one document's import: its limits and what was repaired or left out on the way.

Importers reach it through :func:`current` instead of an extra parameter on every helper;
:func:`import_context` opens one for the duration of :func:`~compoworld_assets.engine.specs.importers.import_document`.
A repair is anything the import changed or dropped while keeping the rest: a pattern Python cannot
compile, bounds that contradict each other, a string cut to the size limit. Each kind of repair
becomes one quarantine row per document (with its count and the first place it happened), so the
catalog of what was not imported as written stays readable.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, TypeVar

from compoworld_assets.engine.specs.limits import DEFAULT_LIMITS, ImportLimits
from compoworld_assets.engine.specs.model import QuarantinedSpec

T = TypeVar("T")


@dataclass
class _Repair:
    count: int
    location: str
    fragment: Any


@dataclass
class Repairs:
    """Repairs by reason; the first occurrence keeps its location and fragment."""

    entries: dict[str, _Repair] = field(default_factory=dict)

    def note(self, reason: str, location: str, fragment: Any = "") -> None:
        entry = self.entries.get(reason)
        if entry is None:
            self.entries[reason] = _Repair(1, location, fragment)
        else:
            entry.count += 1

    def quarantined(self, source_kind: str) -> list[QuarantinedSpec]:
        rows = []
        for reason, entry in self.entries.items():
            text = reason if entry.count == 1 else f"{reason} ({entry.count} times; the first is shown)"
            rows.append(QuarantinedSpec.from_error(source_kind, entry.location, text, entry.fragment))
        return rows


@dataclass
class ImportContext:
    limits: ImportLimits = DEFAULT_LIMITS
    repairs: Repairs = field(default_factory=Repairs)


_CURRENT: ContextVar[ImportContext | None] = ContextVar("compoworld_import", default=None)


@contextmanager
def import_context(limits: ImportLimits = DEFAULT_LIMITS) -> Iterator[ImportContext]:
    context = ImportContext(limits)
    token = _CURRENT.set(context)
    try:
        yield context
    finally:
        _CURRENT.reset(token)


def current() -> ImportContext:
    """The open import's context; outside one (an importer called directly), a fresh default."""
    return _CURRENT.get() or ImportContext()


def within_tool_limit(items: list[T], location: str) -> list[T]:
    """The first :attr:`ImportLimits.max_tools` of ``items``; the cut is noted as a repair."""
    context = current()
    limit = context.limits.max_tools
    if len(items) <= limit:
        return items
    context.repairs.note(f"tools beyond the limit of {limit} per service left out", location,
                         f"{len(items)} tools in the input")
    return items[:limit]
