"""Stage 8: training — the base model, SFT on the kept trajectories, GRPO on the RL tasks.

Training runs outside the Dagster process: each asset writes its training file, then hands
``python -m training.pipes_entry sft|grpo ...`` to :class:`ComputeResource` (a local process, a
Slurm job or a Kubernetes pod), which reports curves and numbers back through Dagster Pipes.
Checkpoints go to a resume folder (``compute.resume_dir_for(context)`` plus a fingerprint of
everything but the step count), so a retried run resumes from the last checkpoint and a run with
more ``max_steps`` continues training, while new data or settings start from scratch. The final
model is copied to ``<data_dir>/models/<stage>`` and stored as a one-row table with its hash.
"""

import json
import math
import sys
from pathlib import Path
from typing import Any

import dagster as dg
import polars as pl
from pydantic import Field

from compoworld_assets.engine import tables, task_tables
from compoworld_assets.engine.canonical import content_hash
from resources import ComputeResource, StorageResource
from training.base_model import checkpoint_hash, prepare_base_model
from training.chat_template import TEMPLATE_VERSION
from training.data import write_rl_file, write_sft_file
from training.pipes_entry import JOB_LOG

TRAINING_VERSION = "1"
# Checkpoints learn the prompt format, so a new chat template makes them stale.
CHECKPOINT_CODE_VERSION = f"{TRAINING_VERSION}+template-{TEMPLATE_VERSION}"
LOG_TAIL_LINES = 40

BASE_MODEL_SCHEMA = {"model": pl.String, "path": pl.String, "n_parameters": pl.Int64, "checkpoint_hash": pl.String}
CHECKPOINT_SCHEMA = {"checkpoint_path": pl.String, "checkpoint_hash": pl.String, "steps": pl.Int64,
                     "final_loss": pl.Float64, "wall_time_s": pl.Float64, "backend": pl.String}


class BaseModelConfig(dg.Config):
    model: str | None = Field(default=None, description=(
        "Hugging Face id, local checkpoint folder or .gguf file; default: the bundled SmolLM2-135M-Instruct"))


class SFTTrainingConfig(dg.Config):
    max_steps: int = Field(default=8, ge=1)
    learning_rate: float = 5e-5
    per_device_train_batch_size: int = Field(default=2, ge=1)
    max_length: int = Field(default=1024, ge=64)
    max_samples: int | None = None
    save_steps: int = Field(default=4, ge=1)
    use_lora: bool = False
    bf16: bool = False
    model: str | None = Field(default=None, description="checkpoint to train instead of the base_model asset's")
    gpus: int = Field(default=0, ge=0)
    extra_args: list[str] = Field(default_factory=list, description="more training.sft / TRL flags")


class GRPOTrainingConfig(dg.Config):
    max_steps: int = Field(default=2, ge=1)
    learning_rate: float = 5e-6
    num_generations: int = Field(default=4, ge=2)
    max_completion_length: int = Field(default=64, ge=8)
    max_turns: int = Field(default=2, ge=1)
    max_tasks: int | None = None
    mode: str = Field(default="direct", description="direct or gateway tool exposure")
    bf16: bool = False
    gpus: int = Field(default=0, ge=0)
    extra_args: list[str] = Field(default_factory=list, description="more training.grpo / TRL flags")


def parameter_count(model_dir: Path) -> int:
    """Parameters stored in the folder's safetensors files (read from their headers, no weights loaded)."""
    from safetensors import safe_open

    total = 0
    for path in sorted(model_dir.glob("*.safetensors")):
        with safe_open(str(path), "np") as handle:
            for name in handle.keys():  # noqa: SIM118 (safe_open handles are not iterable)
                total += math.prod(handle.get_slice(name).get_shape())
    return total


@dg.asset(group_name="training", code_version=TRAINING_VERSION, pool="duckdb", metadata={"primary_key": "checkpoint_hash"})
def base_model(config: BaseModelConfig, storage: StorageResource) -> dg.Output[pl.DataFrame]:
    """The model training starts from, as a folder ``from_pretrained`` loads (converted once, then cached)."""
    path = prepare_base_model(storage.path("models", "base"), config.model).resolve()
    digest = checkpoint_hash(path)
    n_parameters = parameter_count(path)
    frame = pl.DataFrame([{"model": config.model or "bundled:SmolLM2-135M-Instruct", "path": str(path),
                           "n_parameters": n_parameters, "checkpoint_hash": digest}], schema=BASE_MODEL_SCHEMA)
    return dg.Output(frame, data_version=dg.DataVersion(digest[:16]),
                     metadata={"path": dg.MetadataValue.path(str(path)), "n_parameters": n_parameters,
                               "checkpoint_hash": digest})


