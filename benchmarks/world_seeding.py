"""What seeding a task's world costs per service, on a seeded sample of the APIs.guru corpus.

    .venv/bin/python benchmarks/world_seeding.py [--specs 150] [--seed 0] [--repeat 3]

Every task seeds the services of its world again with its own seed (``seeding.seed_world``), so with
imported services this is a large share of task generation. Each imported service is seeded alone
``--repeat`` times with different seeds; the script prints services seeded per second, the median and
slowest service, and the share of the time spent drawing strings for regex patterns.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import random
import statistics
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))  # run as a plain script from any working directory

from import_apis_guru import ensure_corpus

from compoworld_assets.engine.library.seeding import seed_world
from compoworld_assets.engine.specs.importers import import_spec_file


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--specs", type=int, default=150, help="APIs.guru specs chosen by --seed")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3, help="seedings of each service, each with its own seed")
    parser.add_argument("--cache", type=Path, default=REPO_ROOT / ".cache")
    args = parser.parse_args()
    files = sorted(str(p) for p in ensure_corpus(args.cache).rglob("*.json"))
    chosen = sorted(random.Random(args.seed).sample(files, min(args.specs, len(files))))
    specs = [spec for path in chosen for spec in import_spec_file(path).specs]
    times: list[tuple[float, str]] = []
    profile = cProfile.Profile()
    profile.enable()
    for spec in specs:
        started = time.perf_counter()
        for world_seed in range(args.repeat):
            seed_world([spec], world_seed)
        times.append(((time.perf_counter() - started) / args.repeat, spec.id))
    profile.disable()
    total = sum(t for t, _ in times) * args.repeat
    stats = pstats.Stats(profile)
    patterns = next((v[3] for k, v in stats.stats.items() if k[2] == "pattern_value"), 0.0)  # cumulative time
    slowest = sorted(times, reverse=True)[:3]
    print(f"services: {len(specs)} from {len(chosen)} specs (seed {args.seed}), each seeded {args.repeat} times")
    print(f"seeded {len(specs) * args.repeat} services in {total:.1f} s (profiled): "
          f"{len(specs) * args.repeat / total:.1f} services/s")
    print(f"per service: median {statistics.median(t for t, _ in times) * 1000:.1f} ms, slowest "
          + ", ".join(f"{sid} {t * 1000:.0f} ms" for t, sid in slowest))
    print(f"drawing strings for regex patterns: {patterns:.1f} s ({patterns / total:.0%} of the time)")


if __name__ == "__main__":
    main()
