"""The Dagster code location: every stage's assets and checks, resources, sensors and jobs."""

from __future__ import annotations

import os

import dagster as dg

from compoworld_assets.defs.catalog import assets as catalog_assets
from compoworld_assets.defs.catalog import checks as catalog_checks
from compoworld_assets.defs.datasets import assets as datasets_assets
from compoworld_assets.defs.datasets import checks as datasets_checks
from compoworld_assets.defs.evaluation import assets as evaluation_assets
from compoworld_assets.defs.evaluation import checks as evaluation_checks
from compoworld_assets.defs.evaluation import sensors as evaluation_sensors
from compoworld_assets.defs.graph import assets as graph_assets
from compoworld_assets.defs.graph import checks as graph_checks
from compoworld_assets.defs.reporting import assets as reporting_assets
from compoworld_assets.defs.services import assets as services_assets
from compoworld_assets.defs.services import checks as services_checks
from compoworld_assets.defs.specs import assets as specs_assets
from compoworld_assets.defs.specs import checks as specs_checks
from compoworld_assets.defs.tasks import assets as tasks_assets
from compoworld_assets.defs.tasks import checks as tasks_checks
from compoworld_assets.defs.training import assets as training_assets
from compoworld_assets.defs.training import checks as training_checks
from compoworld_assets.defs.trajectories import assets as trajectories_assets
from compoworld_assets.defs.trajectories import checks as trajectories_checks
from compoworld_assets.launch import FORKSERVER_EXECUTOR
from resources import (
    PARTITIONS_IO_MANAGER,
    ComputeResource,
    LLMResource,
    SandboxResource,
    SpecSourcesResource,
    duckdb_io_manager,
    partitions_io_manager,
    storage_resource,
)
from sensors import jobs as pipeline_jobs
from sensors import schedules, spec_drop_folder
from sensors.automation import automation_sensor
from sensors.failures import run_failure_recorder
from sensors.stale_runs import dead_run_reaper

ASSET_MODULES = [specs_assets, services_assets, catalog_assets, graph_assets, tasks_assets, trajectories_assets,
                 datasets_assets, training_assets, evaluation_assets, reporting_assets]
CHECK_MODULES = [specs_checks, services_checks, catalog_checks, graph_checks, tasks_checks, trajectories_checks,
                 datasets_checks, training_checks, evaluation_checks]


def build_resources(data_dir: str | None = None) -> dict[str, object]:
    """Resources of the embedded default, rooted at ``data_dir`` (env ``COMPOWORLD_DATA_DIR``)."""
    data_dir = data_dir or os.environ.get("COMPOWORLD_DATA_DIR", "data")
    storage = storage_resource(data_dir)
    return {
        "io_manager": duckdb_io_manager(storage),
        PARTITIONS_IO_MANAGER: partitions_io_manager(storage),
        "storage": storage,
        "llm": LLMResource(),
        "sandbox": SandboxResource(),
        "spec_sources": SpecSourcesResource(drop_folder=os.environ.get("COMPOWORLD_SPEC_DIR", "specs")),
        "dbt": reporting_assets.dbt_resource(),
        "compute": ComputeResource(shared_dir=os.path.join(data_dir, "compute")),
    }


def all_assets() -> list:
    """Every asset of the stage modules, plus the external tables they cannot collect (the per-service spec
    view, the quarantined services the services step writes)."""
    return [*dg.load_assets_from_modules(ASSET_MODULES), specs_assets.service_spec,
            services_assets.quarantined_services]


def all_asset_checks() -> list:
    return dg.load_asset_checks_from_modules(CHECK_MODULES)


def _executor_config(config: dict) -> dict:
    """Runs launched from the UI, schedules and sensors run each step in its own process, forked from
    a server that has imported this module once: a step starts in about a second instead of the ~15 s
    an import of Dagster, dbt and the definitions costs. ``in_process: true`` (what the CLI sets,
    :mod:`compoworld_assets.launch`) runs every step in the run's own process."""
    if config["in_process"]:
        return {"in_process": {}}
    return {"multiprocess": {"start_method": {"forkserver": {"preload_modules": ["compoworld_assets.definitions"]}}}}


EXECUTOR = dg.multi_or_in_process_executor.configured(
    _executor_config, name=FORKSERVER_EXECUTOR,
    config_schema={"in_process": dg.Field(bool, default_value=False,
                                          description="run every step in the run's process")})

# Where the steps of this location's jobs run, by COMPOWORLD_EXECUTOR: processes of this machine (the default) or
# Kubernetes Jobs.
STEP_EXECUTORS = ("forkserver", "k8s")


def step_executor(name: str | None = None) -> dg.ExecutorDefinition:
    """The executor named by ``name`` (default: COMPOWORLD_EXECUTOR, else ``forkserver``).

    ``forkserver`` is :data:`EXECUTOR`. ``k8s`` runs each step as a Kubernetes Job whose pod runs ``dagster api
    execute_step`` (dagster-k8s ``k8s_job_executor``): the run config's ``execution.config`` names the image,
    namespace and env (docs/scaling.md), and the pods must share the data folder and the Dagster instance.
    """
    name = name or os.environ.get("COMPOWORLD_EXECUTOR") or "forkserver"
    if name not in STEP_EXECUTORS:
        raise ValueError(f"COMPOWORLD_EXECUTOR={name!r}: use one of {', '.join(STEP_EXECUTORS)}")
    if name == "k8s":
        from dagster_k8s import k8s_job_executor

        return k8s_job_executor
    return EXECUTOR


@dg.definitions
def defs() -> dg.Definitions:
    return dg.Definitions(
        assets=all_assets(),
        asset_checks=all_asset_checks(),
        jobs=[*pipeline_jobs.ALL_JOBS, evaluation_sensors.benchmark_job],
        schedules=schedules.ALL_SCHEDULES,
        sensors=[spec_drop_folder.spec_drop_folder_sensor, run_failure_recorder, dead_run_reaper, automation_sensor,
                 evaluation_sensors.sft_checkpoint_sensor, evaluation_sensors.rl_checkpoint_sensor],
        resources=build_resources(),
        executor=step_executor(),
    )
