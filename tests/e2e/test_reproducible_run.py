"""Two ``compoworld run`` with the same seed, each on its own instance and data dir, store the same bytes.

Every table and view of the DuckDB file (the ``pipeline`` schema, whose partitioned tables are views of
Delta Lake tables, and the dbt marts) is exported in a canonical order and hashed; the JSON-lines exports
and the synthesized module files must match byte for byte. Wall-clock values belong in Dagster metadata, never in a table.
"""

import hashlib
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

REPO = Path(__file__).resolve().parents[2]


def launched_runs(home: Path) -> list[tuple[str, str, str, str]]:
    """(job, location, command tag, seed tag) of every run recorded in the instance at ``home``."""
    import dagster as dg

    from compoworld_assets.launch import COMMAND_TAG, SEED_TAG

    with dg.DagsterInstance.from_config(str(home)) as instance:
        return sorted((r.job_name, r.remote_job_origin.location_name if r.remote_job_origin else "",
                       r.tags.get(COMMAND_TAG, ""), r.tags.get(SEED_TAG, "")) for r in instance.get_runs())


def run_once(project_env: dict[str, str], root: Path) -> Path:
    """``compoworld run --tasks 12`` on a fresh instance under ``root``; returns its data dir."""
    home = root / "dagster_home"
    home.mkdir(parents=True)
    (home / "dagster.yaml").write_bytes((REPO / "dagster.yaml").read_bytes())
    data = root / "data"
    env = {**project_env, "DAGSTER_HOME": str(home), "COMPOWORLD_DATA_DIR": str(data)}
    done = subprocess.run([sys.executable, "-m", "compoworld_assets.cli", "run", "--seed", "3", "--tasks", "12",
                           "--data-dir", str(data)], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=420, check=False)
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    jobs = ["build_services_job", "catalog_and_graph_job", "datasets_job", "import_specs_job", "task_round_job"]
    assert launched_runs(home) == [(job, "compoworld_assets.definitions", "run", "3") for job in jobs], \
        "each stage is a run of the location's named job, tagged with the command and its seed"
    return data


def table_digests(database: Path) -> dict[str, tuple[int, str]]:
    """``schema.table`` → (row count, SHA-256 of its rows in canonical order) for every table and view (the
    partitioned tables are Delta Lake tables the file has views of)."""
    digests = {}
    with duckdb.connect(str(database), read_only=True) as con:
        names = con.execute("select table_schema, table_name from information_schema.tables "
                            "where table_type in ('BASE TABLE', 'VIEW') order by all").fetchall()
        for schema, table in names:
            rows = con.execute(f'select * from "{schema}"."{table}" order by all').fetchall()
            digest = hashlib.sha256("\n".join(repr(row) for row in rows).encode()).hexdigest()
            digests[f"{schema}.{table}"] = (len(rows), digest)
    return digests


def file_digests(data: Path) -> dict[str, str]:
    """Relative path → SHA-256 of every exported or synthesized file (the database is compared by table)."""
    return {str(path.relative_to(data)): hashlib.sha256(path.read_bytes()).hexdigest()
            for folder in ("exports", "modules") for path in sorted((data / folder).rglob("*")) if path.is_file()}


def test_two_runs_with_the_same_seed_store_identical_tables(project_env, tmp_path):
    first = run_once(project_env, tmp_path / "first")
    second = run_once(project_env, tmp_path / "second")
    tables = table_digests(first / "compoworld.duckdb")
    assert {"pipeline.trajectories", "pipeline.verified_trajectories", "pipeline.sft_dataset",
            "pipeline.services", "main_marts.verification_funnel"} <= tables.keys()
    assert tables["pipeline.trajectories"][0] > 0 and tables["pipeline.sft_dataset"][0] > 0
    again = table_digests(second / "compoworld.duckdb")
    differing = sorted(name for name in tables.keys() | again.keys() if tables.get(name) != again.get(name))
    assert differing == []
    files = file_digests(first)
    assert any(name.startswith("exports/") for name in files) and any(name.startswith("modules/") for name in files)
    assert files == file_digests(second)
    assert oracle_score_over_mcp(first, project_env) == 1.0


def oracle_score_over_mcp(data: Path, env: dict[str, str]) -> float:
    """Replay a stored oracle episode through ``compoworld serve-mcp`` (stdio, started by the MCP SDK's own client)
    and return the score the server gives it: the world a data folder stores, served to any MCP client."""
    import asyncio
    import json

    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    with duckdb.connect(str(data / "compoworld.duckdb"), read_only=True) as con:
        task_id, text = con.execute("select task_id, trajectory_json from pipeline.trajectories "
                                    "where policy = 'oracle' order by task_id limit 1").fetchone()
    calls = [(c["function"]["name"], json.loads(c["function"]["arguments"]))
             for m in json.loads(text)["messages"] if m.get("role") == "assistant" for c in m.get("tool_calls") or []]
    server = StdioServerParameters(command=sys.executable, cwd=str(REPO), env=env, args=[
        "-m", "compoworld_assets.cli", "serve-mcp", "--task", task_id, "--data-dir", str(data)])

    async def play() -> float:
        async with Client(server) as client:
            for name, arguments in calls:
                await client.call_tool(name, arguments)
            return (await client.call_tool("score_episode", {})).structured_content["data"]["rubric_score"]

    return asyncio.run(play())
