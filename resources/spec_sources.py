"""Where tool specifications come from: the built-in library and spec files or folders."""


from pathlib import Path

import dagster as dg
from pydantic import Field

from compoworld_assets.engine.specs.model import ImportResult


class SpecSourceConfig(dg.Config):
    kind: str = Field(default="auto", description="openai | bfcl | openapi | mcp | compoworld | auto")
    path: str


class SpecSourcesResource(dg.ConfigurableResource):
    """The built-in library (optional) plus a drop folder and any extra files or folders."""

    include_builtin: bool = True
    drop_folder: str = "specs"
    sources: list[SpecSourceConfig] = Field(default_factory=list)

    def load(self) -> ImportResult:
        """Built-in specs first; an imported spec reusing a built-in service id is renamed (``dedupe_service_ids``)."""
        from compoworld_assets.engine.library import builtin_specs
        from compoworld_assets.engine.specs.importers import dedupe_service_ids
        from compoworld_assets.engine.specs.sources import SpecSource, load_sources

        declared = [SpecSource(kind=s.kind, path=s.path) for s in self.sources]
        if Path(self.drop_folder).is_dir():
            declared.insert(0, SpecSource(kind="auto", path=self.drop_folder))
        builtins = builtin_specs() if self.include_builtin else []
        imported = dedupe_service_ids(load_sources(declared), seen={s.id for s in builtins})
        return ImportResult(specs=builtins + imported.specs, quarantined=imported.quarantined)
