"""What dispatching SFT through Dagster Pipes costs: the same small SFT by hand and as the ``sft_checkpoint`` asset.

    .venv/bin/python benchmarks/sft_dispatch_overhead.py [--steps 4] [--model CHECKPOINT] [--slurm]

Data: engine-made SFT samples (``training.demo_data``). Model: a tiny random two-layer Llama on
SmolLM2's tokenizer unless ``--model`` names a checkpoint, so the fixed costs (process start,
imports, model load, Pipes, the IO manager) dominate and the ratio is an upper bound. Every run
starts from scratch. ``--slurm`` adds a run on the Slurm backend (needs ``SLURM_CONF`` or
scripts/slurm/start_slurm.sh's cluster).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import dagster as dg
import polars as pl

from compoworld_assets.definitions import build_resources
from compoworld_assets.defs.datasets.assets import SFT_SCHEMA
from compoworld_assets.defs.training.assets import (
    BaseModelConfig,
    SFTTrainingConfig,
    base_model,
    sft_checkpoint,
)
from resources.compute import ComputeResource
from training.base_model import bundled_gguf
from training.demo_data import build_demo_data
from training.sft import read_sft_file

REPO = Path(__file__).resolve().parents[1]
SLURM_CONF = Path(os.environ.get("SLURM_LOCAL_ROOT", "/tmp/compoworld-slurm"), "etc", "slurm.conf")


def tiny_model(folder: Path) -> Path:
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    gguf = bundled_gguf()
    torch.manual_seed(0)
    config = AutoConfig.from_pretrained(gguf.parent, gguf_file=gguf.name)
    config.update({"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2,
                   "num_key_value_heads": 1, "head_dim": 16, "tie_word_embeddings": True})
    AutoModelForCausalLM.from_config(config).save_pretrained(folder)
    AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name).save_pretrained(folder)
    return folder


def by_hand(train_file: Path, model: Path, output_dir: Path, settings: dict) -> float:
    command = [sys.executable, "-m", "training.sft", "--train_file", str(train_file), "--model", str(model),
               "--output_dir", str(output_dir)]
    for name, value in settings.items():
        command += [f"--{name}", str(value)]
    started = time.perf_counter()
    subprocess.run(command, cwd=REPO, check=True, capture_output=True)
    return time.perf_counter() - started


def through_dagster(samples: list[dict], model: Path, root: Path, settings: dict, compute: ComputeResource) -> float:
    @dg.asset(name="sft_dataset")
    def stand_in_sft_dataset() -> pl.DataFrame:
        return pl.DataFrame([{"trajectory_id": f"t{i:04d}", "task_id": s["meta"]["task_id"], "round": "r0",
                              "domain": s["meta"]["domain"], "sample_json": json.dumps(s)}
                             for i, s in enumerate(samples)], schema=SFT_SCHEMA)

    run_config = dg.RunConfig(ops={"base_model": BaseModelConfig(model=str(model)),
                                   "sft_checkpoint": SFTTrainingConfig(**settings)})
    resources = {**build_resources(str(root / "data")), "compute": compute}
    with dg.instance_for_test() as instance:
        started = time.perf_counter()
        dg.materialize([stand_in_sft_dataset, base_model, sft_checkpoint], resources=resources, instance=instance,
                       run_config=run_config)
        return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--samples", type=int, default=8)
    parser.add_argument("--max-length", type=int, default=1024)
    parser.add_argument("--model", default=None, help="a checkpoint folder (default: a tiny random model)")
    parser.add_argument("--slurm", action="store_true", help="also run on the Slurm backend")
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        files = build_demo_data(root / "demo", services=("crm", "helpdesk", "mail", "invoicing"), n_tasks=24, seed=3)
        samples = read_sft_file(files.sft)[: args.samples]
        model = Path(args.model) if args.model else tiny_model(root / "tiny")
        settings = {"max_steps": args.steps, "save_steps": args.steps, "max_length": args.max_length,
                    "per_device_train_batch_size": 2}
        train_file = root / "sft.jsonl"
        train_file.write_text("".join(json.dumps(s) + "\n" for s in samples))
        print(f"SFT: {len(samples)} samples, {args.steps} steps, model {args.model or 'tiny (2 layers)'}")
        hand = by_hand(train_file, model, root / "by_hand", settings)
        print(f"by hand (python -m training.sft):      {hand:7.1f} s")
        local = through_dagster(samples, model, root / "local", settings,
                                ComputeResource(shared_dir=str(root / "local" / "compute"), workdir=str(REPO)))
        print(f"Dagster, local backend:                {local:7.1f} s  ratio {local / hand:.2f}")
        if args.slurm:
            os.environ.setdefault("SLURM_CONF", str(SLURM_CONF))
            slurm = through_dagster(samples, model, root / "slurm", settings,
                                    ComputeResource(backend="slurm", shared_dir=str(root / "slurm" / "compute"),
                                                    workdir=str(REPO), poll_interval_s=0.5))
            print(f"Dagster, Slurm backend:                {slurm:7.1f} s  ratio {slurm / hand:.2f}")


if __name__ == "__main__":
    main()
