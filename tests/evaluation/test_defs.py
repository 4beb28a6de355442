"""The Dagster side: partitions, checks on score frames, the checkpoint sensor, model resolution."""

import dagster as dg
import polars as pl
import pytest

from compoworld_assets.defs.evaluation import assets, checks, sensors
from compoworld_assets.defs.evaluation.partitions import benchmark_model
from resources import LLMResource, SandboxResource, StorageResource


def _frame(rows):
    return pl.DataFrame(rows, schema=assets.SCORE_SCHEMA)


ROW = {"benchmark": "bfcl", "model": "base", "metric": "accuracy", "mean": 0.5, "ci_low": 0.2, "ci_high": 0.8,
       "n": 10, "k": 2}
SELF_TEST = {**ROW, "metric": "self_test:ground_truth", "mean": 1.0, "ci_low": 1.0, "ci_high": 1.0, "k": 1}


def test_definitions_load_with_the_evaluation_modules():
    defs = dg.Definitions(assets=[assets.benchmark_scores],
                          asset_checks=dg.load_asset_checks_from_modules([checks]),
                          jobs=[sensors.benchmark_job],
                          sensors=[sensors.sft_checkpoint_sensor, sensors.rl_checkpoint_sensor],
                          resources={"storage": StorageResource(), "llm": LLMResource(),
                                     "sandbox": SandboxResource()})
    assert defs.resolve_job_def("benchmark_job").partitions_def == benchmark_model
    assert {s.name for s in defs.sensors} == {"sft_checkpoint_sensor", "rl_checkpoint_sensor"}
    assert benchmark_model.partitions_defs[0].partitions_def.get_partition_keys() == [
        "compoworld_heldout", "bfcl", "tau2"]


def test_checks_pass_on_good_rows_and_fail_on_bad_ones():
    good = _frame([ROW, SELF_TEST])
    assert checks.benchmark_self_tests_pass(good).passed
    assert checks.benchmark_intervals_ordered(good).passed
    assert not checks.benchmark_self_tests_pass(_frame([ROW, {**SELF_TEST, "mean": 0.9}])).passed
    assert not checks.benchmark_self_tests_pass(_frame([ROW])).passed
    assert not checks.benchmark_intervals_ordered(_frame([{**ROW, "ci_low": 0.6}])).passed


def test_sensor_adds_the_model_partition_and_requests_every_benchmark():
    result = sensors.evaluation_requests("sft", "run-1")
    assert [r.partition_key.keys_by_dimension for r in result.run_requests] == [
        {"benchmark": b, "model": "sft"} for b in ("compoworld_heldout", "bfcl", "tau2")]
    assert result.dynamic_partitions_requests[0].partition_keys == ["sft"]
    assert len({r.run_key for r in result.run_requests}) == 3


def test_missing_checkpoint_table_fails_with_a_clear_message(tmp_path):
    with pytest.raises(dg.Failure, match="sft_checkpoint is missing"):
        assets.checkpoint_folder("sft", None)
    with pytest.raises(dg.Failure, match="not a folder"):
        assets.checkpoint_folder("base", pl.DataFrame({"path": [str(tmp_path / "gone")]}))
    assert assets.checkpoint_folder("rl", pl.DataFrame({"checkpoint_path": [str(tmp_path)]})) == tmp_path
