"""Audit the task pool a main job stored: the value validator on every kept task, and its shares.

Replays every task of ``pipeline.sampled_tasks`` on its services (the data dir's world-model
cache, offline backend), runs the value validator (``engine/tasks/consistency.py``) on the gold
calls and prints the violations (the pool must have none), the quarantine by stage and by
validator rule, the shares per instruction style and difficulty level, and the gate pass share.

    .venv/bin/python benchmarks/task_pool_audit.py --data-dir data [--round r000]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))  # run as a plain script from any working directory

import duckdb

from compoworld_assets.engine import tables, task_tables
from compoworld_assets.engine.runtime.service_runtime import RuntimePool
from compoworld_assets.engine.tasks.audit import audit_lines, audit_pool
from compoworld_assets.engine.tasks.gate import QuarantinedTask
from compoworld_assets.engine.world_model.cache import CachedWorldModel, SqliteWorldModelCache
from compoworld_assets.engine.world_model.offline import OfflineWorldModel


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=REPO_ROOT / "data")
    parser.add_argument("--round", default="r000")
    args = parser.parse_args()
    with duckdb.connect(str(args.data_dir / "compoworld.duckdb"), read_only=True) as con:
        specs = tables.specs_from_rows(con.execute("select * from pipeline.service_specs").pl())
        built = tables.built_services_from_rows(specs, con.execute("select * from pipeline.services").pl())
        tasks = task_tables.tasks_from_rows(
            con.execute("select * from pipeline.sampled_tasks where round = ?", [args.round]).pl())
        quarantined = [QuarantinedTask(task_id=t, plan_hash=h, stage=s, reason=r) for t, h, s, r in con.execute(
            "select task_id, plan_hash, stage, reason from pipeline.quarantined_tasks where round = ?",
            [args.round]).fetchall()]
    world_model = CachedWorldModel(OfflineWorldModel(), SqliteWorldModelCache(args.data_dir / "world_model_cache.sqlite"))
    with RuntimePool(world_model) as pool:
        audit = audit_pool(tasks, quarantined, built, pool)
    print(f"round {args.round} of {args.data_dir}")
    print("\n".join(audit_lines(audit)))


if __name__ == "__main__":
    main()
