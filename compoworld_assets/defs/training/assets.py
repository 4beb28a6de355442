"""Stage 8: training — the base model, SFT on the kept trajectories, GRPO on the RL tasks.

Training runs outside the Dagster process: each asset writes its training file, then hands
``python -m training.pipes_entry sft|grpo ...`` to :class:`ComputeResource` (a local process, a
Slurm job or a Kubernetes pod), which reports curves and numbers back through Dagster Pipes.

Each asset is a graph of three ops (see ``defs/handoff.py``): ``plan`` (pool ``duckdb``) reads the
input tables and writes the training file, ``train`` runs the job holding no DuckDB slot, ``store``
(pool ``duckdb``) writes the one-row table. Everything a run produces is content-addressed:
``<data_dir>/models/<asset>/<hash>/`` with the hash over the training data, the model trained from,
every setting and the code version, holding the training file, ``checkpoint/`` (what
``from_pretrained`` loads) and ``result.json`` (the job's metadata). No later run deletes or rewrites
it: a run with the same hash reuses the stored checkpoint instead of training again, so every
materialization keeps pointing at the weights it described. Checkpoints during training go to a
resume folder (``compute.resume_dir_for(context)`` plus a fingerprint of everything but the step
count), so a retried run resumes from the last checkpoint and a run with more ``max_steps``
continues training.
"""

import json
import math
import shutil
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dagster as dg
import polars as pl
from pydantic import Field

from compoworld_assets.defs.freshness import WEEKLY_TRAINING
from compoworld_assets.defs.handoff import HANDOFF_RESOURCES, config_to, handoff_out
from compoworld_assets.defs.metadata import TRAINING_OWNERS, table_metadata
from compoworld_assets.engine import tables, task_tables
from compoworld_assets.engine.canonical import content_hash
from compoworld_assets.engine.rewards import RewardName
from resources import ComputeResource, StorageResource
from training.base_model import bundled_gguf, checkpoint_hash, file_hash, prepare_base_model
from training.chat_template import TEMPLATE_VERSION
from training.curriculum import Curriculum, steps_for_epochs
from training.data import services_path, write_rl_file, write_sft_file
from training.pipes_entry import JOB_LOG

TRAINING_VERSION = "1"
# Checkpoints learn the prompt format, so a new chat template makes them stale.
CHECKPOINT_CODE_VERSION = f"{TRAINING_VERSION}+template-{TEMPLATE_VERSION}"
LOG_TAIL_LINES = 40
CHECKPOINT_DIR = "checkpoint"
RESULT_FILE = "result.json"
TRAINING_KINDS = {"python", "pytorch", "huggingface"}

BASE_MODEL_SCHEMA = {"model": pl.String, "path": pl.String, "n_parameters": pl.Int64, "checkpoint_hash": pl.String}
CHECKPOINT_SCHEMA = {"checkpoint_path": pl.String, "checkpoint_hash": pl.String, "steps": pl.Int64,
                     "final_loss": pl.Float64, "wall_time_s": pl.Float64, "backend": pl.String}


class BaseModelConfig(dg.Config):
    model: str | None = Field(default=None, description=(
        "Hugging Face id, local checkpoint folder or .gguf file; default: the bundled SmolLM2-135M-Instruct"))


class SFTTrainingConfig(dg.Config):
    max_steps: int = Field(default=8, ge=1)
    epochs: float | None = Field(default=None, gt=0, description=(
        "passes over the samples; when set, max_steps is ceil(epochs x samples / batch size) instead"))
    curriculum: Curriculum = Field(default="none", description=(
        "none (the trainer shuffles) or length (shortest rendered samples first, every epoch)"))
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
    reward: RewardName = Field(default="cfrr", description=(
        "cfrr (Completion-Focused Rubric Reward) or rubric (the plain rubric fraction: the paper's ablation)"))
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


