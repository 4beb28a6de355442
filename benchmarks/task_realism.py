"""How a stored task pool reads: purpose, decisions, rules in the world, traps, defects (issue 47's table).

Reads ``pipeline.sampled_tasks`` of a data dir (every round, or ``--round``) and prints the properties of
``compoworld_assets/engine/tasks/realism.py`` as JSON: shares of the pool (0–1), the defects by kind, distinct
sentences per 100 message bodies, the hard tasks' medians, and the share of tasks whose oracle trajectory was
kept by verification (replayed identically and passing its rubric).

    .venv/bin/python benchmarks/task_realism.py --data-dir data [--round r000]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))  # run as a plain script from any working directory

import duckdb

from compoworld_assets.engine import task_tables
from compoworld_assets.engine.tasks.realism import summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=REPO_ROOT / "data")
    parser.add_argument("--round", default=None, help="one task round (default: every round)")
    args = parser.parse_args()
    where, params = ("where round = ?", [args.round]) if args.round else ("", [])
    with duckdb.connect(str(args.data_dir / "compoworld.duckdb"), read_only=True) as con:
        tasks = task_tables.tasks_from_rows(con.execute(f"select * from pipeline.sampled_tasks {where}", params).pl())
        ids = {t.task_id for t in tasks}
        try:
            kept = {row[0] for row in con.execute("select distinct task_id from pipeline.verified_trajectories "
                                                  "where passed and replay_identical").fetchall()}
        except duckdb.Error:
            kept = set()
    result = summary(tasks)
    result["oracle_kept"] = round(len(ids & kept) / len(ids), 4) if ids and kept else None
    result["data_dir"] = str(args.data_dir)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
