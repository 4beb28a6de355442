"""The training assets end to end: SFT through Pipes on the local and Slurm backends, failure, resume.

A tiny random Llama (two layers) on SmolLM2's tokenizer stands in for the real model, so one SFT
job is a few seconds of training plus the job's imports; the SFT data are four hand-written
samples. Upstream tables (``sft_dataset``) are stand-in assets of the same key.
"""

import json
import math
import os
import shutil
import subprocess
from pathlib import Path

import dagster as dg
import polars as pl
import pytest

from compoworld_assets.definitions import build_resources
from compoworld_assets.defs.datasets.assets import SFT_SCHEMA
from compoworld_assets.defs.training import assets as training_assets
from compoworld_assets.defs.training import checks as training_checks
from compoworld_assets.defs.training.assets import BaseModelConfig, SFTTrainingConfig
from resources.compute import ComputeResource, SlurmConfig
from resources.partitioned_tables import PARTITIONS_IO_MANAGER
from training.pipes_entry import grpo_metadata

pytest.importorskip("trl", reason="training needs the 'train' extra")
os.environ.setdefault("OMP_NUM_THREADS", "1")

REPO = Path(__file__).resolve().parents[2]
SLURM_CONF = Path(os.environ.get("SLURM_LOCAL_ROOT", "/tmp/compoworld-slurm"), "etc", "slurm.conf")
TOOLS = [{"type": "function", "function": {"name": "crm_get_contact", "description": "Get a contact.",
                                            "parameters": {"type": "object", "required": ["contact_id"],
                                                           "properties": {"contact_id": {"type": "string"}}}}}]


def sample(i: int) -> dict:
    call = {"id": f"call_{i}", "type": "function",
            "function": {"name": "crm_get_contact", "arguments": json.dumps({"contact_id": f"cont_{i}"})}}
    messages = [{"role": "user", "content": f"Look up contact cont_{i}."},
                {"role": "assistant", "content": "", "tool_calls": [call]},
                {"role": "tool", "tool_call_id": f"call_{i}", "content": json.dumps({"id": f"cont_{i}"})},
                {"role": "assistant", "content": f"Contact cont_{i} exists."}]
    return {"tools": TOOLS, "messages": messages, "meta": {"domain": "crm", "score": 1.0}}


@dg.asset(name="sft_dataset")
def stand_in_sft_dataset() -> pl.DataFrame:
    return pl.DataFrame([{"trajectory_id": f"t{i}", "task_id": f"task{i}", "round": "r0", "domain": "crm",
                          "sample_json": json.dumps(sample(i))} for i in range(4)], schema=SFT_SCHEMA)


def stand_in(name: str, frame: pl.DataFrame) -> dg.AssetsDefinition:
    @dg.asset(name=name)
    def _table() -> pl.DataFrame:
        return frame

    return _table


def stand_in_round(name: str, frame: pl.DataFrame) -> dg.AssetsDefinition:
    """A table partitioned by round, stored as the pipeline's round tables are (Delta, read lazily downstream)."""
    @dg.asset(name=name, partitions_def=dg.StaticPartitionsDefinition(frame["round"].unique().sort().to_list()),
              io_manager_key=PARTITIONS_IO_MANAGER, metadata={"partition_expr": "round"})
    def _table() -> pl.DataFrame:
        return frame

    return _table


