"""A stored task and the world to play it on, read from a data folder's DuckDB file (no Dagster).

The built services, their seed states and the task come from the tables the pipeline wrote; simulated tools are
answered by the offline world model behind the data folder's cache, as in the pipeline's rollouts.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from compoworld_assets.engine import tables
from compoworld_assets.engine.backends import LLMSettings, world_model
from compoworld_assets.engine.rollout.worlds import PooledWorldFactory
from compoworld_assets.engine.tasks.model import Task

DATABASE = "compoworld.duckdb"
WORLD_MODEL_CACHE = "world_model_cache.sqlite"


@dataclass
class StoredWorld:
    """The tasks of a data folder by id, and a factory of fresh worlds for them."""

    tasks: dict[str, Task]
    factory: PooledWorldFactory

    def close(self) -> None:
        self.factory.close()


def load_stored_world(data_dir: str | Path, task_ids: list[str] | None = None) -> StoredWorld:
    """The tasks ``task_ids`` (every stored task when None) of ``data_dir`` and their world factory.

    Raises ``FileNotFoundError`` without a database and ``KeyError`` naming a task id that is not stored."""
    import duckdb

    database = Path(data_dir) / DATABASE
    if not database.exists():
        raise FileNotFoundError(f"no database at {database}: run `compoworld run --data-dir {data_dir}` first")
    with duckdb.connect(str(database), read_only=True) as con:
        query = "select task_json from pipeline.sampled_tasks"
        rows = (con.execute(query + " where task_id in (select unnest($ids))", {"ids": task_ids}).fetchall()
                if task_ids is not None else con.execute(query).fetchall())
        specs = tables.specs_from_rows(con.execute("select * from pipeline.service_specs").pl())
        services = con.execute("select * from pipeline.services").pl()
    tasks = {task.task_id: task for task in (Task.model_validate_json(text) for (text,) in rows)}
    missing = sorted(set(task_ids or ()) - set(tasks))
    if missing:
        raise KeyError(f"no task {missing[0]!r} in {database}")
    factory = PooledWorldFactory(tables.built_services_from_rows(specs, services), tables.seed_states_from_rows(services),
                                 world_model(LLMSettings(), Path(data_dir) / WORLD_MODEL_CACHE))
    return StoredWorld(tasks, factory)
