"""``benchmark_scores`` materialized through Dagster: checkpoint lookup, local server, BFCL, table, checks.

A tiny random model stands in for the SFT and RL checkpoints (their tables point at it, recorded as
materialized), so the scores are near zero; the test is about the path, the stored rows and the
checks, not the numbers.
"""

import dagster as dg
import duckdb
import pytest

from compoworld_assets.defs.evaluation import assets, checks
from compoworld_assets.defs.evaluation.partitions import eval_models
from resources import LLMResource, SandboxResource, StorageResource, duckdb_io_manager

pytestmark = pytest.mark.slow

RUN_CONFIG = {"ops": {"benchmark_scores": {"config": {
    "seeds": [1, 2], "max_tokens": 128, "bfcl_categories": ["simple_python", "irrelevance"],
    "bfcl_per_category": 1}}}}


@pytest.fixture
def pipeline(tmp_path, tiny_model_dir):
    database = str(tmp_path / "compoworld.duckdb")
    with duckdb.connect(database) as connection:
        connection.execute("create schema pipeline")
        for table in ("sft_checkpoint", "rl_checkpoint"):
            connection.execute(f"create table pipeline.{table} as select ? as checkpoint_path",
                               [str(tiny_model_dir)])
    storage = StorageResource(data_dir=str(tmp_path))
    resources = {"io_manager": duckdb_io_manager(storage), "storage": storage,
                 "llm": LLMResource(), "sandbox": SandboxResource()}
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions(eval_models.name, ["sft", "rl"])
        for table in ("sft_checkpoint", "rl_checkpoint"):
            instance.report_runless_asset_event(dg.AssetMaterialization(table))

        def run(model: str) -> dg.ExecuteInProcessResult:
            return dg.materialize([assets.benchmark_scores, *dg.load_asset_checks_from_modules([checks]),
                                   dg.AssetSpec("sft_checkpoint"), dg.AssetSpec("rl_checkpoint")],
                                  partition_key=dg.MultiPartitionKey({"benchmark": "bfcl", "model": model}),
                                  resources=resources, instance=instance, run_config=RUN_CONFIG)

        yield run, database


def test_checkpoint_partitions_are_scored_stored_and_checked(pipeline, tiny_model_dir):
    run, database = pipeline
    first = run("sft")
    assert first.success
    assert all(e.passed for e in first.get_asset_check_evaluations())
    second = run("rl")
    assert second.success

    with duckdb.connect(database, read_only=True) as connection:
        rows = connection.execute("select model, metric, mean, ci_low, ci_high, n, k from pipeline.benchmark_scores "
                                  "where benchmark = 'bfcl' order by model, metric").fetchall()
    by_key = {(model, metric): (mean, low, high, n, k) for model, metric, mean, low, high, n, k in rows}
    assert {model for model, _ in by_key} == {"sft", "rl"}, "the second partition kept the first one's rows"
    for model in ("sft", "rl"):
        mean, low, high, n, k = by_key[(model, "accuracy")]
        assert low <= mean <= high and n == 2 and k == 2
        assert by_key[(model, "self_test:ground_truth")][0] == 1.0

    [materialization] = [e.materialization for e in second.get_asset_materialization_events()
                         if e.asset_key.path == ["benchmark_scores"]]
    board = materialization.metadata["leaderboard"].value
    assert "sft" in board and "rl" in board
    assert materialization.metadata["checkpoint"].value == str(tiny_model_dir)
    assert materialization.metadata["dagster/row_count"].value == len([key for key in by_key if key[0] == "rl"])
    assert materialization.metadata["leaderboard_plot"].value.startswith("![leaderboard](data:image/svg+xml;base64,")
