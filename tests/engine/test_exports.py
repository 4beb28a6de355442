"""Sample-format export, import round trip and the Hugging Face dataset builder."""

import asyncio
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "rollout"))

from toy_world import toy_task, toy_world_factory

from compoworld_assets.engine.exports import (
    SAMPLE_FORMAT,
    import_trajectories,
    read_samples,
    sample_record,
    samples_dataset,
    trajectory_from_sample,
    write_samples,
)
from compoworld_assets.engine.rollout.engine import run_rollouts
from compoworld_assets.engine.rollout.policy import OraclePolicy
from compoworld_assets.engine.rollout.verify import verify_trajectory


@pytest.fixture(scope="module")
def verified():
    task = toy_task()
    trajectories = [asyncio.run(run_rollouts([task], OraclePolicy, toy_world_factory, mode=mode))[0]
                    for mode in ("gateway", "direct")]
    return task, [verify_trajectory(task, t, toy_world_factory) for t in trajectories]


def test_sample_meta_counts_and_environment(verified):
    task, (gateway, direct) = verified
    meta = sample_record(task, gateway)["meta"]
    assert meta["format"] == SAMPLE_FORMAT and meta["task_id"] == task.task_id
    assert (meta["n_tool_calls"], meta["n_real_tool_calls"], meta["n_steps"]) == (8, 2, 8)
    assert (meta["score"], meta["rubric_score"], meta["discover_mode"]) == (1.0, 1.0, "gateway")
    assert meta["services"] == ["crm", "helpdesk"] and meta["domain"] == "support"
    assert set(meta["environment"]) == {"crm", "helpdesk", "mail"}
    assert {"version", "spec_hash", "module_hash"} == set(meta["environment"]["crm"])
    assert "environment" not in meta["episode"] and "retries" in meta["episode"]
    direct_meta = sample_record(task, direct)["meta"]
    assert (direct_meta["n_tool_calls"], direct_meta["n_real_tool_calls"]) == (3, 2)


def test_failed_verification_scores_zero(verified):
    task, (gateway, _) = verified
    failed = verify_trajectory(task, gateway.trajectory.model_copy(update={"final_answer": {}}), toy_world_factory)
    assert sample_record(task, failed)["meta"]["score"] == 0.0


def test_export_import_round_trip(verified, tmp_path):
    task, results = verified
    path = tmp_path / "samples.jsonl"
    assert write_samples((sample_record(task, v) for v in results), path) == 2
    lines = path.read_text().splitlines()
    assert len(lines) == 2 and set(json.loads(lines[0])) == {"tools", "messages", "meta"}
    assert import_trajectories(path) == [v.trajectory for v in results]
    assert trajectory_from_sample(read_samples(path)[1]).discover_mode == "direct"


def test_import_rejects_other_formats(verified):
    task, results = verified
    record = sample_record(task, results[0])
    record["meta"]["format"] = "other"
    with pytest.raises(ValueError, match="compoworld-sample"):
        trajectory_from_sample(record)


def test_huggingface_dataset_keeps_messages_and_tools(verified):
    pytest.importorskip("datasets", reason="the Hugging Face dataset builder needs the 'train' extra (datasets)")
    task, results = verified
    records = [sample_record(task, v) for v in results]
    dataset = samples_dataset(records)
    assert len(dataset) == 2 and dataset["discover_mode"] == ["gateway", "direct"]
    assert dataset[0]["messages"] == records[0]["messages"] and dataset[1]["tools"] == records[1]["tools"]
    assert dataset[0]["meta"]["calls"] == records[0]["meta"]["calls"]
    assert trajectory_from_sample(dataset[1]) == results[1].trajectory
