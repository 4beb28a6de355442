"""Row builders for the task and trajectory stages: engine objects ↔ fixed-schema polars tables."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import overload

import polars as pl

from compoworld_assets.engine.canonical import content_hash
from compoworld_assets.engine.rollout.verify import VerifiedTrajectory
from compoworld_assets.engine.tasks.gate import QuarantinedTask
from compoworld_assets.engine.tasks.model import Task, Trajectory
from compoworld_assets.engine.tasks.packed import PackedTask

TASK_SCHEMA = {
    "task_id": pl.String, "round": pl.String, "split": pl.String, "plan_hash": pl.String, "domain": pl.String,
    "services": pl.String, "n_services": pl.Int64, "n_steps": pl.Int64, "n_write_steps": pl.Int64,
    "n_criteria": pl.Int64, "capabilities": pl.String, "service_combination": pl.String,
    "instruction": pl.String, "task_hash": pl.String, "task_json": pl.String,
}
QUARANTINED_TASK_SCHEMA = {
    "task_id": pl.String, "round": pl.String, "plan_hash": pl.String, "stage": pl.String, "reason": pl.String,
}
RUBRIC_SCHEMA = {
    "criterion_key": pl.String, "task_id": pl.String, "round": pl.String, "criterion_id": pl.String,
    "kind": pl.String, "weight": pl.Float64, "description": pl.String, "check_json": pl.String,
}
TRAJECTORY_SCHEMA = {
    "trajectory_id": pl.String, "task_id": pl.String, "round": pl.String, "policy": pl.String,
    "rollout_idx": pl.Int64, "discover_mode": pl.String, "finish_reason": pl.String, "n_calls": pl.Int64,
    "n_messages": pl.Int64, "trajectory_hash": pl.String, "trajectory_json": pl.String,
}
VERIFIED_SCHEMA = {
    "trajectory_id": pl.String, "task_id": pl.String, "round": pl.String, "split": pl.String,
    "replay_identical": pl.Boolean, "rubric_score": pl.Float64, "passed": pl.Boolean, "mismatches": pl.String,
    "criteria_json": pl.String, "sample_json": pl.String,
}


def service_combination(services: Iterable[str]) -> str:
    return "+".join(sorted(services))


def task_rows(tasks: Iterable[Task | PackedTask], round_key: str) -> pl.DataFrame:
    """One row per task; packed tasks are stored as their JSON, without being unpacked."""
    rows = []
    for task in tasks:
        t, text = (task.head, task.json()) if isinstance(task, PackedTask) else (task, task.model_dump_json())
        rows.append({
            "task_id": t.task_id, "round": round_key, "split": t.split, "plan_hash": t.plan_hash, "domain": t.domain,
            "services": json.dumps(sorted(t.services)), "n_services": len(t.services), "n_steps": len(t.plan.steps),
            "n_write_steps": int(t.difficulty.get("write_steps", 0)), "n_criteria": len(t.rubric),
            "capabilities": json.dumps(sorted(t.capabilities)), "service_combination": service_combination(t.services),
            "instruction": t.instruction, "task_hash": content_hash(json.loads(text)), "task_json": text,
        })
    return pl.DataFrame(rows, schema=TASK_SCHEMA)


def quarantined_task_rows(entries: Iterable[QuarantinedTask], round_key: str) -> pl.DataFrame:
    rows = [{"task_id": q.task_id, "round": round_key, "plan_hash": q.plan_hash, "stage": q.stage,
             "reason": q.reason[:2000]} for q in entries]
    return pl.DataFrame(rows, schema=QUARANTINED_TASK_SCHEMA)


def tasks_from_rows(frame: pl.DataFrame) -> StoredTasks:
    return StoredTasks(frame)


class StoredTasks(Sequence[Task]):
    """The tasks of ``sampled_tasks`` rows, sorted by id, each parsed from its JSON when it is read.

    A round's tasks with their seeded worlds take ~1.7 MB each as objects at paper scale (GBs for a round), so a
    reader holds the few it works on, not the round. Slices are lists; :meth:`by_id` looks tasks up by id.
    """

    def __init__(self, frame: pl.DataFrame) -> None:
        frame = frame.sort("task_id")
        self.ids: list[str] = frame["task_id"].to_list()
        self._json = frame["task_json"]
        self.positions = {task_id: i for i, task_id in enumerate(self.ids)}

    def __len__(self) -> int:
        return len(self.ids)

    @overload
    def __getitem__(self, index: int) -> Task: ...

    @overload
    def __getitem__(self, index: slice) -> list[Task]: ...

    def __getitem__(self, index: int | slice) -> Task | list[Task]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if not -len(self) <= index < len(self):
            raise IndexError(index)
        return Task.model_validate_json(self._json[index])

    def __iter__(self) -> Iterator[Task]:
        return (self[i] for i in range(len(self)))

    def by_id(self) -> Mapping[str, Task]:
        return _TasksById(self)


class _TasksById(Mapping[str, Task]):
    def __init__(self, tasks: StoredTasks) -> None:
        self._tasks = tasks

    def __getitem__(self, task_id: str) -> Task:
        return self._tasks[self._tasks.positions[task_id]]

    def __iter__(self) -> Iterator[str]:
        return iter(self._tasks.ids)

    def __len__(self) -> int:
        return len(self._tasks)


def rubric_rows(tasks: Iterable[Task], round_key: str) -> pl.DataFrame:
    rows = [{
        "criterion_key": f"{t.task_id}/{c.id}", "task_id": t.task_id, "round": round_key, "criterion_id": c.id,
        "kind": c.kind, "weight": float(c.weight), "description": c.description,
        "check_json": json.dumps(c.check, sort_keys=True),
    } for t in tasks for c in t.rubric]
    return pl.DataFrame(rows, schema=RUBRIC_SCHEMA)


def trajectory_hash(trajectory: Trajectory) -> str:
    """Content hash of a trajectory (it holds no wall-clock value, so the same episode hashes the same)."""
    return content_hash(trajectory.model_dump(mode="json"))


def trajectory_id(trajectory: Trajectory) -> str:
    return f"{trajectory.task_id}/{trajectory.policy}/{trajectory.discover_mode}/{trajectory.rollout_idx}"


def trajectory_rows(trajectories: Iterable[Trajectory], round_key: str) -> pl.DataFrame:
    rows = [{
        "trajectory_id": trajectory_id(t), "task_id": t.task_id, "round": round_key, "policy": t.policy,
        "rollout_idx": t.rollout_idx, "discover_mode": t.discover_mode, "finish_reason": t.finish_reason,
        "n_calls": len(t.calls), "n_messages": len(t.messages), "trajectory_hash": trajectory_hash(t),
        "trajectory_json": t.model_dump_json(),
    } for t in trajectories]
    return pl.DataFrame(rows, schema=TRAJECTORY_SCHEMA)


def trajectories_from_rows(frame: pl.DataFrame) -> list[Trajectory]:
    return [Trajectory.model_validate_json(row) for row in frame.sort("trajectory_id")["trajectory_json"].to_list()]


def verified_rows(results: Iterable[tuple[Task, VerifiedTrajectory, dict]], round_key: str) -> pl.DataFrame:
    rows = [{
        "trajectory_id": trajectory_id(v.trajectory), "task_id": task.task_id, "round": round_key,
        "split": task.split, "replay_identical": v.replay_identical, "rubric_score": v.rubric_score,
        "passed": v.passed, "mismatches": json.dumps(v.mismatches),
        "criteria_json": json.dumps([c.model_dump() for c in v.criteria]),
        "sample_json": json.dumps(sample, sort_keys=True),
    } for task, v, sample in results]
    return pl.DataFrame(rows, schema=VERIFIED_SCHEMA)
