"""Run the code location's own jobs from this process, as runs the UI shows and can re-execute.

``dagster.materialize`` and ``JobDefinition.execute_in_process`` run an ephemeral job that no code
location has: the UI's timeline has no row for it and "Re-execute" stays disabled because the run
names no job origin. :func:`launch` runs a job of :data:`LOCATION` (a named job, or ``__ASSET_JOB``
for an asset selection, the job the UI's "Materialize" button runs) on a run that carries the
origin ``workspace.yaml`` loads, so the UI finds the job, lists the run under it and re-executes it
on its own run launcher. Steps run in this process (``execution: in_process``): a forked step
server would cost each CLI run a second import of the definitions.

Every run is tagged with what launched it (:func:`command_tags`: command, seed, hash of the run
config) and with this process (:func:`sensors.stale_runs.launcher_tags`).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import dagster as dg
from dagster._core.definitions.reconstruct import ReconstructableJob, ReconstructableRepository
from dagster._core.execution.api import execute_run
from dagster._core.remote_origin import ManagedGrpcPythonEnvCodeLocationOrigin, RemoteRepositoryOrigin
from dagster._core.types.loadable_target_origin import LoadableTargetOrigin

from compoworld_assets.engine.canonical import content_hash

LOCATION = "compoworld_assets.definitions"
REPOSITORY = "__repository__"  # the name Dagster gives the repository of a ``Definitions`` object
ASSET_JOB = "__ASSET_JOB"
REPO_ROOT = Path(__file__).resolve().parent.parent
COMMAND_TAG = "compoworld/command"
SEED_TAG = "compoworld/seed"
CONFIG_HASH_TAG = "compoworld/config_hash"
IN_PROCESS = {"execution": {"config": {"in_process": True}}}
FORKSERVER_EXECUTOR = "forkserver_or_in_process"  # the name of definitions.EXECUTOR


def command_tags(command: str, run_config: Mapping[str, Any], seed: int | None = None) -> dict[str, str]:
    """Tags saying what launched a run: the CLI command, its seed and a hash of the run config."""
    tags = {COMMAND_TAG: command, CONFIG_HASH_TAG: content_hash(dict(run_config))[:12]}
    if seed is not None:
        tags[SEED_TAG] = str(seed)
    return tags


def repository() -> ReconstructableRepository:
    return ReconstructableRepository.for_module(LOCATION, "defs", working_directory=str(REPO_ROOT))


def _repository_origin() -> RemoteRepositoryOrigin:
    """The origin of the location ``workspace.yaml`` loads (a Python module, named after it)."""
    target = LoadableTargetOrigin(executable_path=sys.executable, module_name=LOCATION,
                                  working_directory=str(REPO_ROOT))
    return RemoteRepositoryOrigin(ManagedGrpcPythonEnvCodeLocationOrigin(target, LOCATION), REPOSITORY)


def _job(job_name: str, assets: Iterable[dg.AssetKey] | None) -> ReconstructableJob:
    job = repository().get_reconstructable_job(job_name)
    if assets is None:
        return job
    return job.get_subset(asset_selection=frozenset(assets))


def launch(instance: dg.DagsterInstance, job_name: str, *, run_config: Mapping[str, Any] | None = None,
           tags: Mapping[str, str] | None = None, partition_key: str | dg.MultiPartitionKey | None = None,
           assets: Iterable[dg.AssetKey] | None = None) -> dg.ExecutionResult:
    """Run ``job_name`` (only ``assets`` of it, with their checks, when given) in this process.

    ``partition_key`` adds the partition tags the UI's launchpad would; a partition range goes in
    ``tags`` (``dagster/asset_partition_range_start`` / ``_end``). Raises on a failed step.
    """
    job = _job(job_name, assets)
    definition = job.get_definition()
    # On this machine's executor the steps run in this process; on Kubernetes they are pods (run_config sets them up).
    in_process = IN_PROCESS if definition.executor_def.name == FORKSERVER_EXECUTOR else {}
    config = {**in_process, **dict(run_config or {})}
    all_tags = dict(tags or {})
    if partition_key is not None:
        all_tags.update(definition.get_tags_for_partition_key(partition_key, selected_asset_keys=None))
    run = instance.create_run_for_job(
        definition, run_config=config, tags=all_tags, job_code_origin=job.get_python_origin(),
        remote_job_origin=_repository_origin().get_job_origin(job_name),
        asset_selection=frozenset(assets) if assets is not None else None)
    return execute_run(job, run, instance, raise_on_error=True)