@pytest.fixture(scope="module")
def tiny_model_dir(tmp_path_factory) -> Path:
    """Two layers, hidden size 32, on SmolLM2's tokenizer read from the bundled GGUF (no conversion)."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    from training.base_model import bundled_gguf

    try:
        gguf = bundled_gguf()
    except FileNotFoundError as exc:
        pytest.skip(str(exc))
    torch.manual_seed(0)
    config = AutoConfig.from_pretrained(gguf.parent, gguf_file=gguf.name)
    config.update({"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2,
                   "num_key_value_heads": 1, "head_dim": 16, "tie_word_embeddings": True})
    folder = tmp_path_factory.mktemp("tiny")
    AutoModelForCausalLM.from_config(config).save_pretrained(folder)
    AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name).save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def slurm_conf() -> str:
    """SLURM_CONF of a reachable cluster, or skip (scripts/slurm/start_slurm.sh brings one up)."""
    conf = os.environ.get("SLURM_CONF") or str(SLURM_CONF)
    if shutil.which("sinfo") is None or not Path(conf).is_file():
        pytest.skip("no local Slurm cluster (run scripts/slurm/start_slurm.sh)")
    up = subprocess.run(["sinfo", "-h"], env={**os.environ, "SLURM_CONF": conf}, check=False,
                        capture_output=True, timeout=10).returncode == 0
    if not up:
        pytest.skip(f"no Slurm controller answers with SLURM_CONF={conf}")
    return conf


class Training:
    """Materializes the base model and SFT assets (with their checks) in a fresh data folder."""

    def __init__(self, root: Path, compute: ComputeResource, instance: dg.DagsterInstance, model_dir: Path):
        self.resources = {**build_resources(str(root / "data")), "compute": compute}
        self.instance = instance
        self.model_dir = model_dir
        self.database = root / "data" / "compoworld.duckdb"

    def sft(self, **sft_config) -> dg.ExecuteInProcessResult:
        settings = {"max_steps": 2, "save_steps": 2, "max_length": 512, "per_device_train_batch_size": 2,
                    **sft_config}
        run_config = dg.RunConfig(ops={"base_model": BaseModelConfig(model=str(self.model_dir)),
                                       "sft_checkpoint": SFTTrainingConfig(**settings)})
        everything = [stand_in_sft_dataset, training_assets.base_model, training_assets.sft_checkpoint,
                      *dg.load_asset_checks_from_modules([training_checks])]
        return dg.materialize(everything, selection=["sft_dataset", "base_model", "sft_checkpoint"],
                              resources=self.resources, instance=self.instance, run_config=run_config,
                              raise_on_error=False)

    def table(self) -> list[dict]:
        import duckdb

        with duckdb.connect(str(self.database), read_only=True) as con:
            return con.execute("select * from pipeline.sft_checkpoint").pl().to_dicts()


@pytest.fixture
def training(tmp_path, tiny_model_dir):
    def make(compute: ComputeResource) -> Training:
        return Training(tmp_path, compute, instance, tiny_model_dir)

    with dg.instance_for_test() as instance:
        yield make


def sft_metadata(result: dg.ExecuteInProcessResult) -> dict:
    [event] = [e for e in result.get_asset_materialization_events() if e.asset_key.path == ["sft_checkpoint"]]
    return {key: value.value for key, value in event.materialization.metadata.items()}


def check_results(result: dg.ExecuteInProcessResult) -> dict[str, bool]:
    return {e.check_name: e.passed for e in result.get_asset_check_evaluations()}


def failure_text(result: dg.ExecuteInProcessResult) -> str:
    [failure] = [event for event in result.all_events if event.is_step_failure]
    return failure.step_failure_data.error.to_string()


@pytest.mark.slow
def test_local_sft_reports_metadata_reuses_its_folder_then_a_larger_budget_resumes(training, tmp_path):
    """Checkpoints are content-addressed: the same inputs and settings reuse their folder, a larger budget
    resumes into a folder of its own, and no later run touches the first one's weights."""
    from training.base_model import checkpoint_hash

    run = training(ComputeResource(shared_dir=str(tmp_path / "compute"), workdir=str(REPO)))
    first = run.sft()
    assert first.success, failure_text(first)
    metadata = sft_metadata(first)
    assert metadata["steps"] == 2 and [p["step"] for p in metadata["loss_curve"]] == [1, 2]
    assert math.isfinite(metadata["final_loss"]) and metadata["tokens_seen"] > 0
    assert metadata["job_wall_time_s"] >= metadata["train_wall_time_s"] > 0 and metadata["resumed_from"] == ""
    assert "| 2 |" in metadata["loss_table"] and metadata["backend"] == "local"
    assert Path(metadata["checkpoint_path"], "model.safetensors").is_file()
    folder = Path(metadata["artifact_folder"])
    assert folder.parent == run.database.parent / "models" / "sft_checkpoint" and metadata["reused"] is False
    assert Path(metadata["checkpoint_path"]) == folder / "checkpoint" and (folder / "train.jsonl").is_file()
    assert check_results(first) == {"base_model_hash_matches": True, "sft_checkpoint_hash_matches": True,
                                    "sft_loss_finite": True}
    [row] = run.table()
    assert (row["steps"], row["backend"], row["checkpoint_hash"]) == (2, "local", metadata["checkpoint_hash"])

    again = sft_metadata(run.sft())
    assert again["reused"] is True and again["artifact_folder"] == metadata["artifact_folder"]
    assert (again["checkpoint_hash"], again["loss_curve"]) == (metadata["checkpoint_hash"], metadata["loss_curve"])

    resumed = sft_metadata(run.sft(max_steps=3))
    assert resumed["resumed_from"].endswith("checkpoint-2") and resumed["steps"] == 3
    assert [p["step"] for p in resumed["loss_curve"]] == [1, 2, 3]
    assert resumed["resume_fingerprint"] == metadata["resume_fingerprint"]
    assert resumed["checkpoint_hash"] != metadata["checkpoint_hash"]
    assert resumed["artifact_folder"] != metadata["artifact_folder"] and resumed["reused"] is False
    assert checkpoint_hash(folder / "checkpoint") == metadata["checkpoint_hash"], "a later run changed the weights"
    assert run.table()[0]["checkpoint_path"] == resumed["checkpoint_path"]


