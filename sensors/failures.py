"""Record every failed run as one JSON line in ``<data dir>/run_failures.jsonl``.

A file, not a DuckDB table: the sensor must never wait on the database lock a running step holds.
The data dir is the ``storage`` resource's, like every other artifact's.
"""

import json
from datetime import UTC, datetime
from pathlib import Path

import dagster as dg

from resources import StorageResource

FAILURES_FILE = "run_failures.jsonl"


def failure_row(context: dg.RunFailureSensorContext) -> dict:
    run = context.dagster_run
    failed_steps = sorted({e.step_key for e in context.get_step_failure_events() if e.step_key})
    return {
        "run_id": run.run_id,
        "job_name": run.job_name,
        "partition": run.tags.get("dagster/partition"),
        "failed_steps": failed_steps,
        "message": context.failure_event.message,
        "recorded_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }


def read_failures(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@dg.run_failure_sensor(default_status=dg.DefaultSensorStatus.RUNNING, minimum_interval_seconds=30)
def run_failure_recorder(context: dg.RunFailureSensorContext, storage: StorageResource) -> None:
    """Append the failed run (id, job, partition, failed steps, message) to ``run_failures.jsonl``."""
    with storage.path(FAILURES_FILE).open("a") as out:
        out.write(json.dumps(failure_row(context), sort_keys=True) + "\n")
