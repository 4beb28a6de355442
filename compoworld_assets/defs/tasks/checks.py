"""Checks beside the task assets: what reaches rollouts must be unique, cross-service and gated."""

import json

import dagster as dg
import polars as pl

from compoworld_assets.defs.expectation_checks import expectations_result
from compoworld_assets.defs.tasks.partitions import task_rounds
from compoworld_assets.engine.tasks.splits import TRAINED_SPLITS

GATE_PASS_FLOOR = 0.9
# No service in more than this share of a round's tasks, once the round's tasks span SPREAD_MIN_SERVICES.
SPREAD_CEILING = 0.25
SPREAD_MIN_SERVICES = 8
# The checks read sampled_tasks lazily and only the columns they use: a round's task_json is GBs at paper scale.


@dg.asset_check(asset="sampled_tasks", blocking=True, description="Plan hashes are unique within a round.")
def plan_hashes_unique(sampled_tasks: pl.LazyFrame) -> dg.AssetCheckResult:
    """The check reads every round; two rounds may draw the same walk."""
    sampled_tasks = sampled_tasks.select("round", "plan_hash").collect()
    dupes = int(sampled_tasks.select(pl.struct("round", "plan_hash").is_duplicated()).to_series().sum())
    return dg.AssetCheckResult(passed=dupes == 0 and len(sampled_tasks) > 0,
                               metadata={"duplicates": dupes, "tasks": len(sampled_tasks)})


@dg.asset_check(asset="sampled_tasks", blocking=True,
                description="Every task touches at least two services; lengths stay in the sampler's range.")
def tasks_cross_services(sampled_tasks: pl.LazyFrame) -> dg.AssetCheckResult:
    sampled_tasks = sampled_tasks.select("n_services", "n_steps").collect()
    single = sampled_tasks.filter(pl.col("n_services") < 2)
    lengths = sampled_tasks["n_steps"]
    return dg.AssetCheckResult(passed=single.is_empty() and (len(lengths) == 0 or lengths.min() >= 2), metadata={
        "single_service_tasks": len(single),
        "length_distribution": dg.MetadataValue.json(
            {str(k): v for k, v in sampled_tasks.group_by("n_steps").len().sort("n_steps").iter_rows()}),
        "services_distribution": dg.MetadataValue.json(
            {str(k): v for k, v in sampled_tasks.group_by("n_services").len().sort("n_services").iter_rows()}),
    })


@dg.asset_check(asset="sampled_tasks", blocking=True,
                description="Held-out tasks use service combinations never seen in train or RL.")
def heldout_combinations_unseen(sampled_tasks: pl.LazyFrame) -> dg.AssetCheckResult:
    sampled_tasks = sampled_tasks.select("split", "service_combination").collect()
    heldout = set(sampled_tasks.filter(pl.col("split") == "heldout")["service_combination"].to_list())
    # Seen means trained on: a held-out combination whose services a round did not train is that round's
    # transfer split, which no one trains on either (it may be held out in another round).
    seen = set(sampled_tasks.filter(pl.col("split").is_in(TRAINED_SPLITS))["service_combination"].to_list())
    leaked = sorted(heldout & seen)
    return dg.AssetCheckResult(passed=not leaked, metadata={
        "heldout_combinations": len(heldout), "leaked": dg.MetadataValue.json(leaked[:20])})


@dg.asset_check(asset="sampled_tasks", additional_ins={"quarantined_tasks": dg.AssetIn()},
                description=f"At least {GATE_PASS_FLOOR:.0%} of instantiated tasks pass the verifier self-test.")
def gate_pass_share(sampled_tasks: pl.LazyFrame, quarantined_tasks: pl.DataFrame) -> dg.AssetCheckResult:
    sampled_tasks = sampled_tasks.select("task_id").collect()
    failed_gate = quarantined_tasks.filter(pl.col("stage") == "gate")
    gated = len(sampled_tasks) + len(failed_gate)
    share = len(sampled_tasks) / gated if gated else 0.0
    return dg.AssetCheckResult(passed=share >= GATE_PASS_FLOOR, metadata={
        "gate_pass_share": round(share, 4), "failed_gate": len(failed_gate)})


