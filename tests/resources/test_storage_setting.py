"""The data dir is one setting: a run config override of ``storage`` moves the IO manager's tables too."""

from __future__ import annotations

import dagster as dg
import duckdb
import polars as pl

from compoworld_assets.definitions import build_resources
from resources import StorageResource


@dg.asset
def numbers(storage: StorageResource) -> pl.DataFrame:
    return pl.DataFrame({"n": [1, 2, 3], "where": [storage.data_dir] * 3})


def test_a_launch_override_of_the_data_dir_reaches_the_io_manager(tmp_path):
    default, chosen = tmp_path / "default", tmp_path / "chosen"
    resources = {k: v for k, v in build_resources(str(default)).items() if k in ("io_manager", "storage")}
    with dg.instance_for_test() as instance:
        result = dg.materialize([numbers], resources=resources, instance=instance, run_config={
            "resources": {"storage": {"config": {"data_dir": str(chosen)}}}})
    assert result.success
    assert not (default / "compoworld.duckdb").exists()
    with duckdb.connect(str(chosen / "compoworld.duckdb"), read_only=True) as connection:
        assert connection.execute("select n, \"where\" from pipeline.numbers order by n").fetchall() == [
            (1, str(chosen)), (2, str(chosen)), (3, str(chosen))]


def test_without_an_override_the_built_data_dir_is_used(tmp_path):
    resources = {k: v for k, v in build_resources(str(tmp_path)).items() if k in ("io_manager", "storage")}
    with dg.instance_for_test() as instance:
        assert dg.materialize([numbers], resources=resources, instance=instance).success
    assert StorageResource(data_dir=str(tmp_path)).database == str(tmp_path / "compoworld.duckdb")
    with duckdb.connect(str(tmp_path / "compoworld.duckdb"), read_only=True) as connection:
        assert connection.execute("select count(*) from pipeline.numbers").fetchone() == (3,)
