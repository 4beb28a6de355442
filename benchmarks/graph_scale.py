"""How the dependency graph grows with the library: edges, build time and memory against tools.

Imports the built-in library and ``--specs N`` seeded APIs.guru specs (``--specs -1``: the whole
corpus), builds the graph as the pipeline does (dense shared types sampled to ``FANOUT`` edges per
producer output and per consumer parameter) and, with ``--exact``, again with every producer ×
consumer edge, and prints for each: edges, edges per tool, seconds and the growth of this process's
resident memory while the graph is built and held. The densest types show why::

    OMP_NUM_THREADS=1 python benchmarks/graph_scale.py --specs 430 --exact
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import sys
import time
from collections import Counter
from multiprocessing import Pool
from pathlib import Path

import psutil

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT / "benchmarks"))

from import_apis_guru import ensure_corpus

from compoworld_assets.engine.library import builtin_specs
from compoworld_assets.engine.specs.importers import dedupe_service_ids, import_spec_file
from compoworld_assets.engine.specs.model import ImportResult, ServiceSpec
from compoworld_assets.engine.tasks import graph as dependency_graph


def import_json(path: str) -> tuple[list[str], list]:
    """One spec file's services as JSON (full specs pickle slowly) and its quarantine rows."""
    result = import_spec_file(path)
    return [s.model_dump_json() for s in result.specs], result.quarantined


def library(api: Path, count: int, seed: int, workers: int) -> list[ServiceSpec]:
    files = sorted(str(p) for p in api.rglob("*.json"))
    chosen = files if count < 0 else sorted(random.Random(seed).sample(files, min(count, len(files))))
    imported = ImportResult()
    with Pool(workers) as pool:
        for specs, quarantined in pool.imap(import_json, chosen, chunksize=4):
            imported.specs.extend(ServiceSpec.model_validate_json(s) for s in specs)
            imported.quarantined.extend(quarantined)
    builtin = builtin_specs()
    return [*builtin, *dedupe_service_ids(imported, seen={s.id for s in builtin}).specs]


def measure(specs: list[ServiceSpec], fanout: int | None, ends: dict[str, set]) -> str:
    """Build the graph and describe it; ``ends[label]`` collects the (tool, side) ends of its type edges."""
    gc.collect()
    before = psutil.Process().memory_info().rss
    started = time.perf_counter()
    graph = dependency_graph.build_dependency_graph(specs, fanout=fanout)
    seconds = time.perf_counter() - started
    held = psutil.Process().memory_info().rss - before
    tools = graph.number_of_nodes()
    ends["sampled" if fanout else "exact"] = {(end, side) for u, v, d in graph.edges(data=True) if d["kind"] == "type"
                                              for end, side in ((u, "out"), (f"{v}:{d['parameter']}", "in"))}
    cross = Counter(d["type"] for _, _, d in graph.edges(data=True) if d["cross_service"] and "." not in d["type"])
    line = (f"{graph.number_of_edges():,} edges ({graph.number_of_edges() / max(tools, 1):.1f} per tool), "
            f"{seconds:.1f} s, +{held / 2**20:,.0f} MB resident; cross-service by shared type: "
            + ", ".join(f"{t} {n:,}" for t, n in cross.most_common()))
    del graph
    return line


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--specs", type=int, default=430, help="seeded APIs.guru specs; -1: all")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="processes importing specs")
    parser.add_argument("--exact", action="store_true", help="also build with every producer x consumer edge")
    parser.add_argument("--cache", type=Path, default=REPO_ROOT / ".cache")
    args = parser.parse_args()
    started = time.perf_counter()
    ends: dict[str, set] = {}
    specs = library(ensure_corpus(args.cache), args.specs, args.seed, args.workers) if args.specs else builtin_specs()
    tools = sum(len(s.tools) for s in specs)
    print(f"library:   {len(specs):,} services, {tools:,} tools (imported in {time.perf_counter() - started:.0f} s)")
    pairs = dependency_graph.type_pairs(specs)
    for type_name in sorted(pairs, key=lambda t: -pairs[t][0] * pairs[t][1])[:5]:
        outputs, parameters = pairs[type_name]
        mode = "sampled" if outputs * parameters > dependency_graph.DENSE_PAIRS else "exact"
        print(f"  {type_name:<28} {outputs:>7,} outputs x {parameters:>6,} parameters = "
              f"{outputs * parameters:>13,} pairs ({mode})")
    print(f"graph (fanout {dependency_graph.FANOUT}, dense above {dependency_graph.DENSE_PAIRS:,} pairs): "
          f"{measure(specs, dependency_graph.FANOUT, ends)}")
    if args.exact:
        print(f"graph (every pair): {measure(specs, None, ends)}")
        kept = len(ends["sampled"] & ends["exact"])
        print(f"producing tools and consumer parameters with a type edge: {kept:,} of {len(ends['exact']):,} "
              f"keep one when sampled")
    print(f"peak RSS of this process: {psutil.Process().memory_info().rss / 2**20:,.0f} MB now; "
          f"wall {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