def run_training_job(context: dg.OpExecutionContext, compute: ComputeResource, method: str,
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


def artifact_folder(storage: StorageResource, asset: str, identity: Any) -> Path:
    """``<data_dir>/models/<asset>/<hash>``: the folder of everything one set of inputs and settings produces."""
    folder = storage.path("models", asset, content_hash({"identity": identity,
                                                        "code_version": CHECKPOINT_CODE_VERSION})[:16]).resolve()
    folder.mkdir(exist_ok=True)
    return folder


@dataclass(frozen=True)
class TrainingPlan:
    """What the ``train`` op runs: ``training.pipes_entry <method>`` with these flags, into ``folder``."""

    method: str
    flags: dict[str, Any]
    extra_args: list[str]
    folder: str
    resume_dir: str
    fingerprint: str
    final_metric: str
    gpus: int


@dg.op(out=handoff_out("The job's metadata (the stored result.json when the folder already holds one)."))
def train(context: dg.OpExecutionContext, compute: ComputeResource, plan: TrainingPlan) -> dg.Output[dict]:
    """Run the training job on the compute backend, holding no DuckDB slot; reuse a finished folder."""
    folder = Path(plan.folder)
    record = folder / RESULT_FILE
    if record.is_file():
        context.log.info(f"{folder} already holds a trained checkpoint: reusing it")
        metadata = dg.deserialize_value(record.read_text(encoding="utf-8"), dict)
        return dg.Output({"metadata": metadata, "plan": plan, "backend": metadata["backend"].value,
                          "reused": True})
    metadata = run_training_job(context, compute, plan.method, plan.flags, plan.extra_args,
                                Path(plan.resume_dir), folder / CHECKPOINT_DIR, plan.gpus)
    metadata["backend"] = dg.MetadataValue.text(compute.backend)
    record.write_text(dg.serialize_value(metadata), encoding="utf-8")
    return dg.Output({"metadata": metadata, "plan": plan, "backend": compute.backend, "reused": False})


@dg.op(pool="duckdb")
def store_checkpoint(context: dg.OpExecutionContext, trained: dict) -> dg.Output[pl.DataFrame]:
    """Write the checkpoint's one-row table (the only DuckDB write of the asset)."""
    plan: TrainingPlan = trained["plan"]
    output = checkpoint_output(trained["metadata"], plan.final_metric, trained["backend"], plan.fingerprint)
    return dg.Output(output.value, data_version=output.data_version,
                     metadata={**output.metadata, **table_metadata(context.asset_key.path[-1], output.value),
                               "artifact_folder": dg.MetadataValue.path(plan.folder), "reused": trained["reused"]})


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


@dg.op(out=handoff_out("The prepared base model's row."))
def prepare_base_model_folder(config: BaseModelConfig, storage: StorageResource) -> dict[str, Any]:
    """Convert (the bundled GGUF), download (a Hugging Face id) or pass through (a local folder) the model."""
    source = config.model
    identity = file_hash(bundled_gguf() if source is None else Path(source)) if (
        source is None or source.endswith(".gguf")) else source
    path = prepare_base_model(artifact_folder(storage, "base_model", identity) / CHECKPOINT_DIR, source).resolve()
    return {"model": source or "bundled:SmolLM2-135M-Instruct", "path": str(path),
            "n_parameters": parameter_count(path), "checkpoint_hash": checkpoint_hash(path)}


@dg.op(pool="duckdb")
def store_base_model(row: dict[str, Any]) -> dg.Output[pl.DataFrame]:
    frame = pl.DataFrame([row], schema=BASE_MODEL_SCHEMA)
    return dg.Output(frame, data_version=dg.DataVersion(row["checkpoint_hash"][:16]),
                     metadata={**table_metadata("base_model", frame), "path": dg.MetadataValue.path(row["path"]),
                               "n_parameters": row["n_parameters"], "checkpoint_hash": row["checkpoint_hash"]})


@dg.graph_asset(group_name="training", code_version=TRAINING_VERSION, metadata={"primary_key": "checkpoint_hash"},
                config=config_to("prepare_base_model_folder", config_class=BaseModelConfig),
                resource_defs=HANDOFF_RESOURCES, kinds=TRAINING_KINDS, owners=TRAINING_OWNERS)
def base_model():
    """The model training starts from, as a folder ``from_pretrained`` loads (converted once, then cached)."""
    return store_base_model(prepare_base_model_folder())


@dg.op(pool="duckdb", out=handoff_out("The SFT job to run."))
def sft_plan(context: dg.OpExecutionContext, config: SFTTrainingConfig, sft_dataset: pl.DataFrame,
             base_model: pl.DataFrame, compute: ComputeResource, storage: StorageResource) -> TrainingPlan:
    """Write the SFT file into the run's content-addressed folder."""
    samples = [json.loads(s) for s in sft_dataset.sort("trajectory_id")["sample_json"].to_list()]
    if not samples:
        raise dg.Failure(description="sft_dataset holds no samples to train on")
    model = config.model or base_model["path"][0]
    flags = {"model": model, "learning_rate": config.learning_rate,
             "per_device_train_batch_size": config.per_device_train_batch_size, "max_length": config.max_length,
             "max_samples": config.max_samples, "use_lora": config.use_lora, "bf16": config.bf16,
             "curriculum": config.curriculum}
    max_steps = config.max_steps if config.epochs is None else steps_for_epochs(
        len(samples[: config.max_samples]), config.epochs, config.per_device_train_batch_size)
    inputs = {"samples": content_hash(samples), "model": model,
              "base_hash": None if config.model else base_model["checkpoint_hash"][0],
              "flags": {k: _flag(v) for k, v in flags.items()}, "extra_args": config.extra_args}
    fingerprint = resume_fingerprint(inputs)
    folder = artifact_folder(storage, "sft_checkpoint",
                             {**inputs, "max_steps": max_steps, "save_steps": config.save_steps})
    train_file = folder / "train.jsonl"
    write_sft_file(samples, train_file)
    flags.update(train_file=train_file, max_steps=max_steps, save_steps=config.save_steps)
    return TrainingPlan(method="sft", flags=flags, extra_args=list(config.extra_args), folder=str(folder),
                        resume_dir=str((compute.resume_dir_for(context) / fingerprint).resolve()),
                        fingerprint=fingerprint, final_metric="final_loss", gpus=config.gpus)


@dg.graph_asset(group_name="training", code_version=CHECKPOINT_CODE_VERSION,
                metadata={"primary_key": "checkpoint_hash"}, config=config_to("sft_plan", config_class=SFTTrainingConfig),
                resource_defs=HANDOFF_RESOURCES, kinds=TRAINING_KINDS, owners=TRAINING_OWNERS)
def sft_checkpoint(sft_dataset, base_model):
    """Supervised fine-tuning on the SFT samples (``training.sft`` through Pipes); ``final_loss`` is the last logged loss."""
    return store_checkpoint(train(sft_plan(sft_dataset, base_model)))


@dg.op(pool="duckdb", out=handoff_out("The GRPO job to run."))
def grpo_plan(context: dg.OpExecutionContext, config: GRPOTrainingConfig, rl_tasks: pl.DataFrame,
              sampled_tasks: pl.LazyFrame, service_specs: pl.DataFrame, services: pl.DataFrame,
              sft_checkpoint: pl.DataFrame, compute: ComputeResource, storage: StorageResource) -> TrainingPlan:
    """Write the RL file (tasks with the prompts and tools of their mounted worlds) into the run's folder.

    ``rl_tasks`` names the tasks (the first ``max_tasks`` by id); they are read from ``sampled_tasks``."""
    if rl_tasks.is_empty():
        raise dg.Failure(description="rl_tasks holds no tasks to train on")
    try:
        stored = task_tables.referenced_tasks(sampled_tasks, rl_tasks.sort("task_id").head(config.max_tasks))
    except LookupError as exc:
        raise dg.Failure(description=f"{exc}: materialize rl_tasks again") from exc
    built = tables.built_services_from_rows(tables.specs_from_rows(service_specs), services)
    mountable = set(built)
    tasks = (task for task in stored if mountable.issuperset(task.services))  # parsed one at a time
    incoming = storage.path("models", "rl_checkpoint", f".incoming-{uuid.uuid4().hex}", "rl.jsonl")
    try:
        if not write_rl_file(tasks, built, incoming, tables.seed_states_from_rows(services), mode=config.mode):
            raise dg.Failure(description="no RL task has all of its services built")
        flags = {"model": sft_checkpoint["checkpoint_path"][0], "learning_rate": config.learning_rate,
                 "num_generations": config.num_generations,
                 "max_completion_length": config.max_completion_length, "max_turns": config.max_turns,
                 "reward": config.reward, "bf16": config.bf16}
        inputs = {"rl_file": incoming.read_text(encoding="utf-8"), "sft_hash": sft_checkpoint["checkpoint_hash"][0],
                  "flags": {k: _flag(v) for k, v in flags.items()}, "extra_args": config.extra_args}
        folder = artifact_folder(storage, "rl_checkpoint", {**inputs, "max_steps": config.max_steps})
        rl_file = folder / "rl.jsonl"
        if not rl_file.is_file():
            shutil.move(services_path(incoming), services_path(rl_file))
            shutil.move(incoming, rl_file)
    finally:
        shutil.rmtree(incoming.parent, ignore_errors=True)
    fingerprint = resume_fingerprint(inputs)
    flags.update(rl_file=rl_file, max_steps=config.max_steps)
    return TrainingPlan(method="grpo", flags=flags, extra_args=list(config.extra_args), folder=str(folder),
                        resume_dir=str((compute.resume_dir_for(context) / fingerprint).resolve()),
                        fingerprint=fingerprint, final_metric="final_reward", gpus=config.gpus)


@dg.graph_asset(group_name="training", code_version=CHECKPOINT_CODE_VERSION,
                metadata={"primary_key": "checkpoint_hash"}, config=config_to("grpo_plan", config_class=GRPOTrainingConfig),
                ins={"services": dg.AssetIn(partition_mapping=dg.AllPartitionMapping()),
                     "sampled_tasks": dg.AssetIn(partition_mapping=dg.AllPartitionMapping())},
                resource_defs=HANDOFF_RESOURCES, kinds=TRAINING_KINDS, owners=TRAINING_OWNERS)
def rl_checkpoint(rl_tasks, sampled_tasks, service_specs, services, sft_checkpoint):
    """GRPO from the SFT checkpoint on the RL tasks, rewarded by the rubric (``training.grpo`` through Pipes).

    The table's ``final_loss`` column holds the last step's mean reward.
    """
    return store_checkpoint(train(grpo_plan(rl_tasks, sampled_tasks, service_specs, services, sft_checkpoint)))


base_model, sft_checkpoint, rl_checkpoint = (
    asset.map_asset_specs(lambda spec: spec.replace_attributes(freshness_policy=WEEKLY_TRAINING))
    for asset in (base_model, sft_checkpoint, rl_checkpoint))
