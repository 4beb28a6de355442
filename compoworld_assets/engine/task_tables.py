"""Row builders for the task and trajectory stages: engine objects ↔ fixed-schema polars tables."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import islice
from pathlib import Path
from typing import TypeVar, overload

import polars as pl
from pydantic import BaseModel

from compoworld_assets.engine.canonical import content_hash
from compoworld_assets.engine.rollout.verify import VerifiedTrajectory
from compoworld_assets.engine.runtime.service_runtime import combination_key
from compoworld_assets.engine.spill import SpillFile
from compoworld_assets.engine.tasks.gate import QuarantinedTask
from compoworld_assets.engine.tasks.model import Task, TaskRubric, Trajectory
from compoworld_assets.engine.tasks.packed import PackedTask, task_content_hash

M = TypeVar("M", bound=BaseModel)
_BATCH_ROWS = 64
"""Rows at a time when streaming a table out of or into files (a task row is ~650 KB at paper scale)."""

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


def _task_row(task: Task | PackedTask, round_key: str) -> dict:
    t, text = (task.head, task.json()) if isinstance(task, PackedTask) else (task, task.model_dump_json())
    known = task.task_hash if isinstance(task, PackedTask) else None
    return {
        "task_id": t.task_id, "round": round_key, "split": t.split, "plan_hash": t.plan_hash, "domain": t.domain,
        "services": json.dumps(sorted(t.services)), "n_services": len(t.services), "n_steps": len(t.plan.steps),
        "n_write_steps": int(t.difficulty.get("write_steps", 0)), "n_criteria": len(t.rubric),
        "capabilities": json.dumps(sorted(t.capabilities)), "service_combination": combination_key(t.services),
        "instruction": t.instruction, "task_hash": known or task_content_hash(text), "task_json": text,
    }


def task_rows(tasks: Iterable[Task | PackedTask], round_key: str) -> pl.DataFrame:
    """One row per task; packed tasks are stored as their JSON, without being unpacked."""
    return pl.DataFrame([_task_row(task, round_key) for task in tasks], schema=TASK_SCHEMA)


def spill_task_rows(tasks: Iterable[Task | PackedTask], round_key: str, directory: str | Path) -> pl.LazyFrame:
    """:func:`task_rows`, written ``_BATCH_ROWS`` tasks at a time into Parquet files under ``directory`` and
    scanned from there: a round's rows (GBs of task JSON at paper scale) are never held at once. The frame
    reads the files when collected, so ``directory`` must outlive it."""
    paths: list[Path] = []
    remaining = iter(tasks)
    while chunk := list(islice(remaining, _BATCH_ROWS)):
        paths.append(Path(directory, f"tasks-{len(paths):06d}.parquet"))
        task_rows(chunk, round_key).write_parquet(paths[-1], compression="lz4")
    return pl.scan_parquet(paths, schema=TASK_SCHEMA) if paths else pl.LazyFrame(schema=TASK_SCHEMA)


def quarantined_task_rows(entries: Iterable[QuarantinedTask], round_key: str) -> pl.DataFrame:
    rows = [{"task_id": q.task_id, "round": round_key, "plan_hash": q.plan_hash, "stage": q.stage,
             "reason": q.reason[:2000]} for q in entries]
    return pl.DataFrame(rows, schema=QUARANTINED_TASK_SCHEMA)


def tasks_from_rows(frame: pl.DataFrame | pl.LazyFrame) -> StoredTasks:
    return StoredTasks(frame)


def task_rubrics_from_rows(frame: pl.DataFrame | pl.LazyFrame) -> StoredRows[TaskRubric]:
    """The tasks of ``sampled_tasks`` rows as far as their rubrics go (:class:`TaskRubric`), by ``task_id``."""
    return StoredRows(frame, "task_id", "task_json", TaskRubric)


def referenced_tasks(sampled: pl.DataFrame | pl.LazyFrame, references: pl.DataFrame) -> StoredTasks:
    """The tasks ``references`` name by ``task_id`` and ``task_hash`` (the ``rl_tasks`` rows), read from
    ``sampled_tasks`` rows. Raises ``LookupError`` when one is no longer there as it was (its round sampled
    again since): a task is stored once, so a reference to a changed task must not silently train on another."""
    wanted = references.lazy().select("task_id", "task_hash")
    tasks = StoredTasks(sampled.lazy().join(wanted, on=["task_id", "task_hash"], how="semi"))
    missing = sorted(set(references["task_id"].to_list()) - set(tasks.ids))
    if missing:
        raise LookupError(f"{len(missing)} referenced task(s) are not in sampled_tasks as they were "
                          f"(e.g. {missing[0]}): their round was sampled again since")
    return tasks


class StoredRows(Sequence[M]):
    """The rows of a stored table sorted by ``key``, each parsed into ``model`` from its JSON column when read.

    The JSON texts are streamed out of the (lazy) frame into an anonymous temporary file and read back by
    offset: a round's tasks with their seeded worlds take ~650 KB each as JSON and ~1.7 MB as objects at paper
    scale (GBs for a round), so a reader holds the few rows it works on, not the round, nor its text. Slices
    are lists; ``extra`` columns are kept in memory, in key order (:attr:`extras`).
    """

    def __init__(self, frame: pl.DataFrame | pl.LazyFrame, key: str, payload: str, model: type[M],
                 extra: Sequence[str] = ()) -> None:
        self._model = model
        # Lives as long as the rows; unlinked already, so nothing is left behind even if the process dies.
        self._spill = SpillFile(prefix="cw-rows-")
        entries = []
        for batch in frame.lazy().select(key, payload, *extra).collect_batches(chunk_size=_BATCH_ROWS):
            for row in batch.iter_rows():
                entries.append((row[0], *self._spill.append(row[1].encode()), row[2:]))
        entries.sort(key=lambda entry: entry[0])
        self.ids: list[str] = [entry[0] for entry in entries]
        self._spans = [(entry[1], entry[2]) for entry in entries]
        self.extras: list[tuple] = [entry[3] for entry in entries]
        self.positions = {row_id: i for i, row_id in enumerate(self.ids)}

    def __len__(self) -> int:
        return len(self.ids)

    @overload
    def __getitem__(self, index: int) -> M: ...

    @overload
    def __getitem__(self, index: slice) -> list[M]: ...

    def __getitem__(self, index: int | slice) -> M | list[M]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if not -len(self) <= index < len(self):
            raise IndexError(index)
        return self._model.model_validate_json(self.text(index))

    def text(self, index: int) -> bytes:
        """Row ``index``'s JSON as stored, unparsed."""
        return self._spill.read(*self._spans[index])

    def __iter__(self) -> Iterator[M]:
        return (self[i] for i in range(len(self)))

    def by_id(self) -> Mapping[str, M]:
        return _RowsById(self)


