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
        from compoworld_assets.engine.library import builtin_specs
        from compoworld_assets.engine.specs.sources import SpecSource, load_sources

        declared = [SpecSource(kind=s.kind, path=s.path) for s in self.sources]
        if Path(self.drop_folder).is_dir():
            declared.insert(0, SpecSource(kind="auto", path=self.drop_folder))
        result = ImportResult(specs=builtin_specs() if self.include_builtin else [])
        imported = load_sources(declared)
        known = {s.id for s in result.specs}
        for spec in imported.specs:
            if spec.id in known:
                result.quarantined.append(_duplicate(spec))
            else:
                known.add(spec.id)
                result.specs.append(spec)
        result.quarantined.extend(imported.quarantined)
        return result


def _duplicate(spec):
    from compoworld_assets.engine.specs.model import QuarantinedSpec

    return QuarantinedSpec(source_kind=spec.source.kind, location=spec.source.location,
                           reason=f"duplicate service id {spec.id!r} (the built-in library defines it)",
                           fragment=spec.model_dump_json()[:4000])
