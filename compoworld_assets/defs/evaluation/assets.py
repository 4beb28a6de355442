"""Stage 8: ``benchmark_scores``, one partition per benchmark × model, one row per metric with its interval.

The model partition key names what is evaluated:

* ``base`` / ``sft`` / ``rl``: the checkpoint folder in the ``base_model`` / ``sft_checkpoint`` /
  ``rl_checkpoint`` table, served by the local OpenAI-compatible server for the duration of the step;
* anything else: a litellm model name (``openai/gpt-4.1-mini``, ``hosted_vllm/<name>``), reached
  with the config's ``api_base`` and the key in the env var named by ``api_key_env``.

Every table the asset reads is a declared upstream (the checkpoints, ``sampled_tasks`` for the
held-out tasks, ``service_specs`` and ``services`` for their worlds), so a new checkpoint or task
round marks the scores stale and the lineage shows what a score came from. Dagster maps an
unpartitioned upstream to every partition, so a new ``sft_checkpoint`` marks the ``base`` partitions
stale too; each partition reads only what its benchmark and model need (through the IO manager,
``context.load_asset_value``). Like training, the asset is a graph of ops (``defs/handoff.py``):
``benchmark_inputs`` reads the tables (pool ``duckdb``), ``evaluate_benchmark`` serves and scores
the model holding no DuckDB slot, ``store_benchmark_scores`` writes the rows (pool ``duckdb``).
"""

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg
import polars as pl
from pydantic import Field

from compoworld_assets.defs.evaluation.partitions import benchmark_model
from compoworld_assets.defs.handoff import HANDOFF_RESOURCES, config_to, handoff_out
from compoworld_assets.defs.metadata import EVALUATION_OWNERS, table_metadata
from compoworld_assets.engine import tables, task_tables
from compoworld_assets.engine.evaluation import bfcl, tau2
from compoworld_assets.engine.evaluation.heldout import BENCHMARK as HELDOUT
from compoworld_assets.engine.evaluation.plot import interval_plot_svg, svg_markdown_image
from compoworld_assets.engine.evaluation.results import ROW_COLUMNS, ModelEndpoint, leaderboard_markdown
from compoworld_assets.engine.evaluation.suite import BenchmarkOutcome, SuiteSettings, run_benchmark
from compoworld_assets.engine.rollout.worlds import PooledWorldFactory
from resources import LLMResource, SandboxResource, StorageResource
from training.chat_template import TEMPLATE_VERSION

EVALUATION_VERSION = "1"
# Checkpoints are prompted with the training chat template, so scores depend on its version too.
SCORES_CODE_VERSION = f"{EVALUATION_VERSION}+template-{TEMPLATE_VERSION}"
SCORE_SCHEMA = {"benchmark": pl.Utf8, "model": pl.Utf8, "metric": pl.Utf8, "mean": pl.Float64,
                "ci_low": pl.Float64, "ci_high": pl.Float64, "n": pl.Int64, "k": pl.Int64}
CHECKPOINT_ASSETS = {"base": "base_model", "sft": "sft_checkpoint", "rl": "rl_checkpoint"}
CHECKPOINT_COLUMN = {"base_model": "path", "sft_checkpoint": "checkpoint_path", "rl_checkpoint": "checkpoint_path"}
# Partitioned upstreams: every partition of them feeds every score partition.
ALL_PARTITIONS = ("sampled_tasks", "services")
UPSTREAM = (*CHECKPOINT_ASSETS.values(), "sampled_tasks", "service_specs", "services")


