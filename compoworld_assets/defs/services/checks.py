"""Checks beside the services asset."""


import json

import dagster as dg
import polars as pl

from compoworld_assets.defs.expectation_checks import expectations_result
from compoworld_assets.defs.services.partitions import service_partitions
from compoworld_assets.engine.canonical import text_hash


@dg.asset_check(asset="services", blocking=True,
                description="Each stored module's hash matches its source, and every tool has a verdict.")
def modules_intact(services: pl.DataFrame) -> dg.AssetCheckResult:
    bad_hash = [r["service_id"] for r in services.iter_rows(named=True)
                if text_hash(r["module_source"]) != r["module_hash"]]
    incomplete = [r["service_id"] for r in services.iter_rows(named=True)
                  if len(json.loads(r["verdicts_json"])) != r["n_tools"]]
    return dg.AssetCheckResult(passed=not bad_hash and not incomplete, metadata={
        "hash_mismatch": dg.MetadataValue.json(bad_hash), "missing_verdicts": dg.MetadataValue.json(incomplete)})


@dg.asset_check(asset="services", description="At least 80% of tools are verified code (the rest: world model).")
def verified_share(services: pl.DataFrame) -> dg.AssetCheckResult:
    tools = int(services["n_tools"].sum())
    share = int(services["n_verified"].sum()) / tools if tools else 0.0
    return dg.AssetCheckResult(passed=share >= 0.8, metadata={"verified_share": round(share, 4), "tools": tools})


@dg.asset_check(asset="services", blocking=True, partitions_def=service_partitions,
                pool="duckdb",
                description="Great Expectations suite: keys, consistent tool counts, modules and verdicts.")
def services_expectations(context: dg.AssetCheckExecutionContext,
                          services: pl.DataFrame) -> dg.AssetCheckResult:
    return expectations_result(context, "services", services)