def _flag(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def resume_fingerprint(inputs: dict[str, Any]) -> str:
    """The resume folder's name: everything a checkpoint depends on but the step count.

    The code version is part of it, so a new chat template or trainer starts from scratch instead
    of resuming from weights that learned the old one.
    """
    return content_hash({**inputs, "code_version": CHECKPOINT_CODE_VERSION})[:16]


def _log_tail(resume_dir: Path) -> str:
    log = resume_dir / JOB_LOG
    if not log.is_file():
        return "(the job wrote no log)"
    return "\n".join(log.read_text(encoding="utf-8", errors="replace").splitlines()[-LOG_TAIL_LINES:])


def run_training_job(context: dg.AssetExecutionContext, compute: ComputeResource, method: str,
                     flags: dict[str, Any], extra_args: list[str], resume_dir: Path, final_dir: Path,
                     gpus: int) -> dict[str, dg.MetadataValue]:
    """Run ``training.pipes_entry`` on the compute backend; the job's metadata, or a Failure with its log tail."""
    command = [sys.executable, "-m", "training.pipes_entry", method, "--output_dir", str(resume_dir),
               "--final_dir", str(final_dir)]
    for name, value in flags.items():
        if value is not None:
            command += [f"--{name}", _flag(value)]
    command += extra_args
    try:
        result = compute.run(context, command, resume_dir=resume_dir, gpus=gpus).get_materialize_result()
    except Exception as exc:
        raise dg.Failure(description=f"{method} job failed on the {compute.backend} backend: {exc}\n"
                                     f"last lines of {resume_dir / JOB_LOG}:\n{_log_tail(resume_dir)}") from exc
    return dict(result.metadata or {})


def checkpoint_output(metadata: dict[str, dg.MetadataValue], final_metric: str, backend: str,
                      stage_inputs: str) -> dg.Output[pl.DataFrame]:
    values = {key: value.value for key, value in metadata.items()}
    final = values.get(final_metric)
    frame = pl.DataFrame([{"checkpoint_path": str(values["checkpoint_path"]),
                           "checkpoint_hash": values["checkpoint_hash"], "steps": values["steps"],
                           "final_loss": math.nan if final is None else float(final),
                           "wall_time_s": values["job_wall_time_s"], "backend": backend}], schema=CHECKPOINT_SCHEMA)
    return dg.Output(frame, data_version=dg.DataVersion(values["checkpoint_hash"][:16]),
                     metadata={**metadata, "backend": backend, "resume_fingerprint": stage_inputs})


@dg.asset(group_name="training", code_version=CHECKPOINT_CODE_VERSION, pool="duckdb",
          metadata={"primary_key": "checkpoint_hash"})
def sft_checkpoint(context: dg.AssetExecutionContext, config: SFTTrainingConfig, sft_dataset: pl.DataFrame,
                   base_model: pl.DataFrame, compute: ComputeResource,
                   storage: StorageResource) -> dg.Output[pl.DataFrame]:
    """Supervised fine-tuning on the SFT samples (``training.sft`` through Pipes); ``final_loss`` is the last logged loss."""
    samples = [json.loads(s) for s in sft_dataset.sort("trajectory_id")["sample_json"].to_list()]
    if not samples:
        raise dg.Failure(description="sft_dataset holds no samples to train on")
    train_file = storage.path("training", "sft", "train.jsonl").resolve()
    write_sft_file(samples, train_file)
    model = config.model or base_model["path"][0]
    flags = {"train_file": train_file, "model": model, "learning_rate": config.learning_rate,
             "per_device_train_batch_size": config.per_device_train_batch_size, "max_length": config.max_length,
             "max_samples": config.max_samples, "use_lora": config.use_lora, "bf16": config.bf16}
    fingerprint = resume_fingerprint({"samples": content_hash(samples), "model": model,
                                      "base_hash": None if config.model else base_model["checkpoint_hash"][0],
                                      "flags": {k: _flag(v) for k, v in flags.items() if k != "train_file"},
                                      "extra_args": config.extra_args})
    resume_dir = (compute.resume_dir_for(context) / fingerprint).resolve()
    flags.update(max_steps=config.max_steps, save_steps=config.save_steps)
    metadata = run_training_job(context, compute, "sft", flags, config.extra_args, resume_dir,
                                storage.path("models", "sft").resolve(), config.gpus)
    return checkpoint_output(metadata, "final_loss", compute.backend, fingerprint)


@dg.asset(group_name="training", code_version=CHECKPOINT_CODE_VERSION, pool="duckdb",
          metadata={"primary_key": "checkpoint_hash"}, ins={"services": dg.AssetIn(partition_mapping=dg.AllPartitionMapping())})
def rl_checkpoint(context: dg.AssetExecutionContext, config: GRPOTrainingConfig, rl_tasks: pl.DataFrame,
                  service_specs: pl.DataFrame, services: pl.DataFrame, sft_checkpoint: pl.DataFrame,
                  compute: ComputeResource, storage: StorageResource) -> dg.Output[pl.DataFrame]:
    """GRPO from the SFT checkpoint on the RL tasks, rewarded by the rubric (``training.grpo`` through Pipes).

    The table's ``final_loss`` column holds the last step's mean reward.
    """
    tasks = task_tables.tasks_from_rows(rl_tasks)[: config.max_tasks]
    if not tasks:
        raise dg.Failure(description="rl_tasks holds no tasks to train on")
    built = tables.built_services_from_rows(tables.specs_from_rows(service_specs), services)
    tasks = [t for t in tasks if set(t.services) <= set(built)]
    if not tasks:
        raise dg.Failure(description="no RL task has all of its services built")
    rl_file = storage.path("training", "grpo", "rl.jsonl").resolve()
    write_rl_file(tasks, built, rl_file, tables.seed_states_from_rows(services), mode=config.mode)
    flags = {"rl_file": rl_file, "model": sft_checkpoint["checkpoint_path"][0],
             "learning_rate": config.learning_rate, "num_generations": config.num_generations,
             "per_device_train_batch_size": config.num_generations,
             "max_completion_length": config.max_completion_length, "max_turns": config.max_turns,
             "bf16": config.bf16}
    fingerprint = resume_fingerprint({"rl_file": rl_file.read_text(encoding="utf-8"),
                                      "sft_hash": sft_checkpoint["checkpoint_hash"][0],
                                      "flags": {k: _flag(v) for k, v in flags.items() if k != "rl_file"},
                                      "extra_args": config.extra_args})
    resume_dir = (compute.resume_dir_for(context) / fingerprint).resolve()
    flags["max_steps"] = config.max_steps
    metadata = run_training_job(context, compute, "grpo", flags, config.extra_args, resume_dir,
                                storage.path("models", "rl").resolve(), config.gpus)
    return checkpoint_output(metadata, "final_reward", compute.backend, fingerprint)
