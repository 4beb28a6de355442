"""Partitioned tables in Delta Lake: partitions replaced in one commit, side by side, with a DuckDB view."""

import multiprocessing

import duckdb
import polars as pl
import pyarrow.parquet as pq
import pytest

from resources import partitioned_tables
from resources.partitioned_tables import (
    load_table,
    read_partitions,
    rows_per_group,
    scan_partitions,
    store_partitions,
    table_uri,
)
from resources.storage import SCHEMA, StorageResource


def rows(*pairs: tuple[str, int]) -> pl.DataFrame:
    return pl.DataFrame({"service_id": [p for p, _ in pairs], "n": [n for _, n in pairs]},
                        schema={"service_id": pl.String, "n": pl.Int64})


def view(storage: StorageResource, table: str = "things") -> list[tuple]:
    with duckdb.connect(storage.database, read_only=True) as con:
        return con.execute(f"select service_id, n from {SCHEMA}.{table} order by all").fetchall()


def test_a_write_replaces_its_partitions_and_leaves_the_others(tmp_path):
    storage = StorageResource(data_dir=str(tmp_path))
    store_partitions(storage, "things", rows(("a", 1), ("a", 2), ("b", 3)), "service_id", ["a", "b"])
    store_partitions(storage, "things", rows(("a", 10)), "service_id", ["a"])
    store_partitions(storage, "things", rows(), "service_id", ["c"])  # an empty partition: nothing to add
    assert view(storage) == [("a", 10), ("b", 3)]
    uri = table_uri(storage.data_dir, "things")
    assert read_partitions(uri, "service_id", ["b"]).rows() == [("b", 3)]
    assert read_partitions(uri, "service_id", None).columns == ["service_id", "n"]


def test_keep_only_drops_partitions_no_longer_listed(tmp_path):
    storage = StorageResource(data_dir=str(tmp_path))
    store_partitions(storage, "things", rows(("a", 1), ("b", 2), ("c", 3)), "service_id", ["a", "b", "c"])
    store_partitions(storage, "things", rows(("b", 20)), "service_id", ["b"], keep_only=["a", "b"])
    assert view(storage) == [("a", 1), ("b", 20)]


def test_rows_outside_the_written_partitions_are_refused_and_nothing_changes(tmp_path):
    storage = StorageResource(data_dir=str(tmp_path))
    store_partitions(storage, "things", rows(("a", 1)), "service_id", ["a"])
    with pytest.raises(ValueError, match="outside the written partitions"):
        store_partitions(storage, "things", rows(("a", 2), ("b", 3)), "service_id", ["a"])
    assert view(storage) == [("a", 1)]


def test_a_table_that_has_only_empty_partitions_is_an_empty_typed_table(tmp_path):
    storage = StorageResource(data_dir=str(tmp_path))
    store_partitions(storage, "things", rows(), "service_id", ["a"])
    with duckdb.connect(storage.database, read_only=True) as con:
        assert con.execute(f"select count(*) from {SCHEMA}.things").fetchone() == (0,)
        assert con.execute(f"describe {SCHEMA}.things").fetchall()[1][:2] == ("n", "BIGINT")
    assert load_table(storage, "nothing_yet", "service_id", rows()).is_empty()


def test_rows_stored_in_duckdb_before_the_move_are_adopted(tmp_path):
    storage = StorageResource(data_dir=str(tmp_path))
    old = rows(("a", 1), ("b", 2)).to_arrow()  # noqa: F841  (referenced by name in the SQL below)
    with duckdb.connect(storage.database) as con:
        con.execute(f"create schema {SCHEMA}")
        con.execute(f"create table {SCHEMA}.things as select * from old")
    store_partitions(storage, "things", rows(("b", 20)), "service_id", ["b"])
    assert view(storage) == [("a", 1), ("b", 20)]


def _write_many(data_dir: str, writer: str) -> None:
    storage = StorageResource(data_dir=data_dir)
    for k in range(6):
        key = f"{writer}{k}"
        store_partitions(storage, "things", rows(*((key, i) for i in range(50))), "service_id", [key])


def test_processes_writing_different_partitions_at_once_lose_nothing(tmp_path):
    """Two processes commit partitions of one table at the same time (one of them creating it): every
    partition is there, and the DuckDB view, refreshed by both, shows the newest commit."""
    context = multiprocessing.get_context("spawn")
    writers = [context.Process(target=_write_many, args=(str(tmp_path), w)) for w in "xy"]
    for process in writers:
        process.start()
    for process in writers:
        process.join(timeout=120)
        assert process.exitcode == 0
    storage = StorageResource(data_dir=str(tmp_path))
    stored = read_partitions(table_uri(storage.data_dir, "things"), "service_id", None)
    assert stored.group_by("service_id").len().sort("service_id").rows() == [(f"{w}{k}", 50) for w in "xy"
                                                                              for k in range(6)]
    assert len(view(storage)) == 600


def test_a_new_column_is_added_and_older_partitions_read_it_as_null(tmp_path):
    storage = StorageResource(data_dir=str(tmp_path))
    store_partitions(storage, "things", rows(("a", 1), ("b", 2)), "service_id", ["a", "b"])
    store_partitions(storage, "things", rows(("a", 3)).with_columns(note=pl.lit("new")), "service_id", ["a"])
    stored = read_partitions(table_uri(storage.data_dir, "things"), "service_id", None)
    assert stored.select("service_id", "n", "note").rows() == [("a", 3, "new"), ("b", 2, None)]
    with duckdb.connect(storage.database, read_only=True) as con:
        viewed = con.execute(f"select * from {SCHEMA}.things").pl()
    assert viewed.columns == stored.columns, "the view has the Delta table's columns in its order"
    assert viewed.sort("service_id").rows() == stored.rows()


