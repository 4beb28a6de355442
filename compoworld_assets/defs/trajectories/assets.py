"""Stage 6: roll agents out on each round's tasks; keep only trajectories that replay and pass."""

import asyncio
import json
import time
from collections.abc import Mapping
from typing import Literal

import dagster as dg
import polars as pl
from pydantic import Field

from compoworld_assets.defs.freshness import NIGHTLY_ROUND
from compoworld_assets.defs.metadata import DATA_OWNERS, TABLE_KINDS, conversation_preview, table_metadata
from compoworld_assets.defs.tasks.partitions import task_rounds
from compoworld_assets.engine import tables, task_tables
from compoworld_assets.engine.canonical import content_hash
from compoworld_assets.engine.exports import sample_record
from compoworld_assets.engine.rollout.engine import run_rollouts
from compoworld_assets.engine.rollout.policy import OraclePolicy
from compoworld_assets.engine.rollout.verify import (
    VerifiedTrajectory,
    criterion_pass_rates,
    verify_trajectories,
)
from compoworld_assets.engine.rollout.worlds import PooledWorldFactory
from compoworld_assets.engine.runtime.mount_order import reuse_order
from compoworld_assets.engine.tasks.model import CriterionResult, Task
from resources import PARTITIONS_IO_MANAGER, LLMResource, SandboxResource, StorageResource

ROLLOUT_VERSION = "1"


class RolloutConfig(dg.Config):
    policy: Literal["oracle", "llm"] = "oracle"
    modes: list[str] = Field(default_factory=lambda: ["gateway"])
    rollouts_per_task: int = 1
    concurrency: int = 2
    episode_timeout_s: float = 300.0
    max_steps: int = 40
    mount_size: int = 15


class VerificationConfig(dg.Config):
    threshold: float = 1.0
    mount_size: int = 15
    concurrency: int = Field(default=1, description="replays at once, each on its own world; the verdicts are "
                             "the same for any number")


def _world_factory(service_specs: pl.DataFrame, services: pl.DataFrame, llm: LLMResource,
                   sandbox: SandboxResource, storage: StorageResource, mount_size: int,
                   concurrency: int = 1) -> PooledWorldFactory:
    """A world factory over the built services; its ``concurrency`` pools (one per concurrent episode) share the
    sandbox's caps on live service processes."""
    specs = tables.specs_from_rows(service_specs)
    return PooledWorldFactory(tables.built_services_from_rows(specs, services), tables.seed_states_from_rows(services),
                              llm.world_model(storage.world_model_cache), mount_size=mount_size,
                              limits=sandbox.limits().shared(concurrency))


@dg.asset(partitions_def=task_rounds, group_name="trajectories", code_version=ROLLOUT_VERSION,
          io_manager_key=PARTITIONS_IO_MANAGER,
          ins={"services": dg.AssetIn(partition_mapping=dg.AllPartitionMapping())},
          metadata={"partition_expr": "round", "primary_key": "trajectory_id"}, kinds=TABLE_KINDS,
          owners=DATA_OWNERS, freshness_policy=NIGHTLY_ROUND)
def trajectories(context: dg.AssetExecutionContext, config: RolloutConfig, sampled_tasks: pl.LazyFrame,
                 service_specs: pl.DataFrame, services: pl.DataFrame, llm: LLMResource, sandbox: SandboxResource,
                 storage: StorageResource) -> dg.Output[pl.DataFrame]:
    """Episodes in OpenAI messages format, each on its own copy of the task's world.

    The round's tasks are streamed out of their table and each is parsed when its episode starts; each episode
    is kept as its table row when it ends (a paper-scale round is GBs as objects)."""
    round_key = context.partition_key
    tasks = task_tables.tasks_from_rows(sampled_tasks)
    if config.policy == "oracle":
        policy_factory = OraclePolicy
    else:
        def policy_factory(task, mode):
            return llm.policy()

    produced = []
    started = time.perf_counter()
    with _world_factory(service_specs, services, llm, sandbox, storage, config.mount_size,
                        config.concurrency) as factory:
        for mode in config.modes:
            produced += asyncio.run(run_rollouts(
                tasks, policy_factory, factory, mode=mode, rollouts_per_task=config.rollouts_per_task,
                concurrency=config.concurrency, episode_timeout_s=config.episode_timeout_s,
                max_steps=config.max_steps, max_retries=llm.max_retries, retry_backoff_s=llm.retry_backoff_s,
                order=reuse_order(tasks.services, factory.limits.max_live_services),
                keep=lambda t: task_tables.trajectory_row(t, round_key)))
    seconds = time.perf_counter() - started
    frame = task_tables.trajectory_rows(produced, round_key)
    return dg.Output(frame, data_version=dg.DataVersion(content_hash(frame["trajectory_hash"].to_list())[:16]),
                     metadata={
                         **table_metadata("trajectories", frame),
                         "n_trajectories": len(frame),
                         "policy": config.policy,
                         "by_finish_reason": dg.MetadataValue.json(
                             dict(frame.group_by("finish_reason").len().sort("finish_reason").iter_rows())),
                         "mean_calls": float(frame["n_calls"].mean() or 0.0),
                         "rollout_seconds": round(seconds, 3),
                     })


