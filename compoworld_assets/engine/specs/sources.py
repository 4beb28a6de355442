"""Declared spec sources and loading them all into one de-duplicated ImportResult."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict

from compoworld_assets.engine.specs.importers import (
    SpecKind,
    dedupe_service_ids,
    import_spec_dir,
    import_spec_file,
)
from compoworld_assets.engine.specs.model import ImportResult


class SpecSource(BaseModel):
    """A file or directory of specs of one kind (``auto`` detects the format per file)."""

    model_config = ConfigDict(frozen=True)

    kind: SpecKind
    path: str


def load_sources(sources: list[SpecSource]) -> ImportResult:
    """Import every source in order; a second API whose id an earlier one took is renamed, the same API
    imported twice is quarantined (:mod:`~compoworld_assets.engine.specs.importers.service_ids`)."""
    combined = ImportResult()
    for source in sources:
        path = Path(source.path)
        combined.extend(
            import_spec_dir(path, source.kind) if path.is_dir() else import_spec_file(path, source.kind)
        )
    return dedupe_service_ids(combined)