class StoredTasks(StoredRows[Task]):
    """The tasks of ``sampled_tasks`` rows, by ``task_id``; :attr:`services` (each task's services, from the
    ``services`` column) lets a reader group them without parsing a task."""

    def __init__(self, frame: pl.DataFrame | pl.LazyFrame) -> None:
        super().__init__(frame, "task_id", "task_json", Task, extra=("services",))
        self.services: list[tuple[str, ...]] = [tuple(json.loads(services)) for (services,) in self.extras]


class StoredTrajectories(StoredRows[Trajectory]):
    """The trajectories of ``trajectories`` rows, by ``trajectory_id``, with each one's :attr:`task_ids`."""

    def __init__(self, frame: pl.DataFrame | pl.LazyFrame) -> None:
        super().__init__(frame, "trajectory_id", "trajectory_json", Trajectory, extra=("task_id",))
        self.task_ids: list[str] = [task_id for (task_id,) in self.extras]


class _RowsById(Mapping[str, M]):
    def __init__(self, rows: StoredRows[M]) -> None:
        self._rows = rows

    def __getitem__(self, row_id: str) -> M:
        return self._rows[self._rows.positions[row_id]]

    def __iter__(self) -> Iterator[str]:
        return iter(self._rows.ids)

    def __len__(self) -> int:
        return len(self._rows)


def rubric_rows(tasks: Iterable[Task | TaskRubric], round_key: str) -> pl.DataFrame:
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


def trajectory_row(trajectory: Trajectory, round_key: str) -> dict:
    t = trajectory
    return {
        "trajectory_id": trajectory_id(t), "task_id": t.task_id, "round": round_key, "policy": t.policy,
        "rollout_idx": t.rollout_idx, "discover_mode": t.discover_mode, "finish_reason": t.finish_reason,
        "n_calls": len(t.calls), "n_messages": len(t.messages), "trajectory_hash": trajectory_hash(t),
        "trajectory_json": t.model_dump_json(),
    }


def trajectory_rows(trajectories: Iterable[Trajectory | dict], round_key: str) -> pl.DataFrame:
    """Trajectories, or their :func:`trajectory_row` rows already made, as a table."""
    rows = [t if isinstance(t, dict) else trajectory_row(t, round_key) for t in trajectories]
    return pl.DataFrame(rows, schema=TRAJECTORY_SCHEMA)


def trajectories_from_rows(frame: pl.DataFrame | pl.LazyFrame) -> StoredTrajectories:
    return StoredTrajectories(frame)


def verified_row(task: Task, verified: VerifiedTrajectory, sample: dict, round_key: str) -> dict:
    return {
        "trajectory_id": trajectory_id(verified.trajectory), "task_id": task.task_id, "round": round_key,
        "split": task.split, "replay_identical": verified.replay_identical, "rubric_score": verified.rubric_score,
        "passed": verified.passed, "mismatches": json.dumps(verified.mismatches),
        "criteria_json": json.dumps([c.model_dump() for c in verified.criteria]),
        "sample_json": json.dumps(sample, sort_keys=True),
    }


def verified_rows(rows: Iterable[dict]) -> pl.DataFrame:
    """:func:`verified_row` rows as a table, sorted by trajectory id."""
    return pl.DataFrame(list(rows), schema=VERIFIED_SCHEMA).sort("trajectory_id")
