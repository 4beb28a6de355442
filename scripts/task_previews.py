"""Write docs/examples/tasks.md from the tasks the main job stored (``compoworld run``).

    .venv/bin/python scripts/task_previews.py --data-dir data --seed 7 --n 20 --out docs/examples/tasks.md
"""

from __future__ import annotations

import argparse
from pathlib import Path

import duckdb

from compoworld_assets.engine.tasks.model import Task
from compoworld_assets.engine.tasks.preview import tasks_markdown

SCHEMA = "pipeline"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default="data")
    parser.add_argument("--seed", type=int, default=7, help="picks which tasks are shown")
    parser.add_argument("--n", type=int, default=20)
    parser.add_argument("--out", default="docs/examples/tasks.md")
    args = parser.parse_args()
    database = Path(args.data_dir) / "compoworld.duckdb"
    with duckdb.connect(str(database), read_only=True) as con:
        rows = con.sql(f"select task_json from {SCHEMA}.sampled_tasks order by task_id").fetchall()
    tasks = [Task.model_validate_json(row[0]) for row in rows]
    page = tasks_markdown(tasks, args.seed, args.n, title="Example tasks from the main job",
                          source="`sampled_tasks` of `compoworld run` on the embedded default")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(page, encoding="utf-8")
    print(f"wrote {args.out}: {min(args.n, len(tasks))} of {len(tasks)} tasks")


if __name__ == "__main__":
    main()
