"""Services built per second in one process and in worker processes, with the same outcomes.

Builds N APIs.guru specs chosen by a seed (the corpus of ``import_apis_guru.py``, fetched when
missing) plus the built-in library, as the ``services`` asset does (offline synthesizer, sandboxed
verification, world-model probe, a fresh world-model cache per run), once per worker count, and
prints wall time, services/s and tools/s, the speed-up over one process, and whether every
outcome (service rows, quarantined services) equals the one-process build.

    .venv/bin/python benchmarks/service_builds.py [--specs 60] [--seed 0] [--workers 1,2]
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))  # run as a plain script from any working directory

from benchmarks.import_apis_guru import ensure_corpus
from compoworld_assets.engine import tables
from compoworld_assets.engine.backends import BackendRecipe, LLMSettings
from compoworld_assets.engine.canonical import content_hash
from compoworld_assets.engine.library import builtin_specs
from compoworld_assets.engine.parallel_builds import BuildSettings, build_services, build_workers
from compoworld_assets.engine.runtime.executor import SandboxLimits
from compoworld_assets.engine.service_build import ServiceBuild
from compoworld_assets.engine.specs.importers import dedupe_service_ids, import_spec_file
from compoworld_assets.engine.specs.model import ImportResult


def chosen_specs(cache: Path, count: int, seed: int) -> list:
    builtin = builtin_specs()
    if count == 0:
        return builtin
    files = sorted(str(p) for p in ensure_corpus(cache).rglob("*.json"))
    imported = ImportResult()
    for path in sorted(random.Random(seed).sample(files, min(count, len(files)))):
        imported.extend(import_spec_file(path))
    return [*builtin, *dedupe_service_ids(imported, seen={s.id for s in builtin}).specs]


def outcome_digest(outcomes: list) -> str:
    return content_hash([tables.service_rows([o]).row(0, named=True) if isinstance(o, ServiceBuild)
                         else o.model_dump(mode="json") for o in outcomes])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--specs", type=int, default=60, help="APIs.guru specs besides the built-in library (0: none)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", default=None, help="comma-separated worker counts (default: 1 and the automatic)")
    parser.add_argument("--cache", type=Path, default=REPO_ROOT / ".cache")
    parser.add_argument("--time-limit-s", type=float, default=900.0)
    args = parser.parse_args()
    specs = chosen_specs(args.cache, args.specs, args.seed)
    tools = sum(len(s.tools) for s in specs)
    counts = [int(w) for w in args.workers.split(",")] if args.workers else sorted({1, build_workers(len(specs))})
    largest = max(specs, key=lambda s: len(s.tools))
    print(f"{len(specs)} services, {tools} tools (seed {args.seed}; the largest, {largest.id}, has "
          f"{len(largest.tools)}: no run is shorter than its build); automatic workers here: {build_workers(len(specs))}")
    settings = BuildSettings(seed=args.seed, time_limit_s=args.time_limit_s)
    baseline: tuple[float, str] | None = None
    for workers in counts:
        with tempfile.TemporaryDirectory() as scratch:
            recipe = BackendRecipe(LLMSettings(), SandboxLimits(), str(Path(scratch) / "world_model_cache.sqlite"))
            started = time.perf_counter()
            outcomes = build_services(specs, recipe, settings, workers=workers)
            wall = time.perf_counter() - started
        digest = outcome_digest(outcomes)
        baseline = baseline or (wall, digest)
        failed = sum(1 for o in outcomes if not isinstance(o, ServiceBuild))
        print(f"workers {workers:>2}: {wall:7.1f} s  {len(specs) / wall:6.2f} services/s  {tools / wall:7.1f} tools/s  "
              f"x{baseline[0] / wall:4.2f}  quarantined {failed}  outcomes "
              f"{'same as the first' if digest == baseline[1] else 'DIFFERENT'} ({digest[:12]})")


if __name__ == "__main__":
    main()
