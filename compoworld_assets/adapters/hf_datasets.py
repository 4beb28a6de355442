"""A data folder's training data as a Hugging Face ``DatasetDict`` with a dataset card (needs the ``train`` extra).

Three splits: ``sft`` (the SFT samples, in the sample format's columns: :func:`~compoworld_assets.engine.exports.
samples_dataset`), ``rl`` and ``heldout`` (tasks: id, content hash, round, domain, services, instruction, and the
whole task as JSON, its seeded world and rubric included). The card (``README.md`` beside the saved splits) gives the
schema, the counts, the seeds, a content hash per split, the generator's version and how the splits were drawn; its
numbers are worked out from the rows written. ``push_to_hub`` uploads both (it needs a token and the network).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from importlib.metadata import version
from pathlib import Path
from typing import Any

from compoworld_assets.engine.canonical import content_hash
from compoworld_assets.engine.exports import samples_dataset

HOW_SPLITS_ARE_DRAWN = (
    "A task's service combination (the services its plan needs) is held out when the hash of the combination falls "
    "in the held-out share: no train or RL task uses a held-out combination. Every other task goes to `train` (its "
    "verified oracle trajectory becomes an SFT sample) or `rl` by the hash of its id; a held-out task that needs a "
    "service no trained task uses is `transfer` and is not exported here. Splits are drawn per task round, "
    "deterministically from the seed.")


def task_row(task_json: str, task_hash: str, round_key: str) -> dict[str, Any]:
    task = json.loads(task_json)
    return {"task_id": task["task_id"], "task_hash": task_hash, "round": round_key, "domain": task["domain"],
            "services": list(task["services"]), "instruction": task["instruction"], "seed": int(task["seed"]),
            "task_json": task_json}


def tasks_dataset(rows: Iterable[Mapping[str, Any]]) -> Any:
    from datasets import Dataset, Features, List, Value

    features = Features({"task_id": Value("string"), "task_hash": Value("string"), "round": Value("string"),
                         "domain": Value("string"), "services": List(Value("string")), "instruction": Value("string"),
                         "seed": Value("int64"), "task_json": Value("string")})
    return Dataset.from_list([dict(r) for r in rows], features=features)


def dataset_dict(sft_samples: Iterable[dict[str, Any]], rl_tasks: Iterable[Mapping[str, Any]],
                 heldout_tasks: Iterable[Mapping[str, Any]]) -> Any:
    from datasets import DatasetDict

    return DatasetDict({"sft": samples_dataset(sft_samples), "rl": tasks_dataset(rl_tasks),
                        "heldout": tasks_dataset(heldout_tasks)})


def split_summary(datasets: Any) -> dict[str, dict[str, Any]]:
    """Per split: its rows and a content hash of what identifies them (the SFT samples' task and rollout, the tasks'
    id and content hash); for task splits also their rounds and how many distinct world seeds. The card states these."""
    summary: dict[str, dict[str, Any]] = {}
    for name, split in datasets.items():
        if name == "sft":
            keys = sorted([task, rollout] for task, rollout in zip(split["task_id"], split["rollout_idx"], strict=True))
            summary[name] = {"rows": len(split), "content_hash": content_hash(keys)}
        else:
            keys = sorted([task, digest] for task, digest in zip(split["task_id"], split["task_hash"], strict=True))
            summary[name] = {"rows": len(split), "content_hash": content_hash(keys),
                             "world_seeds": len(set(split["seed"])), "rounds": sorted(set(split["round"]))}
    return summary


def dataset_card(datasets: Any, source: str, hub: bool = False) -> str:
    """The card: a YAML header Hugging Face reads and the schema, counts, seeds, hashes in words. On the Hub the
    header also names each split's files as ``push_to_hub`` writes them (``data/<split>-*``); beside
    ``save_to_disk`` the splits are read with ``load_from_disk``, which needs no such names."""
    summary = split_summary(datasets)
    files = (["configs:", "- config_name: default", "  data_files:"]
             + [f"  - split: {name}\n    path: data/{name}-*" for name in datasets]) if hub else []
    header = ["---", "license: apache-2.0", "tags: [agents, tool-use, synthetic]", *files, "---", ""]
    lines = [f"# CompoWorld training data from `{source}`", "",
             (f"Written by compoworld {version('compoworld')}. Each task carries the seed of its world (`seed`), drawn from "
             "the run's seed and its round."), "", "| split | rows | content hash | world seeds | rounds |",
             "|---|---|---|---|---|"]
    for name, facts in summary.items():
        lines.append(f"| {name} | {facts['rows']} | `{facts['content_hash'][:16]}` | "
                     f"{facts.get('world_seeds', '—')} | {', '.join(facts.get('rounds', [])) or '—'} |")
    lines += ["", "## Schema", ""]
    for name, split in datasets.items():
        lines.append(f"- `{name}`: " + ", ".join(f"`{column}` ({feature})" for column, feature in split.features.items()))
    lines += ["", "## How the splits were drawn", "", HOW_SPLITS_ARE_DRAWN, "",
              ("The SFT samples are the verified oracle trajectories of `train` tasks (the sample format: `messages`, "
              "`tools`, `meta`). A task's `task_json` holds its seeded world, plan and executable rubric: enough to "
              "mount its world and score an episode with CompoWorld's environment."), ""]
    return "\n".join(header + lines)


def save(datasets: Any, target: Path, source: str) -> dict[str, int]:
    """``datasets`` saved under ``target`` (``save_to_disk``) with its card; rows per split."""
    target.mkdir(parents=True, exist_ok=True)
    datasets.save_to_disk(str(target))
    (target / "README.md").write_text(dataset_card(datasets, source), encoding="utf-8")
    return {name: len(split) for name, split in datasets.items()}


def push(datasets: Any, repo_id: str, source: str, private: bool = True) -> None:
    """Upload the splits and the card to the Hub (``HF_TOKEN``; needs the network)."""
    from huggingface_hub import HfApi

    datasets.push_to_hub(repo_id, private=private)
    HfApi().upload_file(path_or_fileobj=dataset_card(datasets, source, hub=True).encode(), path_in_repo="README.md",
                        repo_id=repo_id, repo_type="dataset")
