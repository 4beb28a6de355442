"""Stage 2: synthesize and verify one executable service per spec partition."""


import dagster as dg
import polars as pl

from compoworld_assets.defs.services.partitions import service_partitions
from compoworld_assets.engine import tables
from compoworld_assets.engine.canonical import content_hash
from compoworld_assets.engine.service_build import build_service
from compoworld_assets.engine.synthesis.offline import OFFLINE_SYNTHESIZER_VERSION
from compoworld_assets.quality.expectations import validate_table
from resources import LLMResource, SandboxResource, StorageResource

BUILD_VERSION = "1"
# A new offline synthesizer release changes every module it writes, so it is part of the code version.
SERVICES_CODE_VERSION = f"{BUILD_VERSION}+offline-{OFFLINE_SYNTHESIZER_VERSION}"


class ServicesConfig(dg.Config):
    seed: int = 7
    rows_per_entity: int = 5


@dg.asset(
    partitions_def=service_partitions,
    backfill_policy=dg.BackfillPolicy.single_run(),
    metadata={"partition_expr": "service_id", "primary_key": "service_id"},
    group_name="services",
    code_version=SERVICES_CODE_VERSION,
    pool="duckdb",
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
    ``service_spec`` partition, so only a change to its own spec makes it stale.
    """
    _refuse_invalid_spec_rows(service_spec)
    specs = tables.specs_from_rows(service_spec)
    missing = sorted(set(context.partition_keys) - set(specs))
    if missing:
        raise dg.Failure(f"no spec for service partition(s) {missing}: re-materialize service_specs")
    executor_factory = sandbox.executor_factory(trusted=llm.backend == "offline")
    synthesizer = llm.synthesizer(executor_factory)
    world_model = llm.world_model(storage.world_model_cache)
    builds = []
    for service_id in sorted(context.partition_keys):
        build = build_service(specs[service_id], synthesizer, executor_factory, world_model,
                              seed=config.seed, rows_per_entity=config.rows_per_entity)
        storage.path("modules", service_id, f"{build.module.source_hash}.py").write_text(build.module.source)
        context.log.info(f"{service_id}: {len(build.verified_tools)}/{len(build.spec.tools)} tools verified, "
                         f"{len(build.world_model_tools)} on the world model")
        builds.append(build)
        context.add_asset_metadata({"spec_hash": build.spec.content_hash(),
                                    "module_hash": build.module.source_hash}, partition_key=service_id)
    frame = tables.service_rows(builds)
    built_from = frame.select("service_id", "spec_hash", "module_hash", "seed_state_hash").rows()
    return dg.Output(frame, data_version=dg.DataVersion(content_hash(built_from)[:16]), metadata={
        "n_services": len(frame),
        "n_tools": int(frame["n_tools"].sum()),
        "n_verified": int(frame["n_verified"].sum()),
        "n_world_model": int(frame["n_world_model"].sum()),
        "synthesizer": synthesizer.name,
    })


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
