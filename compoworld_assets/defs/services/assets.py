"""Stage 2: synthesize and verify one executable service per spec partition.

Failure isolation. One run builds many ``service`` partitions in one step (a single-run
backfill), and a Dagster step succeeds or fails as a whole, so one service's failure is not
allowed to fail the step: each partition is built by :func:`try_build_service` under
``ServicesConfig.service_time_limit_s``, and a spec row that does not parse, a stage that raises
(seed, synthesis, verification, world-model probe, ``DeadlineExceeded`` included) or a module
file that cannot be written becomes a row of ``quarantined_services`` (stage, exception type,
message). The step still materializes every partition of the run: a quarantined partition has
no ``services`` row (its previous build, of an older spec, is removed with it), carries
``quarantined`` / ``stage`` / ``error`` in its partition metadata, and the catalog, graph and
tasks go on without it. Rebuilding the partition retries it; a successful build removes its
quarantine row.

``quarantined_services`` is written by this step, as a Delta table like ``services`` (the ``services`` asset
cannot grow a second output: a multi-asset could not be selected as ``services`` alone) and
declared as an external asset the step reports a materialization of; its suite runs in the
checks beside ``services``.
"""

import json

import dagster as dg
import polars as pl

from compoworld_assets.defs.metadata import DATA_OWNERS, TABLE_KINDS, table_schema
from compoworld_assets.defs.services.partitions import service_partitions
from compoworld_assets.defs.services.versions import CONTENT_KEY, latest_materializations, run_data_version
from compoworld_assets.engine import tables
from compoworld_assets.engine.backends import BackendRecipe
from compoworld_assets.engine.canonical import content_hash
from compoworld_assets.engine.parallel_builds import BuildSettings, build_services, build_workers
from compoworld_assets.engine.service_build import ServiceBuild, ServiceFailure
from compoworld_assets.engine.specs.model import ServiceSpec
from compoworld_assets.engine.synthesis.offline import OFFLINE_SYNTHESIZER_VERSION
from compoworld_assets.quality.expectations import validate_table
from resources import LLMResource, SandboxResource, StorageResource
from resources.partitioned_tables import PARTITIONS_IO_MANAGER, store_partitions

BUILD_VERSION = "2"
# A new offline synthesizer release changes every module it writes, so it is part of the code version.
SERVICES_CODE_VERSION = f"{BUILD_VERSION}+offline-{OFFLINE_SYNTHESIZER_VERSION}"
QUARANTINE_TABLE = "quarantined_services"

quarantined_services = dg.AssetSpec(
    QUARANTINE_TABLE,
    deps=["services"],
    partitions_def=service_partitions,
    group_name="services",
    description=("Services whose build failed, one row per service: the stage (spec, seed, synthesis, "
                 "verification, world_model_probe, store), exception type and message. Written by the "
                 "services step; its checks run beside services."),
    metadata={"partition_expr": "service_id", "primary_key": "service_id"},
)


class ServicesConfig(dg.Config):
    seed: int = 7
    rows_per_entity: int = 5
    service_time_limit_s: float = 900.0
    """Wall-clock budget for one service's seed, synthesis, verification and probe (cooperative)."""
    build_workers: int = 0
    """Processes that build services side by side; 0: :func:`build_workers` of the number of services."""


