"""Spec drop folder: when spec files appear or change, re-import specs and build new services."""


import hashlib
import os
from pathlib import Path

import dagster as dg

from sensors.jobs import build_services_job, import_specs_job

SPEC_SUFFIXES = {".json", ".yaml", ".yml", ".jsonl"}


def folder_fingerprint(folder: Path) -> str:
    """A hash over the names, sizes and contents of the spec files in ``folder``."""
    digest = hashlib.sha256()
    if folder.is_dir():
        for path in sorted(p for p in folder.rglob("*") if p.suffix in SPEC_SUFFIXES and p.is_file()):
            digest.update(str(path.relative_to(folder)).encode())
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()[:16]


@dg.sensor(jobs=[import_specs_job, build_services_job], minimum_interval_seconds=30,
           default_status=dg.DefaultSensorStatus.STOPPED)
def spec_drop_folder_sensor(context: dg.SensorEvaluationContext):
    """Import when the drop folder changes; then build any service partition never built."""
    folder = Path(os.environ.get("COMPOWORLD_SPEC_DIR", "specs"))
    fingerprint = folder_fingerprint(folder)
    if fingerprint != context.cursor:
        context.update_cursor(fingerprint)
        yield dg.RunRequest(run_key=f"specs-{fingerprint}", job_name=import_specs_job.name)
        return
    partitions = context.instance.get_dynamic_partitions("service")
    built = context.instance.get_materialized_partitions(dg.AssetKey("services"))
    unbuilt = sorted(set(partitions) - built)
    for partition in unbuilt:
        yield dg.RunRequest(run_key=f"build-{partition}-{fingerprint}", job_name=build_services_job.name,
                            partition_key=partition)
