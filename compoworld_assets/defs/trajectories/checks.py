"""Checks beside the trajectory assets."""

import json

import dagster as dg
import polars as pl

from compoworld_assets.defs.expectation_checks import expectations_result
from compoworld_assets.defs.tasks.partitions import task_rounds
from compoworld_assets.engine import task_tables

VERIFICATION_YIELD_FLOOR = 0.9
# The checks read the round's tables lazily, and only the columns they use: its episodes are GBs at paper scale.


@dg.asset_check(asset="trajectories", blocking=True, additional_ins={"tool_catalog": dg.AssetIn()},
                description="Every tool call names a tool in the catalog.")
def calls_name_known_tools(trajectories: pl.LazyFrame, tool_catalog: pl.DataFrame) -> dg.AssetCheckResult:
    known = set(tool_catalog["qualified_name"].to_list())
    unknown = sorted({
        f"{c.service_id}_{c.tool}" for t in task_tables.trajectories_from_rows(trajectories) for c in t.calls
        if f"{c.service_id}_{c.tool}" not in known
    })
    return dg.AssetCheckResult(passed=not unknown, metadata={"unknown_tools": dg.MetadataValue.json(unknown[:20])})


@dg.asset_check(asset="verified_trajectories",
                description=f"At least {VERIFICATION_YIELD_FLOOR:.0%} of trajectories replay identically and pass.")
def verification_yield(verified_trajectories: pl.LazyFrame) -> dg.AssetCheckResult:
    verified_trajectories = verified_trajectories.select("passed").collect()
    total = len(verified_trajectories)
    kept = int(verified_trajectories["passed"].sum()) if total else 0
    share = kept / total if total else 0.0
    return dg.AssetCheckResult(passed=share >= VERIFICATION_YIELD_FLOOR,
                               metadata={"yield": round(share, 4), "kept": kept, "total": total})


@dg.asset_check(asset="verified_trajectories", blocking=True,
                description="A kept trajectory replayed identically and has a rubric score of 1.")
def kept_means_verified(verified_trajectories: pl.LazyFrame) -> dg.AssetCheckResult:
    verified_trajectories = verified_trajectories.select("passed", "replay_identical", "rubric_score",
                                                         "mismatches").collect()
    wrong = verified_trajectories.filter(pl.col("passed") & (~pl.col("replay_identical") | (pl.col("rubric_score") < 1.0)))
    mismatched = [r for r in verified_trajectories.filter(pl.col("passed"))["mismatches"].to_list() if json.loads(r)]
    return dg.AssetCheckResult(passed=wrong.is_empty() and not mismatched, metadata={"inconsistent": len(wrong)})


@dg.asset_check(asset="trajectories", partitions_def=task_rounds,
                description="Great Expectations suite: keys, finish reasons, call and message counts.")
def trajectories_expectations(context: dg.AssetCheckExecutionContext,
                              trajectories: pl.LazyFrame) -> dg.AssetCheckResult:
    return expectations_result(context, "trajectories", trajectories)


@dg.asset_check(asset="verified_trajectories", blocking=True, partitions_def=task_rounds,
                description="Great Expectations suite: keys, splits, rubric_score in [0, 1].")
def verified_trajectories_expectations(context: dg.AssetCheckExecutionContext,
                                       verified_trajectories: pl.LazyFrame) -> dg.AssetCheckResult:
    return expectations_result(context, "verified_trajectories", verified_trajectories)
