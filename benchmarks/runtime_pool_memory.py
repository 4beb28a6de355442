"""Memory of a runtime pool as the library grows: every service process kept vs a capped (LRU) pool.

    .venv/bin/python benchmarks/runtime_pool_memory.py [--services 120] [--episodes 300] [--cap 32] [--memory-mb 512]

Builds ``--services`` services (copies of the built-in library under distinct ids, offline
synthesizer), then mounts ``--episodes`` worlds of 3 seeded random services each, as task sampling
and rollouts do: with no cap, with ``--cap`` processes, and with ``--memory-mb`` of their resident memory
together (``sandbox.max_live_memory_mb``). Prints the peak
resident memory of the pool's processes (sum over live children, sampled after each world), the
processes started and closed, and the wall time of each run.
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import sys
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from compoworld_assets.engine.library import builtin_specs
from compoworld_assets.engine.runtime.sandbox import DEFAULT_LIMITS
from compoworld_assets.engine.runtime.service_runtime import RuntimePool, ServiceMount
from compoworld_assets.engine.specs.importers.service_ids import with_service_id
from compoworld_assets.engine.synthesis.offline import OfflineSynthesizer
from compoworld_assets.engine.world_model import OfflineWorldModel


def library(count: int) -> list[ServiceMount]:
    base = builtin_specs()
    synthesizer = OfflineSynthesizer()
    mounts = []
    for index in range(count):
        spec = base[index % len(base)]
        copy = spec if index < len(base) else with_service_id(spec, f"{spec.id}_copy{index // len(base)}")
        mounts.append(ServiceMount(copy, synthesizer.synthesize(copy)))
    return mounts


def children_rss_mb() -> float:
    total = 0
    for child in psutil.Process().children(recursive=True):
        try:
            total += child.memory_info().rss
        except psutil.Error:
            continue
    return total / 2**20


def run(mounts: list[ServiceMount], episodes: int, cap: int, memory_mb: int | None, seed: int) -> dict[str, float]:
    rng = random.Random(seed)
    limits = dataclasses.replace(DEFAULT_LIMITS, max_live_services=cap, max_live_memory_mb=memory_mb)
    peak, started = 0.0, time.perf_counter()
    with RuntimePool(OfflineWorldModel(), limits) as pool:
        for _ in range(episodes):
            world = pool.world(rng.sample(mounts, 3))
            world.world_state()
            peak = max(peak, children_rss_mb())
        live, evicted = len(pool), pool.evicted
    return {"peak_mb": peak, "live": live, "evicted": evicted, "wall_s": time.perf_counter() - started}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--services", type=int, default=120)
    parser.add_argument("--episodes", type=int, default=300)
    parser.add_argument("--cap", type=int, default=32)
    parser.add_argument("--memory-mb", type=int, default=512)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    mounts = library(args.services)
    print(f"services: {len(mounts)}, episodes: {args.episodes} (3 services each), seed {args.seed}")
    uncapped = len(mounts) + 1
    for label, cap, memory in (("uncapped", uncapped, None), (f"cap {args.cap}", args.cap, None),
                               (f"{args.memory_mb} MB", uncapped, args.memory_mb)):
        r = run(mounts, args.episodes, cap, memory, args.seed)
        print(f"{label:<10} peak RSS of service processes {r['peak_mb']:7.0f} MB  live at end {r['live']:>4.0f}"
              f"  closed early {r['evicted']:>4.0f}  wall {r['wall_s']:6.1f} s")


if __name__ == "__main__":
    main()
