"""Export verified trajectories in the CompoWorld sample format, and read them back.

One sample per JSON line::

    {"tools": [...OpenAI tools the agent saw...],
     "messages": [...OpenAI chat messages with tool calls...],
     "meta": {"format": "compoworld-sample/1", "task_id", "rollout_idx", "policy", "split", "domain",
              "services", "capabilities", "discover_mode", "finish_reason",
              "rubric_score", "score", "criteria", "n_tool_calls", "n_real_tool_calls", "n_steps",
              "final_answer", "final_state_hash", "calls", "environment", "episode"}}

``rubric_score`` is the rubric engine's score of the replayed final state; ``score`` is the
verification verdict (1.0 when the trajectory replays identically and reaches the threshold,
else 0.0). ``n_tool_calls`` counts every tool call in the messages (discovery and
``submit_answer`` included), ``n_real_tool_calls`` the service calls that reached the world,
``n_steps`` the assistant turns. ``calls`` holds the structured service calls (what replay
needs); ``environment`` the mounted services' versions, spec hashes and module hashes;
``episode`` the rest of the rollout's own metadata (retries, timings).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from compoworld_assets.engine.rollout.verify import VerifiedTrajectory
from compoworld_assets.engine.tasks.model import Task, ToolCallRecord, Trajectory

SAMPLE_FORMAT = "compoworld-sample/1"
DATASET_SCALAR_COLUMNS = ("task_id", "rollout_idx", "policy", "split", "domain", "discover_mode", "finish_reason",
                          "rubric_score", "score", "n_tool_calls", "n_real_tool_calls", "n_steps")


def sample_record(task: Task, verified: VerifiedTrajectory) -> dict[str, Any]:
    """One trajectory of ``task`` with its verification, as a sample-format record."""
    trajectory = verified.trajectory
    if trajectory.task_id != task.task_id:
        raise ValueError(f"trajectory of task {trajectory.task_id!r} exported with task {task.task_id!r}")
    assistant_turns = [m for m in trajectory.messages if m.get("role") == "assistant"]
    episode = {k: v for k, v in trajectory.meta.items() if k != "environment"}
    meta = {
        "format": SAMPLE_FORMAT,
        "task_id": task.task_id,
        "rollout_idx": trajectory.rollout_idx,
        "policy": trajectory.policy,
        "split": task.split,
        "domain": task.domain,
        "services": list(task.services),
        "capabilities": list(task.capabilities),
        "discover_mode": trajectory.discover_mode,
        "finish_reason": trajectory.finish_reason,
        "rubric_score": verified.rubric_score,
        "score": 1.0 if verified.passed else 0.0,
        "criteria": [c.model_dump() for c in verified.criteria],
        "n_tool_calls": sum(len(m.get("tool_calls") or []) for m in assistant_turns),
        "n_real_tool_calls": len(trajectory.calls),
        "n_steps": len(assistant_turns),
        "final_answer": trajectory.final_answer,
        "final_state_hash": trajectory.final_state_hash,
        "calls": [c.model_dump(mode="json") for c in trajectory.calls],
        "environment": trajectory.meta.get("environment", {}),
        "episode": episode,
    }
    return {"tools": trajectory.tools, "messages": trajectory.messages, "meta": meta}


def write_samples(records: Iterable[dict[str, Any]], path: str | Path) -> int:
    """Write records as JSON lines; returns how many were written."""
    count = 0
    with Path(path).open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n")
            count += 1
    return count


def read_samples(path: str | Path) -> list[dict[str, Any]]:
    with Path(path).open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def trajectory_from_sample(sample: dict[str, Any]) -> Trajectory:
    """The :class:`Trajectory` a sample-format record was exported from."""
    meta = sample["meta"]
    if meta.get("format") != SAMPLE_FORMAT:
        raise ValueError(f"not a {SAMPLE_FORMAT} record: format {meta.get('format')!r}")
    episode_meta = dict(meta.get("episode") or {})
    if meta.get("environment"):
        episode_meta["environment"] = meta["environment"]
    return Trajectory(task_id=meta["task_id"], policy=meta["policy"], rollout_idx=meta["rollout_idx"],
                      messages=sample["messages"], tools=sample["tools"],
                      calls=[ToolCallRecord.model_validate(c) for c in meta["calls"]],
                      final_answer=meta["final_answer"], final_state_hash=meta["final_state_hash"],
                      finish_reason=meta["finish_reason"], discover_mode=meta["discover_mode"], meta=episode_meta)


def import_trajectories(path: str | Path) -> list[Trajectory]:
    return [trajectory_from_sample(sample) for sample in read_samples(path)]


def samples_dataset(records: Iterable[dict[str, Any]]) -> Any:
    """A Hugging Face ``datasets.Dataset`` of sample records (needs the ``train`` extra).

    Columns: ``messages`` and ``tools`` (lists of JSON objects, kept exactly), ``meta`` (the
    whole meta object) and the scalar meta fields as their own columns for filtering.
    """
    from datasets import Dataset, Features, Json, List, Value

    scalar_types = {"rollout_idx": "int64", "rubric_score": "float64", "score": "float64", "n_tool_calls": "int64",
                    "n_real_tool_calls": "int64", "n_steps": "int64"}
    features = Features({"messages": List(Json()), "tools": List(Json()), "meta": Json(),
                         **{name: Value(scalar_types.get(name, "string")) for name in DATASET_SCALAR_COLUMNS}})
    rows = [{"messages": r["messages"], "tools": r["tools"], "meta": r["meta"],
             **{name: r["meta"][name] for name in DATASET_SCALAR_COLUMNS}} for r in records]
    return Dataset.from_list(rows, features=features)
