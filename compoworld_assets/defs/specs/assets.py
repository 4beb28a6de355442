"""Stage 1: import tool specifications; quarantine what cannot be imported.

``service_specs`` is the whole catalog in one table. Every consumer of the catalog is stale when
any spec changes, which is right for them, but a service build reads only its own spec. So the
build reads ``service_spec``: the same rows seen one service partition at a time (a view over
``service_specs``), whose data version per partition is that service's spec hash, recorded as a
materialization and an observation of the partition at every import (the view is rewritten then).
Both, because Dagster reads an external partitioned input two ways: a build records the versions
of its input partitions from materializations (with observations alone it recorded the hash of an
empty string as the version it read), while the stale-status resolver compares observations made
after the build's input pointer (the latest materialization) with the one before it. A changed
spec gives its partition a new data version, and Dagster marks exactly that ``services`` partition
stale; re-importing unchanged specs records the same versions and leaves every other partition
fresh.
"""


import dagster as dg
import duckdb
import polars as pl

from compoworld_assets.defs.metadata import DATA_OWNERS, TABLE_KINDS, table_metadata
from compoworld_assets.defs.services.partitions import service_partitions
from compoworld_assets.engine import tables
from resources import SpecSourcesResource, StorageResource
from resources.storage import SCHEMA

IMPORTER_VERSION = "1"
# The tag Dagster reads an observation's or a materialization's data version from.
DATA_VERSION_TAG = "dagster/data_version"

service_spec = dg.AssetSpec(
    "service_spec",
    deps=["service_specs"],
    partitions_def=service_partitions,
    group_name="services",
    description=("One service's spec (a per-service view over service_specs); its data version is the "
                 "spec hash, recorded at every import, so a changed spec stales only its own service."),
    metadata={"partition_expr": "service_id", "primary_key": "service_id"},
)


@dg.multi_asset(
    outs={
        "service_specs": dg.AssetOut(
            description="One row per imported service spec (typed entities and tools as JSON).",
            code_version=IMPORTER_VERSION, metadata={"primary_key": "service_id"}, kinds=TABLE_KINDS,
            owners=DATA_OWNERS,
        ),
        "quarantined_specs": dg.AssetOut(
            description="Specs or fragments that could not be imported or validated, with the reason.",
            code_version=IMPORTER_VERSION, metadata={"primary_key": "quarantine_id"}, kinds=TABLE_KINDS,
            owners=DATA_OWNERS,
        ),
    },
    group_name="services",
    pool="duckdb",
)
def import_specs(context: dg.AssetExecutionContext, spec_sources: SpecSourcesResource, storage: StorageResource):
    """Import every configured source; register one ``service`` partition per service id and record
    each partition's ``service_spec`` version."""
    result = spec_sources.load()
    specs = tables.spec_rows(result.specs)
    quarantined = tables.quarantine_rows(result.quarantined)
    ids = specs["service_id"].to_list()
    registered = set(context.instance.get_dynamic_partitions(service_partitions.name))
    new_ids = [i for i in ids if i not in registered]
    if new_ids:
        context.instance.add_dynamic_partitions(service_partitions.name, new_ids)
    for gone in sorted(registered - set(ids)):
        context.instance.delete_dynamic_partition(service_partitions.name, gone)
    yield dg.Output(specs, "service_specs", data_version=dg.DataVersion(_frame_hash(specs, "spec_hash")),
                    metadata={
                        **table_metadata("service_specs", specs),
                        "n_specs": len(specs), "n_tools": int(specs["n_tools"].sum()),
                        "spec_hashes": dg.MetadataValue.json(dict(zip(ids, specs["spec_hash"].to_list(),
                                                                      strict=True))),
                        "domains": dg.MetadataValue.json(sorted(set(specs["domain"].to_list()))),
                        "new_partitions": len(new_ids),
                        "removed_partitions": len(registered - set(ids)),
                    })
    _create_service_spec_view(storage.database)
    versions = {service_id: spec_hash[:16] for service_id, spec_hash in zip(ids, specs["spec_hash"], strict=True)}
    # Observations first, then materializations: the build's recorded input pointer is the latest
    # materialization, so every observation of this import lies before it (see the module docstring).
    for event in (dg.AssetObservation, dg.AssetMaterialization):
        for service_id, version in versions.items():
            context.log_event(event(service_spec.key, partition=service_id, tags={DATA_VERSION_TAG: version}))
    reasons = quarantined.group_by("reason").len().sort("len", descending=True).head(10)
    yield dg.Output(quarantined, "quarantined_specs",
                    data_version=dg.DataVersion(_frame_hash(quarantined, "quarantine_id")),
                    metadata={
                        **table_metadata("quarantined_specs", quarantined),
                        "n_quarantined": len(quarantined),
                        "top_reasons": dg.MetadataValue.md(_markdown(reasons)),
                    })


def _create_service_spec_view(database: str) -> None:
    """``service_spec`` rows are the catalog's rows; the IO manager filters them by partition."""
    with duckdb.connect(database) as connection:
        connection.execute(f"create or replace view {SCHEMA}.{service_spec.key.path[-1]} as "
                           f"select * from {SCHEMA}.service_specs")


def _frame_hash(frame: pl.DataFrame, column: str) -> str:
    from compoworld_assets.engine.canonical import content_hash

    return content_hash(sorted(frame[column].to_list()))[:16]


def _markdown(frame: pl.DataFrame) -> str:
    if frame.is_empty():
        return "_none_"
    lines = ["| reason | count |", "|---|---|"]
    lines += [f"| {r['reason'][:120].replace('|', '/')} | {r['len']} |" for r in frame.iter_rows(named=True)]
    return "\n".join(lines)
