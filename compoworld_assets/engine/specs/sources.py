"""Declared spec sources and loading them all into one de-duplicated ImportResult."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from compoworld_assets.engine.specs.importers import dedupe_service_ids, import_spec_dir, import_spec_file
from compoworld_assets.engine.specs.model import ImportResult

SourceKind = Literal["openai", "bfcl", "openapi", "mcp", "compoworld", "auto"]


class SpecSource(BaseModel):
    """A file or directory of specs of one kind (``auto`` detects the format per file)."""

    model_config = ConfigDict(frozen=True)

    kind: SourceKind
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
