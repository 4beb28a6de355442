"""Partitioned tables in Delta Lake, so that steps write their partitions side by side.

DuckDB allows one writer per file, so every step that wrote into ``compoworld.duckdb`` queued for
it (pool ``duckdb``) and two service builds or two task rounds never ran at once. The tables
partitioned by service or by task round are Delta Lake tables instead (``deltalake``, the Rust
``delta-rs``): ``<data_dir>/tables/pipeline/<table>``, physically partitioned by the asset's
``partition_expr`` column. A step replaces exactly its partitions in one commit (an overwrite
whose predicate names them), so

- two steps writing different partitions commit independently, without a lock (Delta's
  optimistic concurrency; a conflicting commit is retried);
- a step that fails before its commit changes nothing, and a run over many partitions commits
  all of them or none.

DuckDB stays the query engine: after each commit the writer replaces the view ``pipeline.<table>``
in the DuckDB file with one over the table's current Parquet files, so dbt, the CLI and ad-hoc SQL
read the tables as before. The view is replaced while holding DuckDB's file lock and lists the
files of the latest Delta version at that moment, so whichever writer refreshes last leaves the
view on the newest commit. Steps read their inputs from Delta directly, as a polars ``DataFrame`` or, for
tables too large to hold (a paper-scale round of tasks with their worlds is GBs), as a ``LazyFrame`` that
reads only the columns and row groups asked for. Row groups are sized by bytes (``ROW_GROUP_BYTES``), so a
streaming read holds one small group at a time whatever a row weighs.

A DuckDB base table of the same name (data written before these tables moved) is adopted into the
Delta table at the first write, so no partition is lost.
"""

import json
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import dagster as dg
import polars as pl
import pyarrow.dataset as ds
import pyarrow.parquet as pq
from dagster._core.storage.db_io_manager import DbClient, DbIOManager, DbTypeHandler, TableSlice
from deltalake import DeltaTable, WriterProperties, write_deltalake
from deltalake import Schema as DeltaSchema
from deltalake.exceptions import CommitFailedError, DeltaError
from deltalake.transaction import AddAction, create_table_with_add_actions

from resources.storage import SCHEMA, PartitionAwareDbIOManager, StorageResource, duckdb_connection

PARTITIONS_IO_MANAGER = "partitions_io_manager"
TABLES_DIR = "tables"
_COMMIT_ATTEMPTS = 20
_STREAM_ROWS = 64
ROW_GROUP_BYTES = 32 * 2**20
"""About how many (in-memory) bytes of rows a Parquet row group holds: delta-rs otherwise groups 1,024 rows,
~650 MB when each row is a task with its seeded world, and a reader holds a whole group at once."""


def table_uri(data_dir: str, table: str) -> str:
    """Where the Delta table ``table`` of the ``pipeline`` schema lives under ``data_dir``."""
    return str(Path(data_dir, TABLES_DIR, SCHEMA, table).resolve())


