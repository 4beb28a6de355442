"""The boundary every import goes through: bounded input, a time limit, no exception out.

:func:`guarded` runs one importer on one parsed document inside an import context
(:mod:`.context`): the document is first bounded by :func:`~.document.sanitize_document`, the
importer then runs under the per-document time limit, and whatever goes wrong becomes a
quarantine row instead of an exception: a document beyond the limits, the time limit passing
(``DeadlineExceeded``), or an unexpected error inside an importer (reason ``internal error
while importing``; each one is a bug to fix, and the fuzz benchmark counts them). The repairs
the import made are appended as rows too. Calls nested inside an open import (an importer that
delegates to another) run directly.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from compoworld_assets.engine.deadline import DeadlineExceeded, time_limit
from compoworld_assets.engine.specs.importers.context import _CURRENT, import_context
from compoworld_assets.engine.specs.importers.document import DocumentRejected, sanitize_document
from compoworld_assets.engine.specs.limits import DEFAULT_LIMITS, ImportLimits
from compoworld_assets.engine.specs.model import ImportResult, QuarantinedSpec, preview

INTERNAL_ERROR = "internal error while importing"


def guarded(
    run: Callable[[Any], ImportResult],
    data: Any,
    *,
    kind: str,
    location: str,
    limits: ImportLimits = DEFAULT_LIMITS,
) -> ImportResult:
    """``run(data)`` on the bounded copy of ``data``; never raises (see the module docstring)."""
    if _CURRENT.get() is not None:
        return run(data)
    with import_context(limits) as context:
        try:
            with time_limit(limits.time_limit_s, f"importing {location}"):
                result = run(sanitize_document(data, context.repairs, location, limits))
        except DocumentRejected as error:
            result = _rejected(kind, f"{location}#{error.pointer}" if error.pointer else location, str(error), data)
        except DeadlineExceeded as error:
            result = _rejected(kind, location, str(error), data)
        except Exception as error:  # noqa: BLE001 - the import boundary: nothing escapes to the asset
            result = _rejected(kind, location, f"{INTERNAL_ERROR}: {type(error).__name__}: {error}", data)
        source_kind = result.specs[0].source.kind if result.specs else kind
        result.quarantined.extend(context.repairs.quarantined(source_kind))
    return result


def _rejected(kind: str, location: str, reason: str, data: Any) -> ImportResult:
    return ImportResult(quarantined=[QuarantinedSpec.from_error(kind, location, reason, preview(data, 2000))])


def guarded_importer(kind: str) -> Callable[[Callable[..., ImportResult]], Callable[..., ImportResult]]:
    """Decorate ``importer(data, *, location, **options)`` so that it runs through :func:`guarded`
    (``kind`` names the rows of a rejected document unless the call passes its own ``kind``)."""

    def decorate(importer: Callable[..., ImportResult]) -> Callable[..., ImportResult]:
        @functools.wraps(importer)
        def run(data: Any, *, location: str, **options: Any) -> ImportResult:
            return guarded(lambda clean: importer(clean, location=location, **options), data,
                           kind=options.get("kind") or kind, location=location)

        return run

    return decorate
