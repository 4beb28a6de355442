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


def test_an_unpartitioned_table_whose_columns_changed_is_replaced_and_a_partitioned_one_refused(tmp_path):
    """A new code version's columns (a column dropped, one added) replace an unpartitioned table's, where a
    positional insert would have put values under the old names; a partition cannot change its table alone."""
    resources = {k: v for k, v in build_resources(str(tmp_path)).items() if k in ("io_manager", "storage")}
    with duckdb.connect(str(tmp_path / "compoworld.duckdb")) as connection:
        connection.execute("create schema pipeline")
        connection.execute("create table pipeline.numbers as select 7 n, 'old' payload, 'x' \"where\"")
        connection.execute("create table pipeline.parts as select 'a' part, 1 n")

    @dg.asset(partitions_def=dg.StaticPartitionsDefinition(["a", "b"]), metadata={"partition_expr": "part"})
    def parts(context) -> pl.DataFrame:
        return pl.DataFrame({"part": [context.partition_key], "n": [1], "added": ["new"]})

    with dg.instance_for_test() as instance:
        assert dg.materialize([numbers], resources=resources, instance=instance).success
        refused = dg.materialize([parts], partition_key="b", resources=resources, instance=instance,
                                 raise_on_error=False)
    assert not refused.success
    with duckdb.connect(str(tmp_path / "compoworld.duckdb"), read_only=True) as connection:
        assert [c[0] for c in connection.execute("describe pipeline.numbers").fetchall()] == ["n", "where"]
        assert connection.execute("select n, \"where\" from pipeline.numbers order by n").fetchall() == [
            (1, str(tmp_path)), (2, str(tmp_path)), (3, str(tmp_path))]
        assert connection.execute("select * from pipeline.parts").fetchall() == [("a", 1)], "rolled back"