def test_heavy_rows_are_written_in_row_groups_of_bounded_bytes(tmp_path, monkeypatch):
    monkeypatch.setattr(partitioned_tables, "ROW_GROUP_BYTES", 40_000)
    heavy = pl.DataFrame({"service_id": ["a"] * 50, "text": ["x" * 10_000] * 50})
    assert rows_per_group(heavy) == 3 and rows_per_group(rows(("a", 1))) is None
    storage = StorageResource(data_dir=str(tmp_path))
    store_partitions(storage, "heavy", heavy, "service_id", ["a"])
    [path] = (tmp_path / "tables" / SCHEMA / "heavy").rglob("*.parquet")
    groups = pq.ParquetFile(path).metadata
    assert groups.num_rows == 50 and max(groups.row_group(i).num_rows for i in range(groups.num_row_groups)) == 3


def test_a_scan_reads_only_its_partitions_and_the_columns_asked_for(tmp_path):
    storage = StorageResource(data_dir=str(tmp_path))
    store_partitions(storage, "things", rows(("a", 1), ("b", 2), ("c", 3)), "service_id", ["a", "b", "c"])
    uri = table_uri(storage.data_dir, "things")
    scan = scan_partitions(uri, "service_id", ["a", "c"])
    store_partitions(storage, "things", rows(("a", 10)), "service_id", ["a"])  # after the scan was made
    assert scan.sort("n").collect().rows() == [("a", 1), ("c", 3)]  # the version the scan was made on
    assert scan_partitions(uri, "service_id", None, ["n"]).collect().columns == ["n"]


def test_a_lazy_frame_is_streamed_into_its_partitions(tmp_path, monkeypatch):
    monkeypatch.setattr(partitioned_tables, "_STREAM_ROWS", 2)
    storage = StorageResource(data_dir=str(tmp_path))
    store_partitions(storage, "things", rows(("a", 1), ("b", 2)), "service_id", ["a", "b"])
    store_partitions(storage, "things", rows(("a", 10), ("a", 11), ("a", 12)).lazy(), "service_id", ["a"])
    assert view(storage) == [("a", 10), ("a", 11), ("a", 12), ("b", 2)]
    with pytest.raises(ValueError, match="outside the written partitions"):
        store_partitions(storage, "things", rows(("c", 1)).lazy(), "service_id", ["a"])
    assert not list((tmp_path / "tables" / SCHEMA / "things").glob("service_id=c/*")), "the stray rows' file is removed"
    monkeypatch.setattr(partitioned_tables, "ROW_GROUP_BYTES", 40_000)
    monkeypatch.setattr(partitioned_tables, "_STREAM_ROWS", 10)
    heavy = pl.DataFrame({"service_id": ["b"] * 50, "text": ["x" * 10_000] * 50})
    store_partitions(storage, "heavy", heavy.lazy(), "service_id", ["b"])  # each batch's groups sized alone
    [path] = (tmp_path / "tables" / SCHEMA / "heavy").glob("service_id=b/*.parquet")
    groups = pq.ParquetFile(path).metadata
    assert groups.num_rows == 50 and max(groups.row_group(i).num_rows for i in range(groups.num_row_groups)) == 3


def test_a_streamed_write_creates_a_table_and_a_failed_one_leaves_neither_rows_nor_files(tmp_path, monkeypatch):
    storage = StorageResource(data_dir=str(tmp_path))
    store_partitions(storage, "things", rows(("a", 1), ("b", 2)).lazy(), "service_id", ["a", "b"])
    assert view(storage) == [("a", 1), ("b", 2)]
    uri = table_uri(storage.data_dir, "things")
    files = sorted(p.name for p in (tmp_path / "tables" / SCHEMA / "things").rglob("*.parquet"))

    def refuse(*args, **kwargs):
        raise RuntimeError("commit refused")

    monkeypatch.setattr(partitioned_tables.DeltaTable, "create_write_transaction", refuse)
    with pytest.raises(RuntimeError, match="commit refused"):
        store_partitions(storage, "things", rows(("a", 5)).lazy(), "service_id", ["a"])
    assert read_partitions(uri, "service_id", None).rows() == [("a", 1), ("b", 2)]
    assert sorted(p.name for p in (tmp_path / "tables" / SCHEMA / "things").rglob("*.parquet")) == files


def test_a_streamed_frame_with_a_new_column_is_merged_into_the_schema(tmp_path):
    storage = StorageResource(data_dir=str(tmp_path))
    store_partitions(storage, "things", rows(("a", 1), ("b", 2)), "service_id", ["a", "b"])
    wider = rows(("a", 3)).with_columns(note=pl.lit("new")).lazy()
    store_partitions(storage, "things", wider, "service_id", ["a"])
    stored = read_partitions(table_uri(storage.data_dir, "things"), "service_id", None)
    assert stored.select("service_id", "n", "note").rows() == [("a", 3, "new"), ("b", 2, None)]
