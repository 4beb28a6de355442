"""Tasks sampled, instantiated and gated per second over the built-in library and a seeded APIs.guru sample.

    .venv/bin/python benchmarks/task_factory.py [--specs 150] [--seed 0] [--walks 150] [--workers 2] [--repeat 2]

Builds the built-in services and ``--specs`` APIs.guru specs chosen by ``--seed`` as the services asset does
(``import_apis_guru.py --build`` does the same and goes on to the audit), builds their dependency graph, then
turns ``--walks`` sampled plans into gated tasks ``--repeat`` times in ``--workers`` processes, each run on the
same plans. Prints each run's wall time, tasks per second and per core, and a digest of the tasks and
quarantined plans: the same for any number of workers, and unchanged by any speed-up that keeps the tasks.
Wall-clock rates are only comparable on an otherwise idle machine.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))  # run as a plain script from any working directory

from import_apis_guru import build_library, ensure_corpus, sample_library

from compoworld_assets.engine.canonical import content_hash
from compoworld_assets.engine.service_build import ServiceFailure
from compoworld_assets.engine.tasks.graph import built_services_graph
from compoworld_assets.engine.tasks.pipeline import GenerationConfig, generate_packed_tasks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--specs", type=int, default=150, help="APIs.guru specs chosen by --seed (0: built-ins only)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--walks", type=int, default=150, help="plans sampled (tasks are those that pass the gate)")
    parser.add_argument("--workers", type=int, default=2, help="processes turning plans into gated tasks")
    parser.add_argument("--repeat", type=int, default=2, help="timed runs on the same plans")
    parser.add_argument("--cache", type=Path, default=REPO_ROOT / ".cache")
    args = parser.parse_args()

    started = time.perf_counter()
    builtin, imported, _ = sample_library(ensure_corpus(args.cache), args.specs, args.seed)
    library = [*builtin, *imported.specs]
    outcomes = build_library(library, args.seed, time_limit_s=300.0)
    built = {spec.id: o for spec, o in zip(library, outcomes, strict=True) if not isinstance(o, ServiceFailure)}
    graph = built_services_graph(built)
    specs = [built[sid].spec for sid in sorted(built)]
    print(f"library: {len(built)} services, {sum(len(s.tools) for s in specs)} tools, "
          f"{graph.number_of_edges()} graph edges ({time.perf_counter() - started:.0f} s to import and build)")
    for run in range(1, args.repeat + 1):
        started = time.perf_counter()
        tasks, quarantined = generate_packed_tasks(specs, built, seed=args.seed, n=args.walks,
                                                   config=GenerationConfig(), graph=graph, workers=args.workers)
        wall = time.perf_counter() - started
        digest = content_hash([[t.unpack().model_dump(mode="json") for t in tasks],
                               [q.model_dump(mode="json") for q in quarantined]])[:16]
        print(f"run {run}: {len(tasks)} tasks, {len(quarantined)} plans quarantined in {wall:.1f} s -> "
              f"{len(tasks) / wall:.2f} tasks/s, {len(tasks) / wall / args.workers:.2f} per worker "
              f"({args.workers} workers); digest {digest}")


if __name__ == "__main__":
    main()
