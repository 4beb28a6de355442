"""Throughput of the task factory and of trajectory verification on this machine.

Builds the built-in services offline (offline synthesizer, sandboxed executors, offline world
model), generates ``--n`` tasks, rolls each out with the oracle in gateway and direct mode
(``--mount-size`` services mounted per episode) and verifies every trajectory by replay.
Prints tasks sampled per second, the gate pass share, rollouts per second and trajectories
verified per second, each phase also with the CPU seconds this process spent on it (wall-clock
rates are only comparable on an otherwise idle machine; the sandbox children's and the task workers'
CPU is not in it). ``--workers N`` makes the tasks in N processes (the same tasks).

    python benchmarks/tasks_and_trajectories.py --n 50 --seed 0 [--workers 2]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time

from compoworld_assets.engine.library import builtin_service_ids
from compoworld_assets.engine.rollout.engine import run_rollouts
from compoworld_assets.engine.rollout.library_world import build_library
from compoworld_assets.engine.rollout.policy import OraclePolicy
from compoworld_assets.engine.rollout.verify import verify_trajectories


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=50, help="plans to sample (tasks are those that pass the gate)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--services", type=int, default=0, help="build only the first N built-ins (0: all)")
    parser.add_argument("--mount-size", type=int, default=15)
    parser.add_argument("--concurrency", type=int, default=min(8, os.cpu_count() or 1))
    parser.add_argument("--workers", type=int, default=1, help="processes turning plans into gated tasks")
    args = parser.parse_args()

    service_ids = builtin_service_ids()[: args.services or None]
    started = time.perf_counter()
    library = build_library(service_ids, seed=args.seed)
    print(f"built {len(library.builds)} services in {time.perf_counter() - started:.1f}s")

    started, cpu = time.perf_counter(), time.process_time()
    tasks, quarantined = library.sample_tasks(args.n, args.seed, workers=args.workers)
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    gated = len(tasks) + sum(q.stage == "gate" for q in quarantined)
    print(f"tasks: {len(tasks)} from {args.n} sampled plans in {elapsed:.2f}s (cpu {cpu:.2f}s) -> "
          f"{len(tasks) / elapsed:.1f} tasks/s with {args.workers} worker(s); "
          f"{len(quarantined) - (gated - len(tasks))} plans did not instantiate; gate pass share "
          f"{len(tasks)}/{gated} = {len(tasks) / max(gated, 1):.1%}")

    with library.world_factory(args.mount_size) as factory:
        for mode in ("gateway", "direct"):
            started, cpu = time.perf_counter(), time.process_time()
            trajectories = asyncio.run(run_rollouts(tasks, OraclePolicy, factory, mode=mode,
                                                    concurrency=args.concurrency))
            rolled, rolled_cpu = time.perf_counter() - started, time.process_time() - cpu
            started, cpu = time.perf_counter(), time.process_time()
            verified = verify_trajectories({task.task_id: task for task in tasks}, trajectories, factory)
            checked, checked_cpu = time.perf_counter() - started, time.process_time() - cpu
            kept = sum(v.passed for v in verified)
            print(f"{mode}: {len(trajectories)} oracle rollouts in {rolled:.2f}s (cpu {rolled_cpu:.2f}s) "
                  f"({len(trajectories) / rolled:.1f}/s, concurrency {args.concurrency}), "
                  f"{len(verified)} verified by replay in {checked:.2f}s (cpu {checked_cpu:.2f}s) "
                  f"({len(verified) / checked:.1f}/s), kept {kept}/{len(verified)}")


if __name__ == "__main__":
    main()
