import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "rollout"))
from toy_world import toy_task

from compoworld_assets.engine.task_tables import task_rows, tasks_from_rows


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
