"""The training data as a Hugging Face DatasetDict: saved, loaded back, and a card whose numbers are the tables'."""

import asyncio
import sys
from pathlib import Path

import pytest

pytest.importorskip("datasets")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engine" / "rollout"))

from toy_world import toy_task, toy_world_factory

from compoworld_assets.adapters.hf_datasets import dataset_dict, save, split_summary, task_row
from compoworld_assets.engine.exports import sample_record
from compoworld_assets.engine.rollout.engine import run_rollouts
from compoworld_assets.engine.rollout.policy import OraclePolicy
from compoworld_assets.engine.rollout.verify import verify_trajectory


def test_the_splits_round_trip_and_the_card_states_their_numbers(tmp_path):
    from datasets import load_from_disk

    task = toy_task()
    [trajectory] = asyncio.run(run_rollouts([task], OraclePolicy, toy_world_factory, mode="gateway"))
    sample = sample_record(task, verify_trajectory(task, trajectory, toy_world_factory))
    rl = [task_row(task.model_dump_json(), "hash-a", "r000")]
    heldout = [task_row(task.model_copy(update={"task_id": "toy-2"}).model_dump_json(), "hash-b", "r000")]
    written = save(dataset_dict([sample], rl, heldout), tmp_path / "hf", "test.duckdb")
    assert written == {"sft": 1, "rl": 1, "heldout": 1}
    loaded = load_from_disk(str(tmp_path / "hf"))
    assert loaded["sft"][0]["messages"] == sample["messages"] and loaded["sft"][0]["meta"] == sample["meta"]
    assert loaded["rl"][0]["task_id"] == task.task_id and loaded["heldout"][0]["services"] == list(task.services)
    card = (tmp_path / "hf" / "README.md").read_text()
    for name, facts in split_summary(loaded).items():  # worked out again from what was loaded
        assert f"| {name} | {facts['rows']} | `{facts['content_hash'][:16]}` |" in card
    assert "## How the splits were drawn" in card and "data_files" not in card  # load_from_disk needs none
    from compoworld_assets.adapters.hf_datasets import dataset_card
    assert "  - split: heldout\n    path: data/heldout-*" in dataset_card(loaded, "test.duckdb", hub=True)
