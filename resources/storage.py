"""Where CompoWorld keeps its data: one DuckDB file plus a folder of artifacts.

The IO manager is Dagster's DuckDB polars IO manager with two guarantees added: a step's
delete-and-insert is one transaction (a failed write never leaves a half-written table), and
an empty frame still creates its typed table (downstream steps can always read it). It also lends
the run's instance to partition lookups, which multi-partitions with a dynamic dimension need.
"""

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import dagster as dg
import polars as pl
from dagster._core.storage.db_io_manager import DbIOManager, DbTypeHandler, TableSlice
from dagster_duckdb.io_manager import DuckDbClient
from dagster_duckdb_polars import DuckDBPolarsIOManager
from dagster_duckdb_polars.duckdb_polars_type_handler import DuckDBPolarsTypeHandler

DEFAULT_DATA_DIR = "data"
DEFAULT_DATABASE = "data/compoworld.duckdb"
SCHEMA = "pipeline"


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


class _TransactionalClient(DuckDbClient):
    @staticmethod
    @contextmanager
    def connect(context, table_slice: TableSlice) -> Iterator:
        with DuckDbClient.connect(context, table_slice) as conn:
            conn.begin()
            try:
                yield conn
            except BaseException:
                conn.rollback()
                raise
            conn.commit()

    @staticmethod
    def delete_table_slice(context, table_slice: TableSlice, connection) -> None:
        exists = connection.execute(
            "select count(*) from information_schema.tables where table_schema = ? and table_name = ?",
            [table_slice.schema, table_slice.table],
        ).fetchone()[0]
        if exists:
            DuckDbClient.delete_table_slice(context, table_slice, connection)


class _PolarsHandler(DuckDBPolarsTypeHandler):
    def handle_output(self, context, table_slice: TableSlice, obj: pl.DataFrame, connection) -> None:
        if obj.is_empty():
            empty_arrow = obj.to_arrow()  # noqa: F841  (referenced by name in the SQL below)
            connection.execute(
                f"create table if not exists {table_slice.schema}.{table_slice.table} as select * from empty_arrow"
            )
        super().handle_output(context, table_slice, obj, connection)


class _DynamicPartitionsDbIOManager(DbIOManager):
    """Dagster's ``DbIOManager`` lists the keys of a multi-partition's dynamic dimension (the
    ``benchmark_scores`` model dimension) without an instance to read them from, and fails with
    "The instance is not available to load partitions". The run's instance is lent to it here."""

    def handle_output(self, context, obj) -> None:
        with dg.partition_loading_context(dynamic_partitions_store=context.step_context.instance):
            super().handle_output(context, obj)

    def load_input(self, context):
        with dg.partition_loading_context(dynamic_partitions_store=context.instance):
            return super().load_input(context)


class CompoWorldDuckDBIOManager(DuckDBPolarsIOManager):
    @staticmethod
    def type_handlers() -> Sequence[DbTypeHandler]:
        return [_PolarsHandler()]

    def create_io_manager(self, context) -> DbIOManager:
        return _DynamicPartitionsDbIOManager(
            db_client=_TransactionalClient(),
            database=self.database,
            schema=self.schema_,
            type_handlers=self.type_handlers(),
            default_load_type=pl.DataFrame,
            io_manager_name="CompoWorldDuckDBIOManager",
        )


def duckdb_io_manager(database: str) -> CompoWorldDuckDBIOManager:
    Path(database).parent.mkdir(parents=True, exist_ok=True)
    return CompoWorldDuckDBIOManager(database=database, schema=SCHEMA)
