"""Materialize the task, trajectory and dataset stages on a temporary DuckDB file."""

import pytest

pytestmark = pytest.mark.slow

SERVICES = ("crm", "mail", "invoicing", "orders", "helpdesk", "calendar")
ROUND_CONFIG = {"ops": {"sample_tasks": {"config": {"seed": 3, "n_plans": 25}}}}


def build_round(pipeline, round_key: str = "r000") -> None:
    pipeline.materialize("service_specs", "quarantined_specs")
    for service_id in SERVICES:
        pipeline.materialize("services", partition_key=service_id)
    pipeline.materialize("tool_catalog", "dependency_graph", "dependency_graph_nodes")
    pipeline.instance.add_dynamic_partitions("task_round", [round_key])
    result = pipeline.materialize("sampled_tasks", "quarantined_tasks", "rubrics", "trajectories",
                                  "verified_trajectories", partition_key=round_key, run_config=ROUND_CONFIG)
    failed = [(e.check_name, e.metadata) for e in result.get_asset_check_evaluations() if not e.passed]
    assert not failed


def test_round_produces_gated_tasks_and_verified_trajectories(pipeline):
    build_round(pipeline)
    tasks = pipeline.query("select task_id, n_services, services from pipeline.sampled_tasks")
    assert len(tasks) >= 20
    assert all(n >= 2 for _, n, _ in tasks)
    assert all(set(s.strip('[]"').replace('"', "").split(", ")) <= set(SERVICES) for _, _, s in tasks)
    kept = pipeline.query("select count(*) from pipeline.verified_trajectories where passed")[0][0]
    assert kept == len(tasks), "every oracle trajectory replays and passes"
    criteria = pipeline.query("select count(distinct task_id) from pipeline.rubrics")[0][0]
    assert criteria == len(tasks)

    result = pipeline.materialize("sft_dataset", "rl_tasks")
    assert all(e.passed for e in result.get_asset_check_evaluations())
    splits = dict(pipeline.query("select split, count(*) from pipeline.sampled_tasks group by split"))
    assert pipeline.query("select count(*) from pipeline.sft_dataset")[0][0] == splits.get("train", 0)
    assert pipeline.query("select count(*) from pipeline.rl_tasks")[0][0] == splits.get("rl", 0)
    assert (pipeline.root / "data" / "exports" / "sft.jsonl").exists()

    pipeline.instance.add_dynamic_partitions("task_round", ["r001"])
    second = pipeline.materialize("sampled_tasks", "quarantined_tasks", partition_key="r001", run_config=ROUND_CONFIG)
    [spread] = [e for e in second.get_asset_check_evaluations() if e.check_name == "service_spread"]
    assert list(spread.metadata["rounds"].value) == ["r001"], "a round's spread is checked on that round alone"


def test_same_seed_gives_same_tasks_and_trajectories(pipeline, tmp_path_factory, monkeypatch):
    build_round(pipeline)
    first = pipeline.query("select task_id, task_hash from pipeline.sampled_tasks order by task_id")
    first_traj = pipeline.query("select trajectory_id, trajectory_hash from pipeline.trajectories order by 1")

    pipeline.materialize("sampled_tasks", "quarantined_tasks", "trajectories", partition_key="r000",
                         run_config=ROUND_CONFIG)
    assert pipeline.query("select task_id, task_hash from pipeline.sampled_tasks order by task_id") == first
    assert pipeline.query("select trajectory_id, trajectory_hash from pipeline.trajectories order by 1") == first_traj
