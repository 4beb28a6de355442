"""The job side of the training assets: one training script inside a Dagster Pipes session.

    python -m training.pipes_entry sft --train_file F --output_dir RESUME --final_dir D [SFT/TRL flags]
    python -m training.pipes_entry grpo --rl_file F --model SFT --output_dir RESUME --final_dir D [GRPO/TRL flags]

Checkpoints go to ``output_dir`` (the assets pass their resume folder, so a retried job resumes
from the last ``checkpoint-*``); the final model, tokenizer and ``metrics.json`` are then copied
into ``final_dir``, which is hashed. The job reports its curves and numbers as the
materialization's metadata. Everything it prints also goes to ``$COMPOWORLD_RESUME_DIR/job.log``
(see :data:`JOB_LOG`), so the asset can show the tail of a failed attempt on every backend.
"""

from __future__ import annotations

import math
import os
import shutil
import sys
import time
import traceback
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from training.base_model import checkpoint_hash

RESUME_DIR_ENV = "COMPOWORLD_RESUME_DIR"  # resources.compute sets it; the job side needs no dagster
JOB_LOG = "job.log"


@dataclass
class ExportConfig:
    final_dir: str = field(default="", metadata={"help": "Where the final model, tokenizer and metrics are copied."})


class _Tee:
    """A text stream that writes to the original stream and a log file."""

    def __init__(self, stream: TextIO, log: TextIO) -> None:
        self.stream = stream
        self.log = log

    def write(self, text: str) -> int:
        self.log.write(text)
        self.log.flush()
        return self.stream.write(text)

    def flush(self) -> None:
        self.stream.flush()
        self.log.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


@contextmanager
def job_log():
    """Copy stdout and stderr into the resume folder's job log while the job runs (when it has one)."""
    resume_dir = os.environ.get(RESUME_DIR_ENV)
    if not resume_dir:
        yield
        return
    with Path(resume_dir, JOB_LOG).open("w", encoding="utf-8") as log:
        saved = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = _Tee(sys.stdout, log), _Tee(sys.stderr, log)
        try:
            yield
        except BaseException:
            traceback.print_exc(file=log)
            raise
        finally:
            sys.stdout, sys.stderr = saved


def export_final(output_dir: str | Path, final_dir: str | Path) -> Path:
    """Replace ``final_dir`` with the top-level files of ``output_dir`` (not its checkpoints or log)."""
    final = Path(final_dir)
    if final.exists():
        shutil.rmtree(final)
    final.mkdir(parents=True)
    for path in sorted(Path(output_dir).iterdir()):
        if path.is_file() and path.name != JOB_LOG:
            shutil.copy2(path, final / path.name)
    return final


def _json(value: Any) -> dict[str, Any]:
    return {"raw_value": value, "type": "json"}


def _markdown(text: str) -> dict[str, Any]:
    return {"raw_value": text, "type": "md"}


def _finite_or_none(value: float) -> float | None:
    return value if math.isfinite(value) else None


def sft_metadata(metrics: dict[str, Any]) -> dict[str, Any]:
    table = "| step | loss |\n| --- | --- |\n" + "".join(f"| {p['step']} | {p['loss']:.4f} |\n" for p in metrics["loss"])
    return {"steps": metrics["steps"], "final_loss": _finite_or_none(metrics["final_loss"]),
            "tokens_seen": metrics["tokens_seen"], "samples": metrics["samples"],
            "train_wall_time_s": metrics["wall_time_s"], "resumed_from": metrics["resumed_from"] or "",
            "curriculum": metrics.get("curriculum", "none"), "epochs": metrics.get("epochs", 0.0),
            "loss_curve": _json(metrics["loss"]), "loss_table": _markdown(table)}


def grpo_metadata(metrics: dict[str, Any]) -> dict[str, Any]:
    """Reward curve, per-step pass rates by criterion kind, and each task criterion's rate over all rollouts."""
    kinds = sorted({k for step in metrics["per_step"] for k in step["pass_rate_by_kind"]})
    rewards = {p["step"]: p["reward"] for p in metrics["reward"]}
    rows = "".join(
        f"| {i} | {rewards.get(i, math.nan):.4f} | "
        + " | ".join(f"{step['pass_rate_by_kind'].get(k, math.nan):.2f}" for k in kinds) + " |\n"
        for i, step in enumerate(metrics["per_step"], start=1))
    table = f"| step | reward | {' | '.join(kinds)} |\n|{' --- |' * (len(kinds) + 2)}\n{rows}"
    passed: dict[str, float] = {}
    counted: dict[str, int] = {}
    for step in metrics["per_step"]:
        for criterion, rate in step["pass_rate_by_criterion"].items():
            passed[criterion] = passed.get(criterion, 0.0) + rate * step["rollouts"]
            counted[criterion] = counted.get(criterion, 0) + step["rollouts"]
    final_reward = metrics["reward"][-1]["reward"] if metrics["reward"] else math.nan
    return {"steps": metrics["steps"], "reward_function": metrics.get("reward_function", "cfrr"),
            "final_reward": _finite_or_none(final_reward),
            "train_wall_time_s": metrics["wall_time_s"], "reward_curve": _json(metrics["reward"]),
            "pass_rates_by_kind": _json([step["pass_rate_by_kind"] for step in metrics["per_step"]]),
            "pass_rate_by_criterion": _json({c: round(passed[c] / counted[c], 4) for c in sorted(passed)}),
            "reward_table": _markdown(table)}


def train(method: str, argv: list[str]) -> tuple[dict[str, Any], Path]:
    """Parse the script's flags, train, export; returns the metadata of the script's metrics and the final folder."""
    from trl import TrlParser

    if method == "sft":
        from training.sft import CompoSFTConfig, SFTScriptConfig, run_sft

        script, config, export = TrlParser((SFTScriptConfig, CompoSFTConfig, ExportConfig)).parse_args_and_config(
            args=argv)
        metadata = sft_metadata(run_sft(script, config))
    elif method == "grpo":
        from training.grpo import CompoGRPOConfig, GRPOScriptConfig, run_grpo

        script, config, export = TrlParser((GRPOScriptConfig, CompoGRPOConfig, ExportConfig)).parse_args_and_config(
            args=argv)
        metadata = grpo_metadata(run_grpo(script, config))
    else:
        raise SystemExit(f"unknown training method {method!r}: expected sft or grpo")
    if not export.final_dir:
        raise SystemExit("--final_dir is required")
    return metadata, export_final(config.output_dir, export.final_dir)


def main(argv: list[str] | None = None) -> None:
    from dagster_pipes import open_dagster_pipes

    argv = sys.argv[1:] if argv is None else argv
    if not argv:
        raise SystemExit("usage: python -m training.pipes_entry sft|grpo [script flags]")
    started = time.monotonic()
    with job_log(), open_dagster_pipes() as pipes:
        pipes.log.info(f"training: {argv[0]} {' '.join(argv[1:])}")
        metadata, final = train(argv[0], argv[1:])
        metadata.update({"checkpoint_path": {"raw_value": str(final.resolve()), "type": "path"},
                         "checkpoint_hash": checkpoint_hash(final),
                         "job_wall_time_s": round(time.monotonic() - started, 2)})
        pipes.report_asset_materialization(metadata=metadata)


if __name__ == "__main__":
    main()
