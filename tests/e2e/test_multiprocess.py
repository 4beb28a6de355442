"""The whole graph under the multiprocess executor on a real instance, one job per partitions cut.

Steps run in parallel subprocesses, and each opens the one DuckDB file; the ``duckdb`` pool with
``default_limit: 1`` (the project's dagster.yaml) must serialize them so no step hits the file lock.
"""

import json
import subprocess
import sys
from pathlib import Path

import dagster as dg
import duckdb
import pytest

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1500)]

REPO = Path(__file__).resolve().parents[2]
DAGSTER = str(Path(sys.executable).parent / "dagster")
ROUND = "r-multiprocess"
FIRST, LAST = "calendar", "crm"  # five built-in services in id order: calendar … crm


def execute(env: dict[str, str], job: str, tags: dict[str, str] | None = None, config: dict | None = None,
            tmp_path: Path | None = None) -> str:
    command = [DAGSTER, "job", "execute", "-m", "compoworld_assets.definitions", "-j", job]
    if tags:
        command += ["--tags", json.dumps(tags)]
    if config:
        path = tmp_path / f"{job}.json"
        path.write_text(json.dumps(config))
        command += ["-c", str(path)]
    done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=600,
                          check=False)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-4000:]
    assert "Could not set lock" not in output
    return output


def test_whole_graph_multiprocess(project_env, tmp_path):
    instance = dg.DagsterInstance.from_config(project_env["DAGSTER_HOME"])
    execute(project_env, "import_specs_job")
    services = instance.get_dynamic_partitions("service")
    assert "bfcl_message_api" in services and len(services) > 20
    built = services[services.index(FIRST):services.index(LAST) + 1]
    execute(project_env, "build_services_job", tags={"dagster/asset_partition_range_start": FIRST,
                                                     "dagster/asset_partition_range_end": LAST})
    execute(project_env, "catalog_and_graph_job")
    instance.add_dynamic_partitions("task_round", [ROUND])
    execute(project_env, "task_round_job", tags={"dagster/partition": ROUND},
            config={"ops": {"sample_tasks": {"config": {"n_plans": 40}}}}, tmp_path=tmp_path)
    execute(project_env, "datasets_job")

    runs = instance.get_runs()
    assert len(runs) == 5
    assert {r.status for r in runs} == {dg.DagsterRunStatus.SUCCESS}
    engine_messages = [e.message or "" for r in runs for e in instance.all_logs(r.run_id)]
    assert any("multiprocess executor" in m for m in engine_messages)

    database = Path(project_env["COMPOWORLD_DATA_DIR"]) / "compoworld.duckdb"
    with duckdb.connect(str(database), read_only=True) as con:
        def count(table: str) -> int:
            return con.execute(f"select count(*) from {table}").fetchone()[0]

        assert count("pipeline.services") == len(built) == 5
        assert count("pipeline.tool_catalog") > 0 and count("pipeline.dependency_graph") > 0
        assert count("pipeline.sampled_tasks") > 0 and count("pipeline.verified_trajectories") > 0
        assert count("pipeline.sft_dataset") > 0
        assert count("main_marts.catalog_by_domain") > 0, "the dbt marts ran"
