"""Checks beside the training checkpoints: the stored checkpoint is the one trained, and training stayed finite."""

import math
from pathlib import Path

import dagster as dg
import polars as pl

from training.base_model import checkpoint_hash


def _hash_matches(frame: pl.DataFrame) -> dg.AssetCheckResult:
    [row] = frame.iter_rows(named=True)
    path = Path(row["checkpoint_path"])
    actual = checkpoint_hash(path) if path.is_dir() else None
    return dg.AssetCheckResult(passed=actual == row["checkpoint_hash"],
                               metadata={"path": dg.MetadataValue.path(str(path)), "exists": path.is_dir(),
                                         "stored_hash": row["checkpoint_hash"], "actual_hash": actual or ""})


@dg.asset_check(asset="base_model", blocking=True, pool="duckdb",
                description="The base model folder exists and hashes as stored.")
def base_model_hash_matches(base_model: pl.DataFrame) -> dg.AssetCheckResult:
    return _hash_matches(base_model.rename({"path": "checkpoint_path"}))


@dg.asset_check(asset="sft_checkpoint", blocking=True, pool="duckdb",
                description="The SFT checkpoint folder exists and hashes as stored.")
def sft_checkpoint_hash_matches(sft_checkpoint: pl.DataFrame) -> dg.AssetCheckResult:
    return _hash_matches(sft_checkpoint)


@dg.asset_check(asset="sft_checkpoint", blocking=True, pool="duckdb",
                description="SFT trained steps and its final loss is finite.")
def sft_loss_finite(sft_checkpoint: pl.DataFrame) -> dg.AssetCheckResult:
    [row] = sft_checkpoint.iter_rows(named=True)
    return dg.AssetCheckResult(passed=row["steps"] > 0 and math.isfinite(row["final_loss"]),
                               metadata={"steps": row["steps"], "final_loss": row["final_loss"]})


@dg.asset_check(asset="rl_checkpoint", blocking=True, pool="duckdb",
                description="The GRPO checkpoint folder exists and hashes as stored.")
def rl_checkpoint_hash_matches(rl_checkpoint: pl.DataFrame) -> dg.AssetCheckResult:
    return _hash_matches(rl_checkpoint)


@dg.asset_check(asset="rl_checkpoint", blocking=True, pool="duckdb",
                description="GRPO trained steps and its last mean reward (final_loss column) is finite.")
def rl_reward_finite(rl_checkpoint: pl.DataFrame) -> dg.AssetCheckResult:
    [row] = rl_checkpoint.iter_rows(named=True)
    return dg.AssetCheckResult(passed=row["steps"] > 0 and math.isfinite(row["final_loss"]),
                               metadata={"steps": row["steps"], "final_reward": row["final_loss"]})
