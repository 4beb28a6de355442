"""Does SFT on CompoWorld data lift the bundled model on held-out tasks? One command, end to end on CPU.

Runs, each step a separate process (the same commands docs/results.md lists), skipping a step whose
output already exists so an interrupted run picks up where it stopped:

1. ``training.base_model``: the bundled SmolLM2-135M-Instruct as an fp32 checkpoint;
2. ``training.demo_data``: tasks over four built-in services, verified oracle trajectories of the
   train split (``sft.jsonl``) and every held-out task (``heldout_tasks.jsonl``: service combinations
   the SFT file never has);
3. ``training.sft``: full fine-tuning, cosine schedule;
4. ``training.benchmark_suite`` on the held-out tasks for the base model and the SFT checkpoint
   (greedy, one seed, derived budgets, episodes batched on the local server);
5. ``compoworld_assets.engine.evaluation.compare``: paired differences with bootstrap 95% intervals,
   printed and written to ``<out>/lift.md``.

    OMP_NUM_THREADS=2 python benchmarks/sft_lift.py --out-dir data/lift
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

METRICS = ("success", "rubric_completion", "first_call_exact", "made_tool_call")


def step(name: str, done: Path, command: list[str]) -> None:
    if done.exists():
        print(f"{name}: kept {done}", flush=True)
        return
    started = time.monotonic()
    subprocess.run([sys.executable, "-m", *command], check=True)
    print(f"{name}: {time.monotonic() - started:.0f} s", flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out-dir", default="data/lift")
    parser.add_argument("--n-tasks", type=int, default=400, help="task walks for the demo data")
    parser.add_argument("--data-seed", type=int, default=3)
    parser.add_argument("--steps", type=int, default=48, help="SFT steps (batch 1)")
    parser.add_argument("--learning-rate", type=float, default=1e-4)
    parser.add_argument("--heldout", type=int, default=100, help="held-out tasks scored (0: all)")
    args = parser.parse_args(argv)
    out = Path(args.out_dir)
    base, demo, sft, evals = out / "base", out / "demo", out / "sft", out / "eval"
    os.environ.setdefault("OMP_NUM_THREADS", "2")

    step("base model", base / "config.json", ["training.base_model", "--output-dir", str(base)])
    step("demo data", demo / "heldout_tasks.jsonl",
         ["training.demo_data", "--output-dir", str(demo), "--n-tasks", str(args.n_tasks),
          "--seed", str(args.data_seed), "--heldout-fraction", "0.35"])
    step("sft", sft / "metrics.json",
         ["training.sft", "--train_file", str(demo / "sft.jsonl"), "--output_dir", str(sft), "--model", str(base),
          "--max_steps", str(args.steps), "--per_device_train_batch_size", "1",
          "--learning_rate", str(args.learning_rate), "--lr_scheduler_type", "cosine", "--warmup_steps", "2",
          "--save_steps", str(max(1, args.steps // 3)), "--logging_steps", "1", "--seed", "0"])
    reports = []
    for name, checkpoint in (("base", base), ("sft", sft)):
        report = evals / f"{name}.json"
        step(f"held-out eval: {name}", report,
             ["training.benchmark_suite", "--checkpoint", str(checkpoint), "--name", name, "--out", str(report),
              "--benchmarks", "compoworld_heldout", "--heldout", str(args.heldout),
              "--heldout-file", str(demo / "heldout_tasks.jsonl"), "--seeds", "1", "--temperature", "0"])
        reports.append(str(report))
    subprocess.run([sys.executable, "-m", "compoworld_assets.engine.evaluation.compare", *reports,
                    "--metrics", *METRICS, "--out", str(out / "lift.md")], check=True)


if __name__ == "__main__":
    main()