class EvaluationConfig(dg.Config):
    seeds: list[int] = Field(default_factory=lambda: [1, 2, 3], description="k seeds, forwarded to every call.")
    temperature: float = Field(default=0.7, description="Sampling temperature (0: greedy; seeds then agree).")
    max_tokens: int | None = Field(default=None, description="Tokens per turn; None: derived from each benchmark's "
                                   "sample (the oracle's or the ground truth's longest turn plus slack).")
    sample_seed: int = 0
    bootstrap_seed: int = 0
    heldout_tasks: int = 20
    heldout_mode: str = "direct"
    heldout_max_steps: int | None = Field(default=None, description="None: the oracle's turns plus slack.")
    task_round: str | None = Field(default=None, description="Draw held-out tasks from this round only.")
    mount_size: int = 15
    bfcl_categories: list[str] = Field(default_factory=lambda: list(bfcl.DEFAULT_CATEGORIES))
    bfcl_per_category: int = 3
    tau2_task_sets: list[str] = Field(default_factory=lambda: list(tau2.DEFAULT_TASK_SETS))
    tau2_per_task_set: int = 3
    tau2_max_steps: int = 8
    api_base: str | None = Field(default=None, description="For litellm-model partitions (not checkpoints).")
    api_key_env: str | None = None

    def settings(self) -> SuiteSettings:
        return SuiteSettings(seeds=tuple(self.seeds), sample_seed=self.sample_seed,
                             bootstrap_seed=self.bootstrap_seed, heldout_tasks=self.heldout_tasks,
                             heldout_mode=self.heldout_mode, heldout_max_steps=self.heldout_max_steps,
                             bfcl_categories=tuple(self.bfcl_categories), bfcl_per_category=self.bfcl_per_category,
                             tau2_task_sets=tuple(self.tau2_task_sets), tau2_per_task_set=self.tau2_per_task_set,
                             tau2_max_steps=self.tau2_max_steps)


def load_table(context: dg.OpExecutionContext, asset: str) -> pl.DataFrame | None:
    """A declared upstream table through its IO manager, or None when it was never materialized."""
    key = dg.AssetKey(asset)
    if context.instance.get_latest_materialization_event(key) is None:
        return None
    return context.load_asset_value(key, python_type=pl.DataFrame)


def checkpoint_folder(model: str, frame: pl.DataFrame | None) -> Path:
    """The folder the ``base``/``sft``/``rl`` partition scores, from its checkpoint table's newest row."""
    asset = CHECKPOINT_ASSETS[model]
    if frame is None or frame.is_empty():
        raise dg.Failure(f"model partition {model!r} needs a checkpoint: {asset} is missing or empty "
                         f"(materialize the {asset} asset first)")
    path = Path(frame[CHECKPOINT_COLUMN[asset]][-1])
    if not path.is_dir():
        raise dg.Failure(f"{asset} points at {path}, which is not a folder")
    return path


@contextlib.contextmanager
def model_endpoint(model: str, config: EvaluationConfig, checkpoint: Path | None) -> Iterator[ModelEndpoint]:
    """The endpoint for a model partition, serving its checkpoint locally while the block runs."""
    if checkpoint is None:
        key = os.environ.get(config.api_key_env) if config.api_key_env else None
        yield ModelEndpoint(name=model, model=model, api_base=config.api_base, api_key=key,
                            temperature=config.temperature, max_tokens=config.max_tokens)
        return
    from compoworld_assets.serving.openai_server import LOCAL_API_KEY, local_server

    with local_server(checkpoint, name=model) as server:
        yield ModelEndpoint(name=model, model=server.litellm_model, api_base=server.api_base, api_key=LOCAL_API_KEY,
                            temperature=config.temperature, max_tokens=config.max_tokens)


def heldout_tables(context: dg.OpExecutionContext, config: EvaluationConfig) -> dict[str, pl.DataFrame]:
    """The held-out tasks (of ``task_round``, or every round) and the specs and services they mount."""
    tasks, specs, services = (load_table(context, name) for name in ("sampled_tasks", "service_specs", "services"))
    if tasks is None or specs is None or services is None:
        raise dg.Failure("no held-out tasks: materialize service_specs, services and a task round first")
    tasks = tasks.filter(pl.col("split") == "heldout")
    if config.task_round:
        tasks = tasks.filter(pl.col("round") == config.task_round)
    if tasks.is_empty():
        raise dg.Failure(f"no held-out tasks in {config.task_round or 'any round'} of sampled_tasks")
    return {"tasks": tasks, "specs": specs, "services": services}


def heldout_world(heldout: dict[str, pl.DataFrame], config: EvaluationConfig, storage: StorageResource,
                  llm: LLMResource, sandbox: SandboxResource) -> tuple[list, PooledWorldFactory]:
    """Held-out tasks and a world factory over the built services."""
    services = heldout["services"]
    factory = PooledWorldFactory(tables.built_services_from_rows(tables.specs_from_rows(heldout["specs"]), services),
                                 tables.seed_states_from_rows(services), llm.world_model(storage.world_model_cache),
                                 mount_size=config.mount_size, limits=sandbox.limits())
    return task_tables.tasks_from_rows(heldout["tasks"]), factory


@dg.op(pool="duckdb", ins={name: dg.In(dg.Nothing) for name in UPSTREAM},
       out=handoff_out("The checkpoint folder to serve and the held-out tables, as the partition needs them."))