@dg.asset_check(asset="sampled_tasks", partitions_def=task_rounds,
                description=f"No service is in more than {SPREAD_CEILING:.0%} of a round's tasks (a warning).")
def service_spread(sampled_tasks: pl.LazyFrame) -> dg.AssetCheckResult:
    """A round that is mostly one service teaches that service, whatever the library holds (walks that drew
    tools put one of two 1,000-tool GitHub specs in 56% of a paper-scale round). Rounds whose tasks span
    fewer than :data:`SPREAD_MIN_SERVICES` services cannot spread and pass. Checked per round, as it is sampled:
    an earlier crowded round in the table does not fail a new one."""
    combinations = sampled_tasks.select("round", "service_combination").collect()
    tasks_in = dict(combinations.group_by("round").len().iter_rows())
    in_tasks = (combinations.select("round", pl.col("service_combination").str.split("+").alias("service"))
                .explode("service").group_by("round", "service").len())
    rounds = {}
    for (round_key,), frame in in_tasks.group_by("round"):
        tasks = tasks_in[round_key]
        top = frame.sort(["len", "service"], descending=[True, False]).row(0, named=True)
        rounds[round_key] = {"tasks": tasks, "services": len(frame), "top_service": top["service"],
                             "top_share": round(top["len"] / tasks, 4),
                             "median_tasks_per_service": float(frame["len"].median())}
    crowded = sorted(r for r, v in rounds.items()
                     if v["services"] >= SPREAD_MIN_SERVICES and v["top_share"] > SPREAD_CEILING)
    return dg.AssetCheckResult(passed=not crowded, severity=dg.AssetCheckSeverity.WARN, metadata={
        "crowded_rounds": dg.MetadataValue.json(crowded),
        "rounds": dg.MetadataValue.json(dict(sorted(rounds.items())))})


@dg.asset_check(asset="quarantined_tasks", description="Every quarantined task names its stage and reason.")
def quarantined_tasks_explained(quarantined_tasks: pl.DataFrame) -> dg.AssetCheckResult:
    bad = quarantined_tasks.filter((pl.col("reason").str.strip_chars() == "") |
                                   ~pl.col("stage").is_in(["instantiate", "gate"]))
    return dg.AssetCheckResult(passed=bad.is_empty(), metadata={"rows": len(quarantined_tasks), "bad": len(bad)})


@dg.asset_check(asset="rubrics", blocking=True,
                description="Every criterion has a positive weight and every task a positive criterion.")
def rubrics_well_formed(rubrics: pl.DataFrame) -> dg.AssetCheckResult:
    bad_weight = rubrics.filter(pl.col("weight") <= 0)
    positive = set(rubrics.filter(pl.col("kind") != "negative")["task_id"].to_list())
    without = sorted(set(rubrics["task_id"].to_list()) - positive)
    checks_parse = all(isinstance(json.loads(c), dict) for c in rubrics["check_json"].to_list())
    return dg.AssetCheckResult(passed=bad_weight.is_empty() and not without and checks_parse, metadata={
        "bad_weights": len(bad_weight), "tasks_without_positive_criterion": len(without)})


@dg.asset_check(asset="sampled_tasks", blocking=True, partitions_def=task_rounds,
                description="Great Expectations suite: keys, splits, n_services >= 2, step counts.")
def sampled_tasks_expectations(context: dg.AssetCheckExecutionContext,
                               sampled_tasks: pl.LazyFrame) -> dg.AssetCheckResult:
    return expectations_result(context, "sampled_tasks", sampled_tasks)


@dg.asset_check(asset="quarantined_tasks", partitions_def=task_rounds,
                description="Great Expectations suite: keyed, stage and reason set.")
def quarantined_tasks_expectations(context: dg.AssetCheckExecutionContext,
                                   quarantined_tasks: pl.DataFrame) -> dg.AssetCheckResult:
    return expectations_result(context, "quarantined_tasks", quarantined_tasks)


@dg.asset_check(asset="rubrics", blocking=True, partitions_def=task_rounds,
                description="Great Expectations suite: keys, kinds, positive weights, parseable checks.")
def rubrics_expectations(context: dg.AssetCheckExecutionContext,
                         rubrics: pl.DataFrame) -> dg.AssetCheckResult:
    return expectations_result(context, "rubrics", rubrics)
