"""Stage 6: roll agents out on each round's tasks; keep only trajectories that replay and pass."""

import asyncio
import time
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
from compoworld_assets.engine.rollout.verify import criterion_pass_rates, verify_trajectories
from compoworld_assets.engine.rollout.worlds import PooledWorldFactory
from compoworld_assets.engine.tasks.packed import head_of
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


def _world_factory(service_specs: pl.DataFrame, services: pl.DataFrame, llm: LLMResource,
                   sandbox: SandboxResource, storage: StorageResource, mount_size: int) -> PooledWorldFactory:
    specs = tables.specs_from_rows(service_specs)
    return PooledWorldFactory(tables.built_services_from_rows(specs, services), tables.seed_states_from_rows(services),
                              llm.world_model(storage.world_model_cache), mount_size=mount_size,
                              limits=sandbox.limits())


@dg.asset(partitions_def=task_rounds, group_name="trajectories", code_version=ROLLOUT_VERSION,
          io_manager_key=PARTITIONS_IO_MANAGER,
          ins={"services": dg.AssetIn(partition_mapping=dg.AllPartitionMapping())},
          metadata={"partition_expr": "round", "primary_key": "trajectory_id"}, kinds=TABLE_KINDS,
          owners=DATA_OWNERS, freshness_policy=NIGHTLY_ROUND)
def trajectories(context: dg.AssetExecutionContext, config: RolloutConfig, sampled_tasks: pl.DataFrame,
                 service_specs: pl.DataFrame, services: pl.DataFrame, llm: LLMResource, sandbox: SandboxResource,
                 storage: StorageResource) -> dg.Output[pl.DataFrame]:
    """Episodes in OpenAI messages format, each on its own copy of the task's world."""
    tasks = task_tables.tasks_from_rows(sampled_tasks)
    if config.policy == "oracle":
        policy_factory = OraclePolicy
    else:
        def policy_factory(task, mode):
            return llm.policy()

    produced = []
    started = time.perf_counter()
    with _world_factory(service_specs, services, llm, sandbox, storage, config.mount_size) as factory:
        for mode in config.modes:
            produced += asyncio.run(run_rollouts(
                tasks, policy_factory, factory, mode=mode, rollouts_per_task=config.rollouts_per_task,
                concurrency=config.concurrency, episode_timeout_s=config.episode_timeout_s,
                max_steps=config.max_steps, max_retries=llm.max_retries, retry_backoff_s=llm.retry_backoff_s))
    seconds = time.perf_counter() - started
    frame = task_tables.trajectory_rows(produced, context.partition_key)
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


def verified_preview(results: list) -> dg.MetadataValue:
    """The first kept trajectory (by id; the first replayed one when none is kept), with its verdict."""
    if not results:
        return dg.MetadataValue.md("_no trajectories_")
    ordered = sorted(results, key=lambda r: (not r[1].passed, task_tables.trajectory_id(r[1].trajectory)))
    task, verified, sample = ordered[0]
    return conversation_preview(task_tables.trajectory_id(verified.trajectory), sample, {
        "instruction": task.instruction, "kept": verified.passed, "replay identical": verified.replay_identical,
        "rubric score": round(verified.rubric_score, 4),
        "criteria": ", ".join(f"{c.id} {'✓' if c.passed else '✗'}" for c in verified.criteria)})


@dg.asset(partitions_def=task_rounds, group_name="trajectories", code_version=ROLLOUT_VERSION,
          io_manager_key=PARTITIONS_IO_MANAGER,
          ins={"services": dg.AssetIn(partition_mapping=dg.AllPartitionMapping())},
          metadata={"partition_expr": "round", "primary_key": "trajectory_id"}, kinds=TABLE_KINDS,
          owners=DATA_OWNERS, freshness_policy=NIGHTLY_ROUND)
def verified_trajectories(context: dg.AssetExecutionContext, config: VerificationConfig,
                          trajectories: pl.DataFrame, sampled_tasks: pl.DataFrame, service_specs: pl.DataFrame,
                          services: pl.DataFrame, llm: LLMResource, sandbox: SandboxResource,
                          storage: StorageResource) -> dg.Output[pl.DataFrame]:
    """Every trajectory replayed on a fresh world and scored on its rubric; ``passed`` marks what is kept."""
    tasks = task_tables.tasks_from_rows(sampled_tasks).by_id()  # each parsed when read: a round is GBs as objects
    started = time.perf_counter()
    with _world_factory(service_specs, services, llm, sandbox, storage, config.mount_size) as factory:
        verified = verify_trajectories(tasks, task_tables.trajectories_from_rows(trajectories), factory,
                                       threshold=config.threshold)
    results = []
    for v in verified:
        task = tasks[v.trajectory.task_id]
        results.append((head_of(task), v, sample_record(task, v)))
    seconds = time.perf_counter() - started
    frame = task_tables.verified_rows(results, context.partition_key)
    kept = int(frame["passed"].sum()) if len(frame) else 0
    rates = criterion_pass_rates(v for _, v, _ in results)
    return dg.Output(frame, data_version=dg.DataVersion(content_hash(frame.rows())[:16]), metadata={
        **table_metadata("verified_trajectories", frame),
        "preview": verified_preview(results),
        "n_trajectories": len(frame),
        "n_kept": kept,
        "verification_yield": round(kept / len(frame), 4) if len(frame) else 0.0,
        "replay_identical_share": round(float(frame["replay_identical"].mean() or 0.0), 4),
        "criterion_pass_rates": dg.MetadataValue.json(dict(sorted(rates.items()))),
        "verification_seconds": round(seconds, 3),
    })