@pytest.mark.slow
def test_failing_job_fails_the_materialization_with_its_log_tail(training, tmp_path):
    run = training(ComputeResource(shared_dir=str(tmp_path / "compute"), workdir=str(REPO)))
    result = run.sft(extra_args=["--no_such_flag", "1"])
    assert not result.success
    text = failure_text(result)
    assert "sft job failed on the local backend" in text
    assert "job.log" in text and "not used by the HfArgumentParser: ['--no_such_flag', '1']" in text
    assert all(e.asset_key.path != ["sft_checkpoint"] for e in result.get_asset_materialization_events())


@pytest.mark.slow
@pytest.mark.slurm
def test_slurm_sft_reports_metadata(training, tmp_path, slurm_conf, monkeypatch):
    monkeypatch.setenv("SLURM_CONF", slurm_conf)
    compute = ComputeResource(backend="slurm", shared_dir=str(tmp_path / "compute"), workdir=str(REPO),
                              poll_interval_s=0.5, slurm=SlurmConfig(time_limit="00:10:00"))
    result = training(compute).sft(epochs=1, curriculum="length")  # 4 samples, batch 2: 2 steps
    assert result.success, failure_text(result)
    metadata = sft_metadata(result)
    assert metadata["steps"] == 2 and len(metadata["loss_curve"]) == 2 and metadata["tokens_seen"] > 0
    assert (metadata["curriculum"], metadata["epochs"]) == ("length", 1.0)
    assert metadata["backend"] == "slurm" and metadata["slurm_job_id"]
    assert Path(metadata["checkpoint_path"], "model.safetensors").is_file()
    assert all(check_results(result).values())


def test_tampered_checkpoint_fails_the_hash_check(tmp_path):
    folder = tmp_path / "ckpt"
    folder.mkdir()
    (folder / "model.safetensors").write_bytes(b"weights")
    from training.base_model import checkpoint_hash

    frame = pl.DataFrame([{"checkpoint_path": str(folder), "checkpoint_hash": checkpoint_hash(folder), "steps": 1,
                           "final_loss": 0.5, "wall_time_s": 1.0, "backend": "local"}])
    assert training_checks.sft_checkpoint_hash_matches(frame).passed
    (folder / "model.safetensors").write_bytes(b"other weights")
    assert not training_checks.sft_checkpoint_hash_matches(frame).passed
    assert not training_checks.sft_loss_finite(frame.with_columns(final_loss=pl.lit(math.nan))).passed


def test_grpo_metadata_weights_pass_rates_by_rollouts():
    metrics = {"steps": 2, "wall_time_s": 3.0, "reward": [{"step": 1, "reward": 0.1}, {"step": 2, "reward": 0.3}],
               "per_step": [{"rollouts": 4, "pass_rate_by_kind": {"state": 0.5},
                             "pass_rate_by_criterion": {"t/c0": 0.5}},
                            {"rollouts": 2, "pass_rate_by_kind": {"state": 1.0},
                             "pass_rate_by_criterion": {"t/c0": 1.0, "t/c1": 0.0}}]}
    metadata = grpo_metadata(metrics)
    assert metadata["final_reward"] == 0.3 and metadata["steps"] == 2
    assert metadata["pass_rate_by_criterion"]["raw_value"] == {"t/c0": round(4 / 6, 4), "t/c1": 0.0}
    assert "| 2 | 0.3000 | 1.00 |" in metadata["reward_table"]["raw_value"]


