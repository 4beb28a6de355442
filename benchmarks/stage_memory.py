"""Peak memory and wall time of each stage of a task round, through the command line users run.

Materializes the stages of one task round of an existing data folder one at a time (``compoworld
materialize ... --partition ROUND``, each its own run), then the datasets, and prints for each the wall time
and the peak resident memory of its whole process tree (``peak_memory.py``: the run, and the service
processes it starts). The round must have been sampled already, or ``--stages`` start at ``sample_tasks``
(which samples it, again or for the first time). Spec folders beyond the built-in library are named as for the run
that made the data folder (``COMPOWORLD_SPEC_DIR``).

    .venv/bin/python benchmarks/stage_memory.py --data-dir data [--round r000] [--interval-s 0.5] \
        [--stages rubrics trajectories verified_trajectories datasets]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))  # the benchmarks folder: peak_memory

from peak_memory import PeakMemory

# Stages that are several assets: the datasets (unpartitioned), the task round's sampling (one multi-asset).
DATASETS = ["sft_dataset", "rl_tasks"]
SAMPLING = ["sampled_tasks", "quarantined_tasks"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--round", default="r000")
    parser.add_argument("--stages", nargs="+", default=["rubrics", "trajectories", "verified_trajectories", "datasets"],
                        help="round assets in order; 'sample_tasks' samples the round again, 'datasets' makes "
                        "sft_dataset and rl_tasks")
    parser.add_argument("--interval-s", type=float, default=0.5,
                        help="seconds between samples of the process tree; each reads every process's smaps_rollup, "
                        "which at ~200 processes every 0.5 s takes ~40%% of a core from stages that use both")
    args = parser.parse_args()
    cli = [str(Path(sys.executable).parent / "compoworld"), "materialize", "--data-dir", args.data_dir]
    env = dict(os.environ, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"))
    for stage in args.stages:
        assets = SAMPLING if stage == "sample_tasks" else [stage]
        command = cli + (DATASETS if stage == "datasets" else [*assets, "--partition", args.round])
        started = time.perf_counter()
        with PeakMemory(args.interval_s) as peak:
            code = subprocess.call(command, cwd=REPO_ROOT, env=env, stdout=subprocess.DEVNULL)
        print(f"{stage:<24} rc {code}  wall {time.perf_counter() - started:7.1f} s  {peak.summary()}", flush=True)
        if code:
            sys.exit(code)


if __name__ == "__main__":
    main()
