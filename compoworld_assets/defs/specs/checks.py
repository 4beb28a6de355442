"""Checks beside the spec assets: bad specs must not reach synthesis."""


import dagster as dg
import duckdb
import polars as pl

from compoworld_assets.defs.expectation_checks import expectations_result
from compoworld_assets.defs.specs.assets import DATA_VERSION_TAG, SCHEMA, service_spec
from compoworld_assets.engine.specs.model import ServiceSpec
from resources import StorageResource


@dg.asset_check(asset="service_specs", blocking=True, pool="duckdb",
                description="Service ids are unique and non-empty.")
def service_ids_unique(service_specs: pl.DataFrame) -> dg.AssetCheckResult:
    dupes = service_specs.group_by("service_id").len().filter(pl.col("len") > 1)["service_id"].to_list()
    return dg.AssetCheckResult(passed=not dupes and len(service_specs) > 0,
                               metadata={"duplicates": dg.MetadataValue.json(dupes), "rows": len(service_specs)})


@dg.asset_check(asset="service_specs", blocking=True, pool="duckdb",
                description="Every stored spec re-validates and its hash matches its JSON.")
def specs_revalidate(service_specs: pl.DataFrame) -> dg.AssetCheckResult:
    failures = []
    for row in service_specs.iter_rows(named=True):
        try:
            spec = ServiceSpec.model_validate_json(row["spec_json"])
        except ValueError as exc:
            failures.append({"service_id": row["service_id"], "error": str(exc)[:300]})
            continue
        if spec.content_hash() != row["spec_hash"]:
            failures.append({"service_id": row["service_id"], "error": "spec_hash mismatch"})
    return dg.AssetCheckResult(passed=not failures, metadata={"failures": dg.MetadataValue.json(failures[:20])})


@dg.asset_check(asset="quarantined_specs", pool="duckdb",
                description="Every quarantined entry says where it came from and why.")
def quarantine_entries_explained(quarantined_specs: pl.DataFrame) -> dg.AssetCheckResult:
    unexplained = quarantined_specs.filter(
        (pl.col("reason").str.strip_chars() == "") | (pl.col("location").str.strip_chars() == "")
    )
    return dg.AssetCheckResult(passed=unexplained.is_empty(),
                               metadata={"rows": len(quarantined_specs), "unexplained": len(unexplained)})


@dg.asset_check(asset="service_specs", blocking=True,
                pool="duckdb",
                description="Great Expectations suite: keys, required columns, value ranges and sets.")
def service_specs_expectations(context: dg.AssetCheckExecutionContext,
                               service_specs: pl.DataFrame) -> dg.AssetCheckResult:
    return expectations_result(context, "service_specs", service_specs)


@dg.asset_check(asset="quarantined_specs",
                pool="duckdb",
                description="Great Expectations suite: every entry keyed and explained.")
def quarantined_specs_expectations(context: dg.AssetCheckExecutionContext,
                                   quarantined_specs: pl.DataFrame) -> dg.AssetCheckResult:
    return expectations_result(context, "quarantined_specs", quarantined_specs)


@dg.asset_check(asset=service_spec.key, additional_ins={"service_specs": dg.AssetIn("service_specs")}, pool="duckdb",
                description="The per-service view shows the catalog's rows, and every service partition's "
                            "recorded data version is its spec hash.")
def service_spec_versions_match(context: dg.AssetCheckExecutionContext, service_specs: pl.DataFrame,
                                storage: StorageResource) -> dg.AssetCheckResult:
    expected = dict(zip(service_specs["service_id"].to_list(), service_specs["spec_hash"].to_list(), strict=True))
    with duckdb.connect(storage.database, read_only=True) as connection:
        viewed = dict(connection.execute(
            f"select service_id, spec_hash from {SCHEMA}.{service_spec.key.path[-1]}").fetchall())
    recorded = {}
    for service_id in expected:
        record = context.instance.get_latest_data_version_record(service_spec.key, partition_key=service_id)
        event = record.event_log_entry.asset_materialization if record else None
        recorded[service_id] = event.tags.get(DATA_VERSION_TAG) if event else None
    mismatched = sorted(sid for sid, spec_hash in expected.items() if recorded.get(sid) != spec_hash[:16])
    return dg.AssetCheckResult(passed=viewed == expected and not mismatched, metadata={
        "services": len(expected), "view_matches_catalog": viewed == expected,
        "version_mismatches": dg.MetadataValue.json(mismatched[:20])})
