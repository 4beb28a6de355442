import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "rollout"))
from toy_world import toy_task

from compoworld_assets.engine.task_tables import (
    referenced_tasks,
    rubric_rows,
    task_rows,
    task_rubrics_from_rows,
    tasks_from_rows,
    trajectories_from_rows,
    trajectory_rows,
)
from compoworld_assets.engine.tasks.model import Trajectory


def test_stored_tasks_are_read_sorted_by_id_and_parsed_when_read():
    tasks = [toy_task(task_id) for task_id in ("toy-3", "toy-1", "toy-2")]
    stored = tasks_from_rows(task_rows(tasks, "r0"))
    assert len(stored) == 3 and stored.ids == ["toy-1", "toy-2", "toy-3"]
    assert stored[0] == tasks[1] and stored[-1] == tasks[0]
    assert stored[0] is not stored[0]  # parsed on every read: nothing held
    assert [t.task_id for t in stored] == stored.ids and [t.task_id for t in stored[1:]] == ["toy-2", "toy-3"]
    by_id = stored.by_id()
    assert by_id["toy-2"] == tasks[2] and list(by_id) == stored.ids and len(by_id) == 3
    with pytest.raises(IndexError):
        stored[3]
    with pytest.raises(KeyError):
        by_id["toy-9"]


def test_the_rubric_table_reads_the_same_from_task_rubrics_as_from_whole_tasks():
    rows = task_rows([toy_task(task_id) for task_id in ("toy-2", "toy-1")], "r0")
    rubrics = task_rubrics_from_rows(rows)
    assert rubrics.ids == ["toy-1", "toy-2"] and rubrics[0].instruction == tasks_from_rows(rows)[0].instruction
    assert rubric_rows(rubrics, "r0").equals(rubric_rows(tasks_from_rows(rows), "r0"))


def test_stored_tasks_stream_out_of_a_lazy_frame_with_their_services_and_hold_no_text():
    tasks = [toy_task(task_id) for task_id in ("toy-2", "toy-1")]
    stored = tasks_from_rows(task_rows(tasks, "r0").lazy())
    assert stored.ids == ["toy-1", "toy-2"] and stored[1] == tasks[0]
    assert stored.services == [tuple(sorted(tasks[1].services)), tuple(sorted(tasks[0].services))]
    assert not any(isinstance(value, str) and len(value) > 100 for value in vars(stored).values())


def test_stored_trajectories_are_sorted_by_id_and_name_their_tasks():
    episodes = [Trajectory(task_id=task_id, policy="oracle", discover_mode="direct", rollout_idx=k, messages=[],
                           calls=[], final_state_hash="h", finish_reason="submitted")
                for task_id, k in (("b", 0), ("a", 1), ("a", 0))]
    stored = trajectories_from_rows(trajectory_rows(episodes, "r0"))
    assert stored.ids == ["a/oracle/direct/0", "a/oracle/direct/1", "b/oracle/direct/0"]
    assert stored.task_ids == ["a", "a", "b"] and stored[2] == episodes[0] and list(stored) == [
        episodes[2], episodes[1], episodes[0]]


def test_referenced_tasks_are_read_by_id_and_hash_and_a_changed_one_is_refused():
    tasks = [toy_task(task_id) for task_id in ("toy-3", "toy-1", "toy-2")]
    rows = task_rows(tasks, "r0")
    references = rows.filter(rows["task_id"] != "toy-2").select("task_id", "task_hash")
    stored = referenced_tasks(rows.lazy(), references)
    assert stored.ids == ["toy-1", "toy-3"] and list(stored) == [tasks[1], tasks[0]]
    assert stored.text(0) == rows.filter(rows["task_id"] == "toy-1")["task_json"][0].encode()
    resampled = rows.with_columns(task_hash=rows["task_hash"].str.replace("^.", "x"))  # the round sampled again
    with pytest.raises(LookupError, match="2 referenced task"):
        referenced_tasks(resampled, references)
