"""Checks beside the services asset."""


import json

import dagster as dg
import polars as pl

from compoworld_assets.defs.expectation_checks import expectations_result, partition_expectations
from compoworld_assets.defs.services.assets import QUARANTINE_TABLE
from compoworld_assets.defs.services.partitions import service_partitions
from compoworld_assets.engine import tables
from compoworld_assets.engine.canonical import text_hash
from resources import StorageResource
from resources.partitioned_tables import load_table


@dg.asset_check(asset="services", blocking=True,
                description="Each stored module's hash matches its source, and every tool has a verdict.")
def modules_intact(services: pl.DataFrame) -> dg.AssetCheckResult:
    bad_hash = [r["service_id"] for r in services.iter_rows(named=True)
                if text_hash(r["module_source"]) != r["module_hash"]]
    incomplete = [r["service_id"] for r in services.iter_rows(named=True)
                  if len(json.loads(r["verdicts_json"])) != r["n_tools"]]
    return dg.AssetCheckResult(passed=not bad_hash and not incomplete, metadata={
        "hash_mismatch": dg.MetadataValue.json(bad_hash), "missing_verdicts": dg.MetadataValue.json(incomplete)})


@dg.asset_check(asset="services",
                description="At least 80% of tools are verified code (the rest: world model).")
def verified_share(services: pl.DataFrame) -> dg.AssetCheckResult:
    tools = int(services["n_tools"].sum())
    share = int(services["n_verified"].sum()) / tools if tools else 0.0
    return dg.AssetCheckResult(passed=share >= 0.8, metadata={"verified_share": round(share, 4), "tools": tools})


@dg.asset_check(asset="services", blocking=True, partitions_def=service_partitions,
                description="Great Expectations suite: keys, consistent tool counts, modules and verdicts "
                            "(one evaluation per service partition).")
def services_expectations(context: dg.AssetCheckExecutionContext, services: pl.DataFrame):
    yield from partition_expectations(context, "services", services, partition_column="service_id")


@dg.asset_check(asset=QUARANTINE_TABLE, additional_ins={"services": dg.AssetIn("services")},
                description="Great Expectations suite: every quarantined service names its stage, exception "
                            "type and message.")
def quarantined_services_expectations(context: dg.AssetCheckExecutionContext, services: pl.DataFrame,
                                      storage: StorageResource) -> dg.AssetCheckResult:
    """``services`` is an input only so that, in a run that builds services, this check runs after them."""
    return expectations_result(context, QUARANTINE_TABLE, _quarantine(storage))


@dg.asset_check(asset="services", additional_deps=[QUARANTINE_TABLE],
                description="No service is quarantined (WARN: the others were built; the metadata lists each "
                            "quarantined service's stage and error, as quarantined_services stores them).")
def no_quarantined_services(storage: StorageResource) -> dg.AssetCheckResult:
    quarantine = _quarantine(storage)
    listed = {r["service_id"]: f"{r['stage']}: {r['error_type']}: {r['message'][:200]}"
              for r in quarantine.iter_rows(named=True)}
    return dg.AssetCheckResult(passed=quarantine.is_empty(), severity=dg.AssetCheckSeverity.WARN,
                               metadata={"n_quarantined": len(quarantine),
                                         "quarantined": dg.MetadataValue.json(dict(list(listed.items())[:50]))})


def _quarantine(storage: StorageResource) -> pl.DataFrame:
    empty = tables.quarantined_service_rows([], "")
    return load_table(storage, QUARANTINE_TABLE, "service_id", empty).sort("service_id")
