"""Checks beside the training datasets."""

import json

import dagster as dg
import polars as pl

from compoworld_assets.defs.expectation_checks import expectations_result


@dg.asset_check(pool="duckdb", asset="sft_dataset", blocking=True,
                description="Every SFT sample has tools, an assistant turn with a tool call, and score 1.")
def sft_samples_complete(sft_dataset: pl.DataFrame) -> dg.AssetCheckResult:
    bad = []
    for row in sft_dataset.iter_rows(named=True):
        sample = json.loads(row["sample_json"])
        has_call = any(m.get("role") == "assistant" and m.get("tool_calls") for m in sample["messages"])
        if not sample["tools"] or not has_call or sample["meta"]["score"] != 1.0:
            bad.append(row["trajectory_id"])
    return dg.AssetCheckResult(passed=not bad and len(sft_dataset) > 0,
                               metadata={"samples": len(sft_dataset), "bad": dg.MetadataValue.json(bad[:20])})


@dg.asset_check(pool="duckdb", asset="rl_tasks", blocking=True, description="Every RL task has at least one rubric criterion.")
def rl_tasks_have_rubrics(rl_tasks: pl.DataFrame) -> dg.AssetCheckResult:
    empty = rl_tasks.filter(pl.col("n_criteria") < 1)
    return dg.AssetCheckResult(passed=empty.is_empty() and len(rl_tasks) > 0,
                               metadata={"tasks": len(rl_tasks), "without_criteria": len(empty)})


@dg.asset_check(asset="sft_dataset", blocking=True,
                pool="duckdb",
                description="Great Expectations suite: keyed, non-empty, parseable samples.")
def sft_dataset_expectations(context: dg.AssetCheckExecutionContext,
                             sft_dataset: pl.DataFrame) -> dg.AssetCheckResult:
    return expectations_result(context, "sft_dataset", sft_dataset)


@dg.asset_check(asset="rl_tasks", blocking=True,
                pool="duckdb",
                description="Great Expectations suite: keyed, non-empty, every task with criteria.")
def rl_tasks_expectations(context: dg.AssetCheckExecutionContext,
                          rl_tasks: pl.DataFrame) -> dg.AssetCheckResult:
    return expectations_result(context, "rl_tasks", rl_tasks)
