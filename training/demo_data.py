"""Small training files from built-in services, end to end through the engine (no Dagster).

Builds the services with the offline synthesizer, generates tasks, rolls the oracle out on
every task, keeps the trajectories that verify by replay, and writes:

* ``sft.jsonl``: verified ``train``-split trajectories (sample format);
* ``heldout.jsonl``: verified ``heldout``-split trajectories (sample format, for ``training.evaluate``);
* ``heldout_tasks.jsonl`` + ``heldout_tasks.services.json``: every ``heldout``-split task in the RL
  file format, for whole episodes in ``training.benchmark_suite --heldout-file`` (service
  combinations the SFT file never has, over the same services);
* ``rl.jsonl`` + ``rl.services.json``: the ``rl``-split tasks (for ``training.grpo``).

Used by the tests and the measurements in ``docs/training.md``.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from compoworld_assets.engine.agents.interface import DiscoverMode
from compoworld_assets.engine.exports import sample_record
from compoworld_assets.engine.rollout.engine import run_rollouts
from compoworld_assets.engine.rollout.library_world import build_library
from compoworld_assets.engine.rollout.policy import OraclePolicy
from compoworld_assets.engine.rollout.verify import verify_trajectory
from compoworld_assets.engine.tasks.instantiate import TaskConfig
from compoworld_assets.engine.tasks.pipeline import GenerationConfig
from compoworld_assets.engine.tasks.sampling import WalkConfig
from training.data import write_rl_file, write_sft_file

DEFAULT_SERVICES = ("crm", "helpdesk", "mail", "invoicing")


@dataclass(frozen=True)
class DemoFiles:
    sft: Path
    heldout: Path
    heldout_tasks: Path
    rl: Path
    counts: dict[str, int]


def build_demo_data(output_dir: str | Path, services: Sequence[str] = DEFAULT_SERVICES, n_tasks: int = 12,
                    seed: int = 3, mode: DiscoverMode = "direct", heldout_fraction: float = 0.35,
                    rl_fraction: float = 0.3, max_plan_length: int = 3, distractors: int = 0) -> DemoFiles:
    """Defaults keep prompts short enough for CPU training: direct mode shows the tools of the task's
    own and distractor services only, so no distractors and plans of at most three steps."""
    out = Path(output_dir)
    out.mkdir(parents=True, exist_ok=True)
    config = GenerationConfig(walk=WalkConfig(max_length=max_plan_length),
                              task=TaskConfig(min_distractors=distractors, max_distractors=distractors),
                              heldout_fraction=heldout_fraction, rl_fraction=rl_fraction)
    library = build_library(services)
    tasks, _ = library.sample_tasks(n_tasks, seed, config)
    built, seed_states = library.built, library.seed_states
    by_split = {split: [t for t in tasks if t.split == split] for split in ("train", "heldout", "rl")}
    samples: dict[str, list[dict]] = {"train": [], "heldout": []}
    with library.world_factory() as factory:
        for split, records in samples.items():
            trajectories = asyncio.run(run_rollouts(by_split[split], OraclePolicy, factory, mode=mode,
                                                    concurrency=4))
            for task, trajectory in zip(by_split[split], trajectories, strict=True):
                verified = verify_trajectory(task, trajectory, factory)
                if verified.passed:
                    records.append(sample_record(task, verified))
    files = DemoFiles(sft=out / "sft.jsonl", heldout=out / "heldout.jsonl", heldout_tasks=out / "heldout_tasks.jsonl",
                      rl=out / "rl.jsonl",
                      counts={"tasks": len(tasks), "sft": len(samples["train"]), "heldout": len(samples["heldout"]),
                              "heldout_tasks": len(by_split["heldout"]), "rl": len(by_split["rl"])})
    write_sft_file(samples["train"], files.sft)
    write_sft_file(samples["heldout"], files.heldout)
    for split, path in (("rl", files.rl), ("heldout", files.heldout_tasks)):
        write_rl_file(by_split[split], built, path, seed_states, mode=mode, mount_size=len(services))
    return files


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Build small SFT, held-out and RL files from built-in services.")
    parser.add_argument("--output-dir", required=True)
    parser.add_argument("--services", nargs="+", default=list(DEFAULT_SERVICES))
    parser.add_argument("--n-tasks", type=int, default=12)
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--mode", choices=["direct", "gateway"], default="direct")
    parser.add_argument("--heldout-fraction", type=float, default=0.35,
                        help="share of service combinations held out (the engine default is 0.2)")
    parser.add_argument("--rl-fraction", type=float, default=0.3)
    parser.add_argument("--max-plan-length", type=int, default=3)
    parser.add_argument("--distractors", type=int, default=0)
    args = parser.parse_args(argv)
    files = build_demo_data(args.output_dir, args.services, args.n_tasks, args.seed, args.mode,
                            args.heldout_fraction, args.rl_fraction, args.max_plan_length, args.distractors)
    print(files.counts)


if __name__ == "__main__":
    main()