@pytest.mark.slow
def test_rl_checkpoint_trains_grpo_on_built_services(tiny_model_dir, tmp_path):
    """One GRPO step from a (tiny) SFT checkpoint on engine-built services and tasks; upstream tables are stand-ins."""
    from compoworld_assets.engine import tables, task_tables
    from compoworld_assets.engine.library import builtin_spec
    from compoworld_assets.engine.runtime.sandbox import trusted_executor
    from compoworld_assets.engine.service_build import build_service
    from compoworld_assets.engine.synthesis.offline import OfflineSynthesizer
    from compoworld_assets.engine.tasks.instantiate import TaskConfig
    from compoworld_assets.engine.tasks.pipeline import GenerationConfig, generate_tasks
    from compoworld_assets.engine.tasks.sampling import WalkConfig
    from compoworld_assets.engine.world_model.offline import OfflineWorldModel

    builds = [build_service(builtin_spec(sid), OfflineSynthesizer(), trusted_executor, OfflineWorldModel(), seed=1)
              for sid in ("crm", "helpdesk")]
    generation = GenerationConfig(walk=WalkConfig(max_length=2), task=TaskConfig(min_distractors=0, max_distractors=0))
    tasks, _ = generate_tasks([b.spec for b in builds], {b.spec.id: b.built() for b in builds}, seed=3, n=4,
                              config=generation)
    rows = task_tables.task_rows(tasks, "r0")
    frames = {"rl_tasks": rows.select("task_id", "round", "domain", "n_criteria", "task_hash"),
              "service_specs": tables.spec_rows([b.spec for b in builds]),
              "services": tables.service_rows(builds),
              "sft_checkpoint": pl.DataFrame([{"checkpoint_path": str(tiny_model_dir), "checkpoint_hash": "tiny"}])}
    stand_ins = [stand_in(name, frame) for name, frame in frames.items()]
    resources = {**build_resources(str(tmp_path / "data")),
                 "compute": ComputeResource(shared_dir=str(tmp_path / "compute"), workdir=str(REPO))}
    config = training_assets.GRPOTrainingConfig(max_steps=1, max_completion_length=16, num_generations=2, max_tasks=1,
                                                reward="rubric")
    sampled = stand_in_round("sampled_tasks", rows)  # the tasks themselves, which rl_tasks names
    with dg.instance_for_test() as instance:
        assert dg.materialize([sampled], partition_key="r0", resources=resources, instance=instance).success
        result = dg.materialize([sampled, *stand_ins, training_assets.rl_checkpoint,
                                 training_checks.rl_checkpoint_hash_matches,
                                 training_checks.rl_reward_finite],
                                selection=["rl_tasks", "service_specs", "services", "sft_checkpoint", "rl_checkpoint"],
                                resources=resources, instance=instance, raise_on_error=False,
                                run_config=dg.RunConfig(ops={"rl_checkpoint": config}))
    assert result.success, failure_text(result)
    [event] = [e for e in result.get_asset_materialization_events() if e.asset_key.path == ["rl_checkpoint"]]
    metadata = {key: value.value for key, value in event.materialization.metadata.items()}
    assert metadata["steps"] == 1 and len(metadata["reward_curve"]) == 1 and metadata["reward_function"] == "rubric"
    assert metadata["pass_rate_by_criterion"] and "| 1 |" in metadata["reward_table"]
    folder = Path(metadata["artifact_folder"])
    assert folder.parent == tmp_path / "data" / "models" / "rl_checkpoint"
    assert (folder / "rl.jsonl").is_file() and Path(metadata["checkpoint_path"]).parent == folder
    assert {"rl_checkpoint_hash_matches": True, "rl_reward_finite": True}.items() <= check_results(result).items()


def test_a_new_training_code_version_starts_a_fresh_resume_folder(monkeypatch):
    inputs = {"samples": "abc", "model": "m", "flags": {"learning_rate": "0.0001"}}
    before = training_assets.resume_fingerprint(inputs)
    assert training_assets.resume_fingerprint(dict(inputs)) == before
    monkeypatch.setattr(training_assets, "CHECKPOINT_CODE_VERSION", "1+template-99")
    assert training_assets.resume_fingerprint(inputs) != before
