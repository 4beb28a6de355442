"""Where CompoWorld keeps its data: one DuckDB file plus a folder of artifacts."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
from dagster_duckdb_polars import DuckDBPolarsIOManager

DEFAULT_DATA_DIR = "data"
DEFAULT_DATABASE = "data/compoworld.duckdb"


class StorageResource(dg.ConfigurableResource):
    """Paths of the embedded default storage. Everything lives under ``data_dir``."""

    data_dir: str = DEFAULT_DATA_DIR
    database: str = DEFAULT_DATABASE

    def path(self, *parts: str) -> Path:
        target = Path(self.data_dir, *parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        return target

    @property
    def world_model_cache(self) -> Path:
        return self.path("world_model_cache.sqlite")


def duckdb_io_manager(database: str) -> DuckDBPolarsIOManager:
    Path(database).parent.mkdir(parents=True, exist_ok=True)
    return DuckDBPolarsIOManager(database=database, schema="compoworld")