@dg.asset(
    partitions_def=service_partitions,
    backfill_policy=dg.BackfillPolicy.single_run(),
    metadata={"partition_expr": "service_id", "primary_key": "service_id"},
    group_name="services",
    code_version=SERVICES_CODE_VERSION,
    io_manager_key=PARTITIONS_IO_MANAGER,
    kinds=TABLE_KINDS,
    owners=DATA_OWNERS,
)
def services(
    context: dg.AssetExecutionContext,
    config: ServicesConfig,
    service_spec: pl.DataFrame,
    llm: LLMResource,
    sandbox: SandboxResource,
    storage: StorageResource,
) -> dg.Output[pl.DataFrame]:
    """Executable services: module source and hash, and one verification verdict per tool.

    Tools that fail verification or cannot be implemented fall back to the world model,
    which is probed once per tool for a type-valid answer. Each partition reads only its own
    ``service_spec`` partition, so only a change to its own spec makes it stale. A service whose
    build fails is quarantined (see the module docstring) and the others are built.
    """
    _refuse_invalid_spec_rows(service_spec)
    rows = {row["service_id"]: row for row in service_spec.iter_rows(named=True)}
    missing = sorted(set(context.partition_keys) - set(rows))
    if missing:
        raise dg.Failure(f"no spec for service partition(s) {missing}: re-materialize service_specs")
    synthesizer = llm.synthesizer(sandbox.executor_factory(trusted=llm.backend == "offline"))
    outcomes = _build_partitions([rows[s] for s in sorted(context.partition_keys)], config,
                                 BackendRecipe(llm.settings(), sandbox.limits(), str(storage.world_model_cache)), storage)
    built: list[pl.DataFrame] = []
    failures: list[ServiceFailure] = []
    contents: dict[str, str] = {}
    for service_id, outcome in zip(sorted(context.partition_keys), outcomes, strict=True):
        if isinstance(outcome, ServiceFailure):
            failures.append(outcome)
            contents[service_id] = content_hash(outcome.model_dump(mode="json"))
            context.log.warning(f"{service_id}: quarantined at {outcome.stage}: "
                                f"{outcome.error_type}: {outcome.message[:300]}")
            context.add_asset_metadata({"dagster/row_count": 0, "quarantined": True, "stage": outcome.stage,
                                        "error": f"{outcome.error_type}: {outcome.message[:500]}",
                                        CONTENT_KEY: contents[service_id]}, partition_key=service_id)
            continue
        row = outcome.row(0, named=True)
        world_model_tools = [v["tool"] for v in json.loads(row["verdicts_json"]) if v["implementation"] == "world_model"]
        context.log.info(f"{service_id}: {row['n_verified']}/{row['n_tools']} tools verified, "
                         f"{row['n_world_model']} on the world model")
        built.append(outcome)
        contents[service_id] = content_hash(row)
        context.add_asset_metadata({
            "dagster/row_count": 1, "quarantined": False, "spec_hash": row["spec_hash"],
            "module_hash": row["module_hash"], "n_tools": row["n_tools"],
            "n_verified": row["n_verified"], "n_world_model": row["n_world_model"],
            "world_model_tools": dg.MetadataValue.json(world_model_tools), CONTENT_KEY: contents[service_id],
        }, partition_key=service_id)
    quarantine = tables.quarantined_service_rows(failures, synthesizer.name)
    # This run's partitions are replaced, and rows of services no longer registered dropped, in one commit.
    store_partitions(storage, QUARANTINE_TABLE, quarantine, "service_id", context.partition_keys,
                     keep_only=context.instance.get_dynamic_partitions(service_partitions.name))
    for service_id in context.partition_keys:
        context.log_event(dg.AssetMaterialization(QUARANTINE_TABLE, partition=service_id, metadata={
            "quarantined": service_id in set(quarantine["service_id"].to_list())}))
    frame = pl.concat(built) if built else tables.service_rows([])
    version = run_data_version(contents, latest_materializations(context.instance, context.asset_key,
                                                                 sorted(contents)))
    context.log.info(f"{len(frame)} services built ({int(frame['n_tools'].sum())} tools, "
                     f"{int(frame['n_verified'].sum())} verified), {len(quarantine)} quarantined")
    # Metadata here is every partition's: what describes one service is added per partition above.
    return dg.Output(frame, data_version=dg.DataVersion(version), metadata={
        "dagster/column_schema": dg.MetadataValue.table_schema(table_schema("services", frame)),
        "synthesizer": synthesizer.name,
    })


def _build_partitions(rows: list[dict], config: ServicesConfig, backends: BackendRecipe,
                      storage: StorageResource) -> list[pl.DataFrame | ServiceFailure]:
    """Each row's build as its one-row ``services`` table, or its failure, in order; a failure at any step
    (spec parsing and module storage included) is an outcome. The builds run in ``config.build_workers``
    processes (see :func:`build_workers`); each is stored and made a row as soon as it is built, so a large
    library's builds (their seed states above all) are never all held at once."""
    specs: dict[str, ServiceSpec] = {}
    outcomes: dict[str, pl.DataFrame | ServiceFailure] = {}
    spec_hashes = {row["service_id"]: row["spec_hash"] for row in rows}
    for row in rows:
        try:
            specs[row["service_id"]] = ServiceSpec.model_validate_json(row["spec_json"])
        except ValueError as error:
            outcomes[row["service_id"]] = ServiceFailure.from_exception(row["service_id"], row["spec_hash"], "spec",
                                                                        error)

    def stored(outcome: ServiceBuild | ServiceFailure) -> pl.DataFrame | ServiceFailure:
        if isinstance(outcome, ServiceFailure):
            return outcome
        service_id = outcome.spec.id
        try:
            storage.path("modules", service_id, f"{outcome.module.source_hash}.py").write_text(outcome.module.source)
        except (OSError, ValueError) as error:
            return ServiceFailure.from_exception(service_id, spec_hashes[service_id], "store", error)
        return tables.service_rows([outcome])

    settings = BuildSettings(seed=config.seed, rows_per_entity=config.rows_per_entity,
                             time_limit_s=config.service_time_limit_s)
    workers = config.build_workers or build_workers(len(specs))
    built = build_services(list(specs.values()), backends, settings, workers, keep=stored)
    outcomes.update(zip(specs, built, strict=True))
    return [outcomes[row["service_id"]] for row in rows]


def _refuse_invalid_spec_rows(rows: pl.DataFrame) -> None:
    """Run the ``service_specs`` suite on this build's own rows.

    The blocking checks on ``service_specs`` stop downstream steps only inside the import's run;
    a build reads the per-service view in a run of its own, so it checks its rows itself.
    """
    quality = validate_table("service_specs", rows)
    if quality.critical_failures:
        failures = [f"{f['expectation']}({f['column']}): {f['failing_rows'] or f['observed_value']}"
                    for f in quality.critical_failures]
        raise dg.Failure(description="spec rows fail the service_specs suite; fix or quarantine the spec and "
                                     "re-import: " + "; ".join(failures)[:2000],
                         metadata={"failed_expectations": dg.MetadataValue.json(quality.critical_failures)})