def _literal(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _in(column: str, values: Sequence[str]) -> str:
    return f"{column} IN ({', '.join(_literal(v) for v in values)})"


def write_partitions(uri: str, frame: pl.DataFrame | pl.LazyFrame, column: str, keys: Sequence[str],
                     *, keep_only: Sequence[str] | None = None) -> None:
    """Replace partitions ``keys`` of the table at ``uri`` by ``frame`` in one commit.

    ``keep_only``: also remove every partition not listed (partitions of services that no longer
    exist). Every row of ``frame`` must belong to one of ``keys``. The rows are streamed into Parquet
    files a batch at a time (:func:`_stream_partitions`: a lazy frame is never held whole); only a write
    that drops other partitions or adds a column goes through delta-rs's writer.
    """
    lazy = frame.lazy()
    if keep_only is None and keys and _streamable(uri, lazy):
        _stream_partitions(uri, lazy, column, keys)
        return
    frame = frame.collect() if isinstance(frame, pl.LazyFrame) else frame
    _refuse_stray(frame[column].unique().to_list(), keys)
    predicate = _in(column, keys) if keys else "false"
    if keep_only is not None:
        predicate = f"({predicate}) OR NOT ({_in(column, keep_only) if keep_only else 'false'})"
    properties = WriterProperties(max_row_group_size=rows_per_group(frame))
    rows = frame.to_arrow()

    def attempt_commit() -> None:
        if DeltaTable.is_deltatable(uri):
            # "merge": a new code version may add columns; older partitions read them as null.
            write_deltalake(uri, rows, mode="overwrite", partition_by=[column], predicate=predicate,
                            schema_mode="merge", writer_properties=properties)
        else:
            write_deltalake(uri, rows, mode="error", partition_by=[column], writer_properties=properties)

    _commit(uri, attempt_commit)


def _refuse_stray(values: Sequence[str], keys: Sequence[str]) -> None:
    stray = sorted(set(values) - set(keys))
    if stray:
        raise ValueError(f"rows for partitions {stray[:5]} outside the written partitions {list(keys)[:5]}")


def _commit(uri: str, attempt_commit: Callable[[], None]) -> None:
    """``attempt_commit`` again while another writer's commit beats it (it then runs on the newer version)."""
    for attempt in range(_COMMIT_ATTEMPTS):
        try:
            attempt_commit()
            return
        except DeltaError as exc:
            # Another writer committed first, or created the table first: write again on its version.
            conflict = isinstance(exc, CommitFailedError) or "already exists" in str(exc)
            if not conflict:
                raise
            if attempt == _COMMIT_ATTEMPTS - 1:
                raise RuntimeError(f"{uri}: {_COMMIT_ATTEMPTS} commits in a row conflicted") from exc
            time.sleep(min(0.05 * 2 ** attempt, 2.0))


def _streamable(uri: str, frame: pl.LazyFrame) -> bool:
    """Whether ``frame`` can be streamed into the table as new files: the table is new, or has its columns
    (a new column goes through delta-rs's writer, which merges the schema)."""
    if not DeltaTable.is_deltatable(uri):
        return True
    return [f.name for f in DeltaTable(uri).schema().fields] == list(frame.collect_schema())


def _stream_partitions(uri: str, frame: pl.LazyFrame, column: str, keys: Sequence[str]) -> None:
    """Write ``frame`` as Parquet files into the table's folder, one per partition, a batch of rows at a
    time, then replace partitions ``keys`` by them in one commit.

    delta-rs's own writer buffers its whole input (a paper-scale round of tasks took 9.4 GB to write), so
    the files are written here and committed as add actions. Until the commit no reader sees them; the
    files of a write that fails are removed, as are those of a write with rows outside ``keys``. The frame is
    read once: each batch's row groups are sized by its own bytes."""
    schema = frame.head(0).collect().to_arrow().schema
    data_schema = schema.remove(schema.get_field_index(column))  # Delta keeps partition values in its log
    writers: dict[str, tuple[pq.ParquetWriter, str]] = {}
    counts: dict[str, int] = {}
    try:
        try:
            for batch in frame.collect_batches(chunk_size=_STREAM_ROWS):
                for (value,), part in batch.partition_by(column, as_dict=True, maintain_order=True).items():
                    if value not in writers:
                        _refuse_stray([value], keys)
                        relative = f"{column}={quote(str(value), safe='')}/part-{uuid.uuid4()}.parquet"
                        Path(uri, relative).parent.mkdir(parents=True, exist_ok=True)
                        writers[value] = (pq.ParquetWriter(Path(uri, relative), data_schema), relative)
                    writers[value][0].write_table(part.drop(column).to_arrow().cast(data_schema),
                                                  row_group_size=rows_per_group(part) or len(part))
                    counts[value] = counts.get(value, 0) + len(part)
        finally:
            for writer, _ in writers.values():
                writer.close()
        now = int(time.time() * 1000)
        actions = [AddAction(relative, Path(uri, relative).stat().st_size, {column: value}, now, True,
                             json.dumps({"numRecords": counts[value]}))
                   for value, (_, relative) in sorted(writers.items())]

        def attempt_commit() -> None:
            if DeltaTable.is_deltatable(uri):
                DeltaTable(uri).create_write_transaction(actions, "overwrite", schema, partition_by=[column],
                                                         partition_filters=[(column, "in", list(keys))])
            else:
                create_table_with_add_actions(uri, DeltaSchema.from_arrow(schema), actions, mode="error",
                                              partition_by=[column])

        _commit(uri, attempt_commit)
    except BaseException:
        for _, relative in writers.values():
            Path(uri, relative).unlink(missing_ok=True)
        raise


def rows_per_group(frame: pl.DataFrame) -> int | None:
    """Rows per Parquet row group so that a group holds about ``ROW_GROUP_BYTES`` of ``frame``'s rows; None
    (delta-rs's default) for rows light enough that its default groups stay under that."""
    n, size = len(frame), frame.estimated_size()
    rows = int(ROW_GROUP_BYTES * n / max(size, 1))
    return None if n == 0 or rows >= 1024 else max(1, rows)


def scan_partitions(uri: str, column: str, keys: Sequence[str] | None,
                    columns: Sequence[str] | None = None) -> pl.LazyFrame:
    """Rows of partitions ``keys`` (all when ``None``) of the table at ``uri``, not yet read: a query reads
    only the columns it uses, and ``collect_batches`` streams row groups. Pinned to the table's current
    version, so every query of the frame sees the same rows."""
    table = DeltaTable(uri)
    frame = pl.scan_delta(uri, version=table.version())
    if keys is not None:
        frame = frame.filter(pl.col(column).is_in(list(keys)))
    return frame.select(columns or [field.name for field in table.schema().fields])


def read_partitions(uri: str, column: str, keys: Sequence[str] | None,
                    columns: Sequence[str] | None = None) -> pl.DataFrame:
    """Rows of partitions ``keys`` (all when ``None``) of the table at ``uri``, by partition.

    Rows come back sorted by partition key and, within a partition, in the order written, so a read
    does not depend on the order in which partitions were committed.
    """
    table = DeltaTable(uri)
    dataset = table.to_pyarrow_dataset()
    if keys is not None:
        dataset = dataset.filter(ds.field(column).isin(list(keys)))
    frame = pl.from_arrow(dataset.to_table())
    assert isinstance(frame, pl.DataFrame)
    frame = frame.sort(column, maintain_order=True)
    return frame.select(columns or [field.name for field in table.schema().fields])


def _table_kind(connection, table: str) -> str | None:
    """``BASE TABLE``, ``VIEW`` or None: what ``pipeline.<table>`` is in the DuckDB file."""
    row = connection.execute("select table_type from information_schema.tables where table_schema = ? "
                             "and table_name = ?", [SCHEMA, table]).fetchone()
    return row[0] if row else None


def refresh_view(database: str, table: str, uri: str) -> None:
    """Point ``pipeline.<table>`` in the DuckDB file at the Delta table's current files.

    The Delta version is read after DuckDB's lock is taken, so concurrent writers leave the view on
    the newest commit whatever order they refresh in.
    """
    name = f"{SCHEMA}.{table}"
    with duckdb_connection(database) as connection:
        delta = DeltaTable(uri)
        files = delta.file_uris()
        schema = delta.schema().to_arrow()
        partition_columns = delta.metadata().partition_columns
        connection.execute(f"create schema if not exists {SCHEMA}")
        kind = _table_kind(connection, table)
        if kind is not None:
            connection.execute(f"drop {'view' if kind == 'VIEW' else 'table'} {name}")
        if files:
            columns = ", ".join(f'"{field.name}"' for field in schema)
            hive_types = ", ".join(f"{_literal(c)}: 'VARCHAR'" for c in partition_columns)
            # union_by_name: files written before a column was added lack it (read as null).
            connection.execute(f"create view {name} as select {columns} from read_parquet("
                               f"[{', '.join(_literal(f) for f in files)}], hive_partitioning = true, "
                               f"union_by_name = true, hive_types = {{{hive_types}}})")
        else:
            empty = delta.to_pyarrow_dataset().to_table()  # noqa: F841  (referenced by name in the SQL below)
            connection.execute(f"create table {name} as select * from empty")


def adopt_duckdb_table(database: str, table: str, uri: str, column: str) -> None:
    """Move the rows of a DuckDB base table ``pipeline.<table>`` (stored before the table moved to
    Delta) into the new Delta table, once."""
    if DeltaTable.is_deltatable(uri) or not Path(database).exists():
        return
    with duckdb_connection(database) as connection:
        if _table_kind(connection, table) != "BASE TABLE":
            return
        rows = connection.execute(f"select * from {SCHEMA}.{table}").pl()
    write_partitions(uri, rows, column, sorted(set(rows[column].to_list())))


def store_partitions(storage: StorageResource, table: str, frame: pl.DataFrame | pl.LazyFrame, column: str,
                     keys: Sequence[str],
                     *, keep_only: Sequence[str] | None = None) -> None:
    """Replace partitions ``keys`` of ``pipeline.<table>`` (see :func:`write_partitions`), then its view."""
    uri = table_uri(storage.data_dir, table)
    adopt_duckdb_table(storage.database, table, uri, column)
    write_partitions(uri, frame, column, keys, keep_only=keep_only)
    refresh_view(storage.database, table, uri)


def load_table(storage: StorageResource, table: str, column: str, empty: pl.DataFrame) -> pl.DataFrame:
    """Every partition of ``pipeline.<table>``; ``empty`` (a frame with the table's schema) when it has
    never been written."""
    uri = table_uri(storage.data_dir, table)
    return read_partitions(uri, column, None) if DeltaTable.is_deltatable(uri) else empty


@dataclass(frozen=True)
class DeltaTableConnection:
    storage: StorageResource
    uri: str


def _partitions(table_slice: TableSlice) -> tuple[str, list[str] | None]:
    dimensions = table_slice.partition_dimensions or []
    if len(dimensions) > 1:
        raise ValueError(f"{table_slice.table}: Delta tables here have one partition dimension")
    if not dimensions:
        raise ValueError(f"{table_slice.table} is not partitioned: unpartitioned tables stay in DuckDB")
    [dimension] = dimensions
    return dimension.partition_expr, [str(k) for k in dimension.partitions]


class _DeltaClient(DbClient[DeltaTableConnection]):
    def __init__(self, storage: StorageResource) -> None:
        self.storage = storage

    @contextmanager
    def connect(self, context, table_slice: TableSlice) -> Iterator[DeltaTableConnection]:
        yield DeltaTableConnection(self.storage, table_uri(self.storage.data_dir, table_slice.table))

    @staticmethod
    def delete_table_slice(context, table_slice: TableSlice, connection: DeltaTableConnection) -> None:
        """Nothing: the write replaces its partitions in the same commit."""

    @staticmethod
    def ensure_schema_exists(context, table_slice: TableSlice, connection: DeltaTableConnection) -> None:
        """Nothing: a Delta table's folder is made by its first commit."""

    @staticmethod
    def get_select_statement(table_slice: TableSlice) -> str:
        column, keys = _partitions(table_slice)
        return f"select * from {table_slice.schema}.{table_slice.table} where {_in(column, keys or [])}"


class _DeltaPolarsHandler(DbTypeHandler[pl.DataFrame | pl.LazyFrame]):
    """Polars frames of one type (``load_type``). An input annotated ``pl.LazyFrame`` is scanned, not read
    (:func:`scan_partitions`); an output that is one is streamed into the table."""

    def __init__(self, load_type: type[pl.DataFrame] | type[pl.LazyFrame]) -> None:
        self.load_type = load_type

    def handle_output(self, context, table_slice: TableSlice, obj: pl.DataFrame | pl.LazyFrame,
                      connection: DeltaTableConnection) -> None:
        column, keys = _partitions(table_slice)
        store_partitions(connection.storage, table_slice.table, obj, column, keys or [])

    def load_input(self, context, table_slice: TableSlice,
                   connection: DeltaTableConnection) -> pl.DataFrame | pl.LazyFrame:
        column, keys = _partitions(table_slice)
        if not DeltaTable.is_deltatable(connection.uri):
            raise dg.Failure(f"{table_slice.schema}.{table_slice.table} has never been written: "
                             "materialize it first")
        read = scan_partitions if self.load_type is pl.LazyFrame else read_partitions
        return read(connection.uri, column, keys, table_slice.columns)

    @property
    def supported_types(self) -> Sequence[type[object]]:
        return [self.load_type]


class CompoWorldDeltaIOManager(dg.ConfigurableIOManagerFactory):
    """Partitioned tables as Delta Lake tables under ``<data_dir>/tables``, with a DuckDB view each."""

    storage: dg.ResourceDependency[StorageResource]

    def create_io_manager(self, context) -> DbIOManager:
        return PartitionAwareDbIOManager(
            db_client=_DeltaClient(self.storage),
            database=self.storage.database,
            schema=SCHEMA,
            type_handlers=[_DeltaPolarsHandler(pl.DataFrame), _DeltaPolarsHandler(pl.LazyFrame)],
            default_load_type=pl.DataFrame,
            io_manager_name="CompoWorldDeltaIOManager",
        )


def partitions_io_manager(storage) -> CompoWorldDeltaIOManager:
    """The Delta IO manager on ``storage``'s data dir (pass the same object as the ``storage`` resource,
    as for :func:`resources.storage.duckdb_io_manager`)."""
    return CompoWorldDeltaIOManager(storage=storage)
