"""Checks beside the tool catalog: names agents see must be unique and typed."""


import json

import dagster as dg
import polars as pl

from compoworld_assets.defs.expectation_checks import expectations_result
from compoworld_assets.engine.types import is_known_type


@dg.asset_check(pool="duckdb", asset="tool_catalog", blocking=True, description="Qualified tool names are unique.")
def qualified_names_unique(tool_catalog: pl.DataFrame) -> dg.AssetCheckResult:
    dupes = tool_catalog.group_by("qualified_name").len().filter(pl.col("len") > 1)["qualified_name"].to_list()
    return dg.AssetCheckResult(passed=not dupes, metadata={"duplicates": dg.MetadataValue.json(dupes[:50])})


@dg.asset_check(pool="duckdb", asset="tool_catalog", blocking=True,
                description="Every tool is implemented by code or the world model, and types are registered.")
def tools_usable(tool_catalog: pl.DataFrame) -> dg.AssetCheckResult:
    bad_impl = tool_catalog.filter(~pl.col("implementation").is_in(["code", "world_model"]))
    unknown = sorted({
        t for column in ("input_types", "output_types") for cell in tool_catalog[column].to_list()
        for t in json.loads(cell).values() if not is_known_type(t)
    })
    return dg.AssetCheckResult(passed=bad_impl.is_empty() and not unknown, metadata={
        "bad_implementation": len(bad_impl), "unknown_types": dg.MetadataValue.json(unknown[:50])})


@dg.asset_check(pool="duckdb", asset="tool_catalog", description="No tool is left unusable (failed code and failed simulation).")
def no_unusable_tools(tool_catalog: pl.DataFrame) -> dg.AssetCheckResult:
    unusable = tool_catalog.filter(pl.col("verdict") == "unusable")["qualified_name"].to_list()
    return dg.AssetCheckResult(passed=not unusable, metadata={"unusable": dg.MetadataValue.json(unusable[:50])})


@dg.asset_check(asset="tool_catalog", blocking=True,
                pool="duckdb",
                description="Great Expectations suite: keys, value sets, verdicts, world-model share.")
def tool_catalog_expectations(context: dg.AssetCheckExecutionContext,
                              tool_catalog: pl.DataFrame) -> dg.AssetCheckResult:
    return expectations_result(context, "tool_catalog", tool_catalog)
