"""Spec drop folder: when spec files appear or change, re-import specs, then build just what changed.

Two evaluations make one round trip. The first sees a new folder fingerprint and requests
``import_specs_job``, which registers a ``service`` partition per new service id and records every
service's spec hash. Later evaluations request one ``build_services_job`` run per partition that
was never built or whose spec hash changed (see :mod:`sensors.lineage`); the run key names the
spec hash, so a partition is requested once per spec version.
"""

import hashlib
from pathlib import Path

import dagster as dg

from resources import SpecSourcesResource
from sensors.jobs import build_services_job, import_specs_job
from sensors.lineage import current_spec_hashes, stale_services

SPEC_SUFFIXES = {".json", ".yaml", ".yml", ".jsonl"}


def folder_fingerprint(folder: Path) -> str:
    """A hash over the names and contents of the spec files in ``folder``."""
    digest = hashlib.sha256()
    if folder.is_dir():
        for path in sorted(p for p in folder.rglob("*") if p.suffix in SPEC_SUFFIXES and p.is_file()):
            digest.update(str(path.relative_to(folder)).encode())
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()[:16]


@dg.sensor(jobs=[import_specs_job, build_services_job], minimum_interval_seconds=30,
           default_status=dg.DefaultSensorStatus.STOPPED)
def spec_drop_folder_sensor(context: dg.SensorEvaluationContext, spec_sources: SpecSourcesResource):
    """Import when the drop folder changes (the ``spec_sources`` resource's); then build each service
    partition that is stale."""
    fingerprint = folder_fingerprint(Path(spec_sources.drop_folder))
    if fingerprint != context.cursor:
        context.update_cursor(fingerprint)
        return dg.RunRequest(run_key=f"specs-{fingerprint}", job_name=import_specs_job.name)
    stale = stale_services(context.instance)
    if not stale:
        return dg.SkipReason("every service partition is built from its current spec")
    spec_hashes = current_spec_hashes(context.instance)
    return [
        dg.RunRequest(run_key=f"build-{partition}-{spec_hashes.get(partition, 'unknown')[:16]}",
                      job_name=build_services_job.name, partition_key=partition,
                      tags={"compoworld/reason": reason})
        for partition, reason in sorted(stale.items())
    ]
