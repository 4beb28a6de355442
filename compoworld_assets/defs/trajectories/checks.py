"""Checks beside the trajectory assets."""

import json

import dagster as dg
import polars as pl

from compoworld_assets.defs.expectation_checks import expectations_result
from compoworld_assets.defs.tasks.partitions import task_rounds
from compoworld_assets.engine import task_tables
from compoworld_assets.engine.rollout.policy import OraclePolicy
from compoworld_assets.engine.tasks.grounding import ungrounded_values

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


@dg.asset_check(asset="trajectories", blocking=True,
                additional_ins={"tool_catalog": dg.AssetIn(), "sampled_tasks": dg.AssetIn()},
                description="No gold run grades, or hands to a later call, a world-model value its world does not hold.")
def simulated_values_grounded(trajectories: pl.LazyFrame, tool_catalog: pl.DataFrame,
                              sampled_tasks: pl.LazyFrame) -> dg.AssetCheckResult:
    """The oracle's episodes are the tasks' gold runs: each value one of them takes from a world-model answer
    (reported, or an argument of a later call) must be held by the task's world (:mod:`~compoworld_assets.engine.
    tasks.grounding`). Only episodes that call a simulated tool are read with their tasks."""
    simulated = set(tool_catalog.filter(pl.col("implementation") == "world_model")["qualified_name"].to_list())
    episodes = [t for t in task_tables.trajectories_from_rows(trajectories.filter(pl.col("policy") == OraclePolicy.name))
                if any(f"{c.service_id}_{c.tool}" in simulated for c in t.calls)]
    wanted = sorted({t.task_id for t in episodes})
    tasks = task_tables.tasks_from_rows(sampled_tasks.filter(pl.col("task_id").is_in(wanted)))
    worlds = {task.task_id: task.initial_state for task in tasks}
    ungrounded = {t.task_id: [f"{where}: {detail}" for where, detail in problems]
                  for t in episodes if t.task_id in worlds
                  if (problems := ungrounded_values(worlds[t.task_id], t.calls, t.final_answer, simulated))}
    return dg.AssetCheckResult(passed=not ungrounded, metadata={
        "episodes_with_simulated_calls": len(episodes), "tasks_with_ungrounded_values": len(ungrounded),
        "examples": dg.MetadataValue.json(dict(sorted(ungrounded.items())[:10]))})


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