def benchmark_inputs(context: dg.OpExecutionContext, config: EvaluationConfig) -> dict[str, Any]:
    """Read what this partition scores (its checkpoint) and evaluates on (held-out tasks and their worlds)."""
    keys = context.partition_key.keys_by_dimension
    benchmark, model = keys["benchmark"], keys["model"]
    checkpoint = (checkpoint_folder(model, load_table(context, CHECKPOINT_ASSETS[model]))
                  if model in CHECKPOINT_ASSETS else None)
    return {"benchmark": benchmark, "model": model, "checkpoint": checkpoint,
            "heldout": heldout_tables(context, config) if benchmark == HELDOUT else None}


@dg.op(out=handoff_out("The benchmark's outcome: score rows, self-tests, details."))
def evaluate_benchmark(config: EvaluationConfig, inputs: dict[str, Any], storage: StorageResource,
                       llm: LLMResource, sandbox: SandboxResource) -> dict[str, Any]:
    """Serve the model and score it, holding no DuckDB slot (minutes to hours)."""
    settings = config.settings()
    with model_endpoint(inputs["model"], config, inputs["checkpoint"]) as endpoint:
        if inputs["heldout"] is not None:
            tasks, factory = heldout_world(inputs["heldout"], config, storage, llm, sandbox)
            with factory:
                outcome = run_benchmark(inputs["benchmark"], endpoint, settings, (tasks, factory))
        else:
            outcome = run_benchmark(inputs["benchmark"], endpoint, settings)
    return {**inputs, "outcome": outcome, "seeds": list(settings.seeds)}


@dg.op(pool="duckdb")
def store_benchmark_scores(context: dg.OpExecutionContext, scored: dict[str, Any]) -> dg.Output[pl.DataFrame]:
    """Write this partition's rows; the leaderboard in the metadata adds every other stored partition."""
    outcome: BenchmarkOutcome = scored["outcome"]
    frame = pl.DataFrame([{c: row[c] for c in ROW_COLUMNS} for row in outcome.rows], schema=SCORE_SCHEMA)
    stored = load_table(context, "benchmark_scores")
    others = [] if stored is None else stored.filter(
        ~((pl.col("benchmark") == scored["benchmark"]) & (pl.col("model") == scored["model"]))
    ).select(ROW_COLUMNS).to_dicts()
    board = frame.to_dicts() + others
    metadata: dict[str, Any] = {
        **table_metadata("benchmark_scores", frame),
        "leaderboard": dg.MetadataValue.md(leaderboard_markdown(board)),
        "leaderboard_plot": dg.MetadataValue.md(svg_markdown_image(interval_plot_svg(board))),
        "self_tests": dg.MetadataValue.json({t.name: {"passed": t.passed, "total": t.total, "failures": t.failures[:20]}
                                             for t in outcome.self_tests}),
        "details": dg.MetadataValue.json(outcome.details),
        "seeds": dg.MetadataValue.json(scored["seeds"]),
        "wall_s": round(outcome.wall_s, 1),
    }
    if scored["checkpoint"] is not None:
        metadata["checkpoint"] = dg.MetadataValue.path(str(scored["checkpoint"]))
    return dg.Output(frame, metadata=metadata)


@dg.graph_asset(partitions_def=benchmark_model, group_name="evaluation", code_version=SCORES_CODE_VERSION,
                metadata={"partition_expr": {"benchmark": "benchmark", "model": "model"}},
                ins={name: dg.AssetIn(dagster_type=dg.Nothing,
                                      partition_mapping=dg.AllPartitionMapping() if name in ALL_PARTITIONS else None)
                     for name in UPSTREAM},
                config=config_to("benchmark_inputs", "evaluate_benchmark", config_class=EvaluationConfig),
                resource_defs=HANDOFF_RESOURCES, kinds={"python", "duckdb"}, owners=EVALUATION_OWNERS)
def benchmark_scores(base_model, sft_checkpoint, rl_checkpoint, sampled_tasks, service_specs, services):
    """One row per (benchmark, model, metric): mean over items of the mean over k seeds, bootstrap 95% CI."""
    return store_benchmark_scores(evaluate_benchmark(benchmark_inputs(
        base_model=base_model, sft_checkpoint=sft_checkpoint, rl_checkpoint=rl_checkpoint,
        sampled_tasks=sampled_tasks, service_specs=service_specs, services=services)))
