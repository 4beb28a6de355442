"""Stage 5: sample cross-service tasks per generation round; derive their rubrics."""

import tempfile
from collections import Counter

import dagster as dg
import polars as pl
from pydantic import Field

from compoworld_assets.defs.freshness import NIGHTLY_ROUND
from compoworld_assets.defs.metadata import DATA_OWNERS, TABLE_KINDS, table_metadata, task_preview
from compoworld_assets.defs.tasks.partitions import task_rounds
from compoworld_assets.engine import tables, task_tables
from compoworld_assets.engine.backends import BackendRecipe
from compoworld_assets.engine.canonical import content_hash
from compoworld_assets.engine.memory import release_freed_memory
from compoworld_assets.engine.tasks.graph import graph_from_tables
from compoworld_assets.engine.tasks.instantiate import TaskConfig
from compoworld_assets.engine.tasks.pipeline import (
    WORKFLOW_SHARE,
    GenerationConfig,
    packed_library,
    plan_round,
    task_workers,
    tasks_from_plans,
)
from compoworld_assets.engine.tasks.preview import tasks_markdown
from compoworld_assets.engine.tasks.sampling import WalkConfig
from compoworld_assets.task_volume import PLANS_PER_SERVICE, default_plan_count
from resources import PARTITIONS_IO_MANAGER, LLMResource, SandboxResource, StorageResource

SAMPLER_VERSION = "5"


class TaskRoundConfig(dg.Config):
    seed: int = 7
    n_plans: int | None = Field(default=None, description="walks to sample; none: plan_count's default")
    plans_per_service: float = Field(
        default=PLANS_PER_SERVICE, description="with n_plans unset, walks per built service (at least MIN_PLANS): "
        "the task volume grows with the library; the default gave 3,390 SFT trajectories and 1,477 RL tasks at "
        "465 services (the paper's >= 3K and >= 1K)")
    min_length: int = 2
    max_length: int = 5
    min_services: int = 2
    heldout_fraction: float = 0.2
    rl_fraction: float = 0.3
    traps: bool = True
    instruction_style: str = "goal"
    workflow_share: float = Field(default=WORKFLOW_SHARE, description="share of the plans that are workflow drafts "
                                  "(docs/architecture.md, Workflows); the rest are walks")
    level_mix: dict[str, float] = Field(default_factory=dict,
                                        description="target shares of easy/medium/hard plans; empty: no target")
    workers: int = Field(default=0, description="processes turning plans into gated tasks; 0: one per core (at "
                         "most 8) and per PLANS_PER_WORKER plans. The tasks are the same for any number")

    def plan_count(self, n_services: int) -> int:
        """``n_plans`` when set, else ``max(MIN_PLANS, ceil(plans_per_service * n_services))``."""
        if self.n_plans is not None:
            return self.n_plans
        return default_plan_count(n_services, self.plans_per_service)

    def generation(self, round_key: str = "0") -> GenerationConfig:
        return GenerationConfig(
            walk=WalkConfig(min_length=self.min_length, max_length=self.max_length, min_services=self.min_services,
                            level_mix=tuple(sorted(self.level_mix.items())),
                            level_style="explicit" if self.instruction_style == "explicit" else "goal"),
            task=TaskConfig(traps=self.traps, instruction_style=self.instruction_style),
            heldout_fraction=self.heldout_fraction, rl_fraction=self.rl_fraction, round_key=round_key,
            workflow_share=self.workflow_share,
        )


def _counts(values) -> dict[str, int]:
    return dict(sorted(Counter(str(v) for v in values).items()))


def round_seed(seed: int, round_key: str) -> int:
    """Each round samples with its own seed, derived from the run seed and the round name."""
    return int(content_hash(["task-round", seed, round_key])[:8], 16)


