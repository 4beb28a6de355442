"""What a partitioned table costs in DuckDB and in Delta Lake, written by one process and by two at once.

Writes ``--partitions`` partitions of service-sized rows (one row of ``--row-kb`` KB each, as a
``services`` row with its module and seed state) one partition per commit, the way the service builds
write them:

- **duckdb**: the old layout, one table in ``compoworld.duckdb`` (a delete and an insert in one
  transaction per partition). Two writers take turns on the file's lock;
- **delta**: the current layout (``resources/partitioned_tables.py``): one Delta commit per partition
  and the DuckDB view replaced after it. Two writers commit side by side.

For each it prints the seconds to write every partition with one process and with two (half each),
the seconds to read the whole table back through DuckDB SQL and into polars, and the size on disk.
The two-writer figure of each layout is what the storage allows; whether the steps around the writes
run side by side is ``benchmarks/partition_parallel.py``'s measurement.

    .venv/bin/python benchmarks/partitioned_storage.py [--partitions 200] [--row-kb 64]
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))  # run as a plain script from any working directory

import duckdb
import polars as pl

from resources.partitioned_tables import read_partitions, store_partitions, table_uri
from resources.storage import SCHEMA, StorageResource, duckdb_connection


def partition_rows(key: str, row_kb: int) -> pl.DataFrame:
    text = "".join(random.Random(key).choices("abcdefghij {}:,\"", k=row_kb * 1024))
    return pl.DataFrame({"service_id": [key], "n_tools": [len(key)], "module_source": [text[: len(text) // 3]],
                         "seed_state_json": [text[len(text) // 3:]]})


def write_duckdb(data_dir: str, keys: list[str], row_kb: int) -> None:
    database = StorageResource(data_dir=data_dir).database
    for key in keys:
        rows = partition_rows(key, row_kb).to_arrow()  # noqa: F841  (referenced by name in the SQL below)
        with duckdb_connection(database) as con:
            con.execute(f"create schema if not exists {SCHEMA}")
            con.execute(f"create table if not exists {SCHEMA}.services as select * from rows where false")
            con.execute(f"delete from {SCHEMA}.services where service_id = ?", [key])
            con.execute(f"insert into {SCHEMA}.services select * from rows")


def write_delta(data_dir: str, keys: list[str], row_kb: int) -> None:
    storage = StorageResource(data_dir=data_dir)
    for key in keys:
        store_partitions(storage, "services", partition_rows(key, row_kb), "service_id", [key])


def timed_writers(layout, data_dir: str, keys: list[str], row_kb: int, writers: int) -> float:
    context = multiprocessing.get_context("spawn")
    shares = [keys[i::writers] for i in range(writers)]
    processes = [context.Process(target=layout, args=(data_dir, share, row_kb)) for share in shares]
    start = time.perf_counter()
    for process in processes:
        process.start()
    for process in processes:
        process.join()
        if process.exitcode != 0:
            raise SystemExit(f"a {layout.__name__} writer failed")
    return time.perf_counter() - start


def size_mb(path: Path) -> float:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--partitions", type=int, default=200)
    parser.add_argument("--row-kb", type=int, default=64)
    args = parser.parse_args()
    keys = [f"service_{i:05d}" for i in range(args.partitions)]
    print(f"{args.partitions} partitions of one {args.row_kb} KB row each")
    print(f"{'layout':<8} {'1 writer':>9} {'2 writers':>10} {'read SQL':>9} {'read polars':>12} {'disk MB':>8}")
    for name, layout in (("duckdb", write_duckdb), ("delta", write_delta)):
        times = []
        for writers in (1, 2):
            with tempfile.TemporaryDirectory() as data_dir:
                times.append(timed_writers(layout, data_dir, keys, args.row_kb, writers))
                database = StorageResource(data_dir=data_dir).database
                start = time.perf_counter()
                with duckdb.connect(database, read_only=True) as con:
                    count, = con.execute(f"select count(*) from {SCHEMA}.services where length(module_source) > 0"
                                         ).fetchone()
                    assert count == args.partitions, count
                    sql = time.perf_counter() - start
                    start = time.perf_counter()
                    if name == "duckdb":
                        frame = con.execute(f"select * from {SCHEMA}.services").pl()
                    else:
                        frame = read_partitions(table_uri(data_dir, "services"), "service_id", None)
                    read = time.perf_counter() - start
                assert len(frame) == args.partitions
                disk = size_mb(Path(data_dir))
        print(f"{name:<8} {times[0]:>8.1f}s {times[1]:>9.1f}s {sql:>8.2f}s {read:>11.2f}s {disk:>8.1f}")


if __name__ == "__main__":
    main()
