"""A temporary DuckDB file, Dagster instance and spec drop folder for materialize tests."""

import shutil
from pathlib import Path

import dagster as dg
import pytest

from compoworld_assets.definitions import all_asset_checks, all_assets, build_resources

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "specs"


@pytest.fixture
def pipeline(tmp_path, monkeypatch):
    """Materialize helpers bound to a fresh instance and data directory."""
    spec_dir = tmp_path / "specs"
    spec_dir.mkdir()
    for name in ("bfcl_message_api.json", "malformed_tools.json"):
        shutil.copy(FIXTURES / name, spec_dir / name)
    monkeypatch.setenv("COMPOWORLD_SPEC_DIR", str(spec_dir))
    monkeypatch.setenv("COMPOWORLD_DATA_DIR", str(tmp_path / "data"))
    with dg.instance_for_test() as instance:
        yield Pipeline(instance, build_resources(str(tmp_path / "data")), tmp_path)


class Pipeline:
    def __init__(self, instance: dg.DagsterInstance, resources: dict, root: Path):
        self.instance = instance
        self.resources = resources
        self.root = root
        self.database = root / "data" / "compoworld.duckdb"
        self.everything = [*all_assets(), *all_asset_checks()]

    def materialize(self, *keys: str, raise_on_error: bool = True, **kwargs) -> dg.ExecuteInProcessResult:
        return dg.materialize(self.everything, selection=dg.AssetSelection.assets(*keys),
                              resources=self.resources, instance=self.instance,
                              raise_on_error=raise_on_error, **kwargs)

    def query(self, sql: str) -> list[tuple]:
        import duckdb

        with duckdb.connect(str(self.database), read_only=True) as con:
            return con.execute(sql).fetchall()