@dg.multi_asset(
    outs={
        "sampled_tasks": dg.AssetOut(
            description="Tasks whose walk crosses services and that passed the verifier self-test gate.",
            code_version=SAMPLER_VERSION, metadata={"partition_expr": "round", "primary_key": "task_id"},
            io_manager_key=PARTITIONS_IO_MANAGER,
            kinds=TABLE_KINDS, owners=DATA_OWNERS, freshness_policy=NIGHTLY_ROUND),
        "quarantined_tasks": dg.AssetOut(
            description="Walks that could not become a task, or tasks that failed the gate, with the reason.",
            code_version=SAMPLER_VERSION, metadata={"partition_expr": "round"}, io_manager_key=PARTITIONS_IO_MANAGER,
            kinds=TABLE_KINDS, owners=DATA_OWNERS, freshness_policy=NIGHTLY_ROUND),
    },
    ins={"services": dg.AssetIn(partition_mapping=dg.AllPartitionMapping())},
    partitions_def=task_rounds,
    group_name="tasks",
)
def sample_tasks(context: dg.AssetExecutionContext, config: TaskRoundConfig, service_specs: pl.DataFrame,
                 services: pl.DataFrame, dependency_graph: pl.DataFrame, dependency_graph_nodes: pl.DataFrame,
                 llm: LLMResource, sandbox: SandboxResource, storage: StorageResource):
    """Random walks over the stored dependency graph → seeded worlds, instructions, rubrics → self-test gate.

    Plans run on the world model the trajectories use (same backend, same cache), so a walked
    world-model step replays in rollouts as it did at the gate.
    """
    round_key = context.partition_key
    specs = tables.specs_from_rows(service_specs)
    built = tables.built_services_from_rows(specs, services)
    n_plans = config.plan_count(len(built))
    seed, generation = round_seed(config.seed, round_key), config.generation(round_key)
    try:
        plans = plan_round([specs[s] for s in sorted(built)], built, seed, n_plans, generation,
                           graph=graph_from_tables(dependency_graph_nodes, dependency_graph))
    except ValueError as exc:
        raise dg.Failure(f"{exc}: rebuild dependency_graph from the current services first") from exc
    # The specs as objects and the graph (~400 MB at paper scale) are done with: let go before the workers start.
    library = packed_library(built)
    del specs, built
    release_freed_memory()
    backends = BackendRecipe(llm.settings(), sandbox.limits(), str(storage.world_model_cache))
    packed, quarantined = tasks_from_plans(plans, library, seed, generation,
                                           workers=config.workers or task_workers(n_plans), backends=backends)
    tasks = sorted((p.head for p in packed), key=lambda t: t.task_id)  # without their worlds: for the metadata
    gated = len(tasks) + sum(q.stage == "gate" for q in quarantined)
    with tempfile.TemporaryDirectory(prefix="cw-round-") as scratch:
        # The rows go to disk a few tasks at a time and from there into the table (GBs at paper scale).
        frame = task_tables.spill_task_rows(packed, round_key, scratch)
        del packed
        summary = frame.drop("task_json").collect()
        yield dg.Output(frame, "sampled_tasks",
                        data_version=dg.DataVersion(content_hash(summary["task_hash"].to_list())[:16]),
                        metadata={
                            **table_metadata("sampled_tasks", frame),
                            "preview": task_preview(tasks),
                            "examples": dg.MetadataValue.md(tasks_markdown(tasks, config.seed)),
                            "by_level": dg.MetadataValue.json(_counts(t.difficulty.get("level") for t in tasks)),
                            "by_instruction_style": dg.MetadataValue.json(_counts(t.instruction_style for t in tasks)),
                            "by_trap": dg.MetadataValue.json(
                                _counts(t.traps[0].kind if t.traps else "none" for t in tasks)),
                            "n_tasks": len(summary),
                            "n_plans": n_plans,
                            "gate_pass_share": round(len(tasks) / gated, 4) if gated else 0.0,
                            "by_split": dg.MetadataValue.json(
                                dict(summary.group_by("split").len().sort("split").iter_rows())),
                            "by_length": dg.MetadataValue.json(
                                {str(k): v for k, v in summary.group_by("n_steps").len().sort("n_steps").iter_rows()}),
                            "by_services": dg.MetadataValue.json({
                                str(k): v
                                for k, v in summary.group_by("n_services").len().sort("n_services").iter_rows()}),
                        })
    qframe = task_tables.quarantined_task_rows(quarantined, round_key)
    yield dg.Output(qframe, "quarantined_tasks", metadata={
        **table_metadata("quarantined_tasks", qframe),
        "n_quarantined": len(qframe),
        "by_stage": dg.MetadataValue.json(dict(qframe.group_by("stage").len().sort("stage").iter_rows())),
    })


@dg.asset(partitions_def=task_rounds, group_name="tasks", code_version=SAMPLER_VERSION,
          io_manager_key=PARTITIONS_IO_MANAGER,
          metadata={"partition_expr": "round", "primary_key": "criterion_key"}, kinds=TABLE_KINDS,
          owners=DATA_OWNERS, freshness_policy=NIGHTLY_ROUND)
def rubrics(context: dg.AssetExecutionContext, sampled_tasks: pl.LazyFrame) -> dg.Output[pl.DataFrame]:
    """One row per executable rubric criterion (state, answer, negative) with its weight and check."""
    tasks = task_tables.task_rubrics_from_rows(sampled_tasks)
    frame = task_tables.rubric_rows(tasks, context.partition_key)
    return dg.Output(frame, data_version=dg.DataVersion(content_hash(frame.rows())[:16]), metadata={
        **table_metadata("rubrics", frame),
        "preview": task_preview(tasks),
        "n_criteria": len(frame),
        "by_kind": dg.MetadataValue.json(dict(frame.group_by("kind").len().sort("kind").iter_rows())),
    })
