"""Stage 8: ``benchmark_scores``, one partition per benchmark × model, one row per metric with its interval.

The model partition key names what is evaluated:

* ``base``: the bundled SmolLM2-135M-Instruct converted into ``<data_dir>/models/base``;
* ``sft`` / ``rl``: the newest ``checkpoint_path`` in ``pipeline.sft_checkpoint`` /
  ``pipeline.rl_checkpoint`` (written by the training assets);
* anything else: a litellm model name (``openai/gpt-4.1-mini``, ``hosted_vllm/<name>``), reached
  with the config's ``api_base`` and the key in the env var named by ``api_key_env``.

Checkpoints are served by the local OpenAI-compatible server for the duration of the step.
Held-out tasks are read from the task tables (``pipeline.sampled_tasks`` and the built services).
"""

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import duckdb
import polars as pl
from pydantic import Field

from compoworld_assets.defs.evaluation.partitions import benchmark_model
from compoworld_assets.engine import tables, task_tables
from compoworld_assets.engine.evaluation import bfcl, tau2
from compoworld_assets.engine.evaluation.heldout import BENCHMARK as HELDOUT
from compoworld_assets.engine.evaluation.plot import interval_plot_svg, svg_markdown_image
from compoworld_assets.engine.evaluation.results import ROW_COLUMNS, ModelEndpoint, leaderboard_markdown
from compoworld_assets.engine.evaluation.suite import SuiteSettings, run_benchmark
from compoworld_assets.engine.rollout.worlds import PooledWorldFactory
from resources import LLMResource, SandboxResource, StorageResource
from resources.storage import SCHEMA
from training.chat_template import TEMPLATE_VERSION

EVALUATION_VERSION = "1"
# Checkpoints are prompted with the training chat template, so scores depend on its version too.
SCORES_CODE_VERSION = f"{EVALUATION_VERSION}+template-{TEMPLATE_VERSION}"
SCORE_SCHEMA = {"benchmark": pl.Utf8, "model": pl.Utf8, "metric": pl.Utf8, "mean": pl.Float64,
                "ci_low": pl.Float64, "ci_high": pl.Float64, "n": pl.Int64, "k": pl.Int64}


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


def _read(database: str, sql: str, parameters: list | None = None) -> pl.DataFrame | None:
    """A query's result from the pipeline database, or None when the table is not there yet."""
    if not Path(database).is_file():
        return None
    with duckdb.connect(database, read_only=True) as connection:
        # A missing table must not resolve to a same-named Python object (this module's assets).
        connection.execute("set python_enable_replacements = false")
        try:
            return connection.execute(sql, parameters or []).pl()
        except duckdb.CatalogException:
            return None


def checkpoint_path(model: str, storage: StorageResource) -> Path | None:
    """The checkpoint folder of a ``base``/``sft``/``rl`` partition; None for a litellm model name."""
    if model == "base":
        from training.base_model import prepare_base_model

        return prepare_base_model(storage.path("models", "base"))
    if model not in ("sft", "rl"):
        return None
    table = f"{model}_checkpoint"
    frame = _read(storage.database, f"select checkpoint_path from {SCHEMA}.{table}")
    if frame is None or frame.is_empty():
        raise dg.Failure(f"model partition {model!r} needs a checkpoint: {SCHEMA}.{table} is missing or empty "
                         f"(materialize the {table} asset first)")
    path = Path(frame["checkpoint_path"][-1])
    if not path.is_dir():
        raise dg.Failure(f"{SCHEMA}.{table} points at {path}, which is not a folder")
    return path


@contextlib.contextmanager
def model_endpoint(model: str, config: EvaluationConfig, storage: StorageResource) -> Iterator[ModelEndpoint]:
    """The endpoint for a model partition, serving a checkpoint locally while the block runs."""
    path = checkpoint_path(model, storage)
    if path is None:
        key = os.environ.get(config.api_key_env) if config.api_key_env else None
        yield ModelEndpoint(name=model, model=model, api_base=config.api_base, api_key=key,
                            temperature=config.temperature, max_tokens=config.max_tokens)
        return
    from compoworld_assets.serving.openai_server import LOCAL_API_KEY, local_server

    with local_server(path, name=model) as server:
        yield ModelEndpoint(name=model, model=server.litellm_model, api_base=server.api_base, api_key=LOCAL_API_KEY,
                            temperature=config.temperature, max_tokens=config.max_tokens)


def heldout_world(config: EvaluationConfig, storage: StorageResource, llm: LLMResource,
                  sandbox: SandboxResource) -> tuple[list, PooledWorldFactory]:
    """Held-out tasks from the task tables and a world factory over the built services."""
    where, parameters = (" and round = ?", [config.task_round]) if config.task_round else ("", [])
    tasks = _read(storage.database, f"select * from {SCHEMA}.sampled_tasks where split = 'heldout'{where}",
                  parameters)
    specs = _read(storage.database, f"select * from {SCHEMA}.service_specs")
    services = _read(storage.database, f"select * from {SCHEMA}.services")
    if tasks is None or tasks.is_empty() or specs is None or services is None:
        raise dg.Failure("no held-out tasks: materialize service_specs, services and a task round first")
    spec_map = tables.specs_from_rows(specs)
    factory = PooledWorldFactory(tables.built_services_from_rows(spec_map, services),
                                 tables.seed_states_from_rows(services), llm.world_model(storage.world_model_cache),
                                 mount_size=config.mount_size, limits=sandbox.limits())
    return task_tables.tasks_from_rows(tasks), factory


@dg.asset(partitions_def=benchmark_model, group_name="evaluation", code_version=SCORES_CODE_VERSION,
          metadata={"partition_expr": {"benchmark": "benchmark", "model": "model"}})
def benchmark_scores(context: dg.AssetExecutionContext, config: EvaluationConfig, storage: StorageResource,
                     llm: LLMResource, sandbox: SandboxResource) -> dg.Output[pl.DataFrame]:
    """One row per (benchmark, model, metric): mean over items of the mean over k seeds, bootstrap 95% CI."""
    keys = context.partition_key.keys_by_dimension
    benchmark, model = keys["benchmark"], keys["model"]
    settings = config.settings()
    with model_endpoint(model, config, storage) as endpoint:
        if benchmark == HELDOUT:
            tasks, factory = heldout_world(config, storage, llm, sandbox)
            with factory:
                outcome = run_benchmark(benchmark, endpoint, settings, (tasks, factory))
        else:
            outcome = run_benchmark(benchmark, endpoint, settings)
    frame = pl.DataFrame([{c: row[c] for c in ROW_COLUMNS} for row in outcome.rows], schema=SCORE_SCHEMA)
    others = _read(storage.database, f"select * from {SCHEMA}.benchmark_scores where not (benchmark = ? and model = ?)",
                   [benchmark, model])
    board = frame.to_dicts() + (others.select(ROW_COLUMNS).to_dicts() if others is not None else [])
    return dg.Output(frame, metadata={
        "leaderboard": dg.MetadataValue.md(leaderboard_markdown(board)),
        "leaderboard_plot": dg.MetadataValue.md(svg_markdown_image(interval_plot_svg(board))),
        "self_tests": dg.MetadataValue.json({t.name: {"passed": t.passed, "total": t.total, "failures": t.failures[:20]}
                                             for t in outcome.self_tests}),
        "details": dg.MetadataValue.json(outcome.details),
        "seeds": dg.MetadataValue.json(list(settings.seeds)),
        "wall_s": round(outcome.wall_s, 1),
    })
