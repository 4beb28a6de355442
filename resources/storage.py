"""Where CompoWorld keeps its data: one DuckDB file plus a folder of artifacts.

``storage.data_dir`` is the one setting: the DuckDB file is ``<data_dir>/compoworld.duckdb`` for the
IO manager (which takes it from the ``storage`` resource), the assets, the checks and dbt alike, so a
launchpad override of ``data_dir`` moves all of them.

The IO manager is Dagster's DuckDB IO manager machinery (``DbIOManager``, ``DuckDbClient``, the
polars type handler) with two guarantees added: a step's
delete-and-insert is one transaction (a failed write never leaves a half-written table),
an empty frame still creates its typed table (downstream steps can always read it), and rows are inserted by
column name: a write whose columns differ from the stored table's replaces an unpartitioned table (a new code
version's columns) and is refused for one partition of a partitioned table. It also lends
the run's instance to partition lookups, which multi-partitions with a dynamic dimension need.
"""

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import dagster as dg
import duckdb
import polars as pl
from dagster._core.storage.db_io_manager import DbIOManager, TableSlice
from dagster._utils.backoff import backoff
from dagster_duckdb.io_manager import DuckDbClient
from dagster_duckdb_polars.duckdb_polars_type_handler import DuckDBPolarsTypeHandler

DEFAULT_DATA_DIR = "data"
DATABASE_FILE = "compoworld.duckdb"
SCHEMA = "pipeline"


class StorageResource(dg.ConfigurableResource):
    """Paths of the embedded default storage. Everything lives under ``data_dir``."""

    data_dir: str = DEFAULT_DATA_DIR

    @property
    def database(self) -> str:
        """The DuckDB file every table lives in."""
        return str(Path(self.data_dir, DATABASE_FILE))

    def path(self, *parts: str) -> Path:
        target = Path(self.data_dir, *parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        return target

    @property
    def world_model_cache(self) -> Path:
        return self.path("world_model_cache.sqlite")


# A step waits for the DuckDB file while another process holds it (a dbt build, a large table
# write): up to ~10 minutes, polling every few seconds once the first quick retries have failed.
_LOCK_DELAYS = (0.05, 0.1, 0.2, 0.5, 1.0, *(3.0,) * 200)


@contextmanager
def duckdb_connection(database: str) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-write connection to ``database`` in one transaction (rolled back on error), waiting
    for another process's lock on the file instead of failing at once."""
    conn = backoff(fn=duckdb.connect, retry_on=(RuntimeError, duckdb.IOException),
                   kwargs={"database": database, "read_only": False, "config": {"custom_user_agent": "dagster"}},
                   max_retries=len(_LOCK_DELAYS), delay_generator=(d for d in _LOCK_DELAYS))
    try:
        conn.begin()
        try:
            yield conn
        except BaseException:
            conn.rollback()
            raise
        conn.commit()
    finally:
        conn.close()


class _TransactionalClient(DuckDbClient):
    """Dagster's DuckDB client on a database given here (not in the IO manager's config), one
    transaction per connection."""

    def __init__(self, database: str) -> None:
        self.database = database

    @contextmanager
    def connect(self, context, table_slice: TableSlice) -> Iterator:
        with duckdb_connection(self.database) as conn:
            yield conn

    @staticmethod
    def delete_table_slice(context, table_slice: TableSlice, connection) -> None:
        exists = connection.execute(
            "select count(*) from information_schema.tables where table_schema = ? and table_name = ?",
            [table_slice.schema, table_slice.table],
        ).fetchone()[0]
        if exists:
            DuckDbClient.delete_table_slice(context, table_slice, connection)


class _PolarsHandler(DuckDBPolarsTypeHandler):
    """Writes a frame into its table slice (creating the table, empty or not) and adds no metadata.

    Dagster's handler adds ``row_count`` and ``dataframe_columns`` of the whole output, which a
    run over several partitions would show on every partition as if it were that partition's; the
    assets record ``dagster/row_count`` and ``dagster/column_schema`` themselves, per partition
    where they are partitioned.
    """

    def handle_output(self, context, table_slice: TableSlice, obj: pl.DataFrame, connection) -> None:
        rows = obj.to_arrow()  # noqa: F841  (referenced by name in the SQL below)
        table = f"{table_slice.schema}.{table_slice.table}"
        connection.execute(f"create schema if not exists {table_slice.schema}")
        connection.execute(f"create table if not exists {table} as select * from rows where false")
        stored = connection.execute(  # the catalog, not the table: writing is not reading it
            "select column_name, data_type from information_schema.columns where table_schema = ? "
            "and table_name = ? order by ordinal_position", [table_slice.schema, table_slice.table]).fetchall()
        given = [row[:2] for row in connection.execute("describe select * from rows").fetchall()]
        if stored != given:
            if table_slice.partition_dimensions:
                raise ValueError(f"{table} stores columns {[c[0] for c in stored]} but this write has "
                                 f"{[c[0] for c in given]}: drop the table, or materialize every partition of it")
            # The write replaces the whole table: a new code version's columns replace the old ones.
            connection.execute(f"create or replace table {table} as select * from rows where false")
        connection.execute(f"insert into {table} by name select * from rows")


class PartitionAwareDbIOManager(DbIOManager):
    """Dagster's ``DbIOManager`` lists the keys of a multi-partition's dynamic dimension (the
    ``benchmark_scores`` model dimension) without an instance to read them from, and fails with
    "The instance is not available to load partitions". The run's instance is lent to it here."""

    def handle_output(self, context, obj) -> None:
        with dg.partition_loading_context(dynamic_partitions_store=context.step_context.instance):
            super().handle_output(context, obj)

    def load_input(self, context):
        with dg.partition_loading_context(dynamic_partitions_store=context.instance):
            return super().load_input(context)


class CompoWorldDuckDBIOManager(dg.ConfigurableIOManagerFactory):
    """Tables in schema ``pipeline`` of the ``storage`` resource's DuckDB file, as polars frames."""

    storage: dg.ResourceDependency[StorageResource]

    def create_io_manager(self, context) -> DbIOManager:
        database = self.storage.database
        Path(database).parent.mkdir(parents=True, exist_ok=True)
        return PartitionAwareDbIOManager(
            db_client=_TransactionalClient(database),
            database=database,
            schema=SCHEMA,
            type_handlers=[_PolarsHandler()],
            default_load_type=pl.DataFrame,
            io_manager_name="CompoWorldDuckDBIOManager",
        )


def duckdb_io_manager(storage: Any) -> CompoWorldDuckDBIOManager:
    """The IO manager on ``storage``'s database (a :class:`StorageResource`, or the partial one of
    :func:`storage_resource`). Pass the same object as the ``storage`` resource; when it is the
    partial one, a run config override of ``storage`` reaches the IO manager too."""
    return CompoWorldDuckDBIOManager(storage=storage)


def storage_resource(data_dir: str = DEFAULT_DATA_DIR) -> Any:
    """The storage resource configured at launch (a ``PartialResource``): Dagster then resolves the IO
    manager's ``storage`` dependency from the top-level ``storage`` resource and its run config, where a
    fully built resource would keep the values it was built with."""
    return StorageResource.configure_at_launch(data_dir=data_dir)