def verified_preview(frame: pl.DataFrame, tasks: Mapping[str, Task]) -> dg.MetadataValue:
    """The first kept trajectory (by id; the first replayed one when none is kept), with its verdict."""
    if frame.is_empty():
        return dg.MetadataValue.md("_no trajectories_")
    row = frame.sort([pl.col("passed").not_(), pl.col("trajectory_id")]).row(0, named=True)
    criteria = json.loads(row["criteria_json"])
    return conversation_preview(row["trajectory_id"], json.loads(row["sample_json"]), {
        "instruction": tasks[row["task_id"]].instruction, "kept": row["passed"],
        "replay identical": row["replay_identical"], "rubric score": round(row["rubric_score"], 4),
        "criteria": ", ".join(f"{c['id']} {'✓' if c['passed'] else '✗'}" for c in criteria)})


@dg.asset(partitions_def=task_rounds, group_name="trajectories", code_version=ROLLOUT_VERSION,
          io_manager_key=PARTITIONS_IO_MANAGER,
          ins={"services": dg.AssetIn(partition_mapping=dg.AllPartitionMapping())},
          metadata={"partition_expr": "round", "primary_key": "trajectory_id"}, kinds=TABLE_KINDS,
          owners=DATA_OWNERS, freshness_policy=NIGHTLY_ROUND)
def verified_trajectories(context: dg.AssetExecutionContext, config: VerificationConfig,
                          trajectories: pl.LazyFrame, sampled_tasks: pl.LazyFrame, service_specs: pl.DataFrame,
                          services: pl.DataFrame, llm: LLMResource, sandbox: SandboxResource,
                          storage: StorageResource) -> dg.Output[pl.DataFrame]:
    """Every trajectory replayed on a fresh world and scored on its rubric; ``passed`` marks what is kept.

    Tasks and trajectories are streamed out of their tables and parsed when replayed; each verdict is kept as
    its table row."""
    round_key = context.partition_key
    tasks = task_tables.tasks_from_rows(sampled_tasks)
    episodes = task_tables.trajectories_from_rows(trajectories)
    services_of = dict(zip(tasks.ids, tasks.services, strict=True))
    criteria: list[list[CriterionResult]] = []

    def keep(task: Task, verdict: VerifiedTrajectory) -> dict:
        criteria.append(verdict.criteria)
        return task_tables.verified_row(task, verdict, sample_record(task, verdict), round_key)

    started = time.perf_counter()
    with _world_factory(service_specs, services, llm, sandbox, storage, config.mount_size,
                        config.concurrency) as factory:
        order = reuse_order([services_of[t] for t in episodes.task_ids], factory.limits.max_live_services)
        rows = verify_trajectories(tasks.by_id(), episodes, factory, threshold=config.threshold, order=order, keep=keep,
                                   concurrency=config.concurrency)
    seconds = time.perf_counter() - started
    frame = task_tables.verified_rows(rows)
    kept = int(frame["passed"].sum()) if len(frame) else 0
    rates = criterion_pass_rates(criteria)
    # Row by row: the rows hold every kept sample (hundreds of MB at paper scale), hashed whole they were copied twice.
    version = content_hash([content_hash(list(row)) for row in frame.iter_rows()])[:16]
    return dg.Output(frame, data_version=dg.DataVersion(version), metadata={
        **table_metadata("verified_trajectories", frame),
        "preview": verified_preview(frame, tasks.by_id()),
        "n_trajectories": len(frame),
        "n_kept": kept,
        "verification_yield": round(kept / len(frame), 4) if len(frame) else 0.0,
        "replay_identical_share": round(float(frame["replay_identical"].mean() or 0.0), 4),
        "criterion_pass_rates": dg.MetadataValue.json(dict(sorted(rates.items()))),
        "verification_seconds": round(seconds, 3),
    })
