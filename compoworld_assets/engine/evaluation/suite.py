"""The three benchmarks behind one call, their self-tests, and a command line for a checkpoint folder.

    python -m compoworld_assets.engine.evaluation.suite --checkpoint data/models/base --name base \\
        --out data/eval/base.json --seeds 1 2 --heldout 10 --bfcl-per-category 3 --tau2-per-task-set 3

The command line serves the checkpoint with :mod:`compoworld_assets.serving.openai_server`, builds
held-out tasks from the built-in service library (offline synthesis, as the pipeline does without
an LLM) and writes the score rows (self-tests included) as JSON.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compoworld_assets.engine.agents.world import WorldFactory
from compoworld_assets.engine.evaluation import bfcl, heldout, tau2
from compoworld_assets.engine.evaluation.results import ModelEndpoint, SelfTest, score_rows, self_test_rows
from compoworld_assets.engine.tasks.model import Task

BENCHMARKS = (heldout.BENCHMARK, bfcl.BENCHMARK, tau2.BENCHMARK)
LIBRARY_SERVICES = ("crm", "helpdesk", "mail", "invoicing", "calendar", "payments", "orders", "files")


@dataclass(frozen=True)
class SuiteSettings:
    seeds: tuple[int, ...] = (1, 2)
    sample_seed: int = 0
    bootstrap_seed: int = 0
    heldout_tasks: int | None = 10
    heldout_mode: str = "direct"
    heldout_max_steps: int = 8
    bfcl_categories: tuple[str, ...] = bfcl.DEFAULT_CATEGORIES
    bfcl_per_category: int | None = 3
    bfcl_max_steps_per_turn: int = 3
    tau2_task_sets: tuple[str, ...] = tau2.DEFAULT_TASK_SETS
    tau2_per_task_set: int | None = 3
    tau2_max_steps: int = 8
    tau2_max_user_turns: int = 2


@dataclass
class BenchmarkOutcome:
    rows: list[dict[str, Any]]
    self_tests: list[SelfTest]
    details: dict[str, Any] = field(default_factory=dict)
    wall_s: float = 0.0


def run_benchmark(benchmark: str, endpoint: ModelEndpoint, settings: SuiteSettings,
                  heldout_world: tuple[Sequence[Task], WorldFactory] | None = None,
                  user_endpoint: ModelEndpoint | None = None) -> BenchmarkOutcome:
    """Score ``endpoint`` on one benchmark and run that benchmark's self-test on the same sample."""
    started = time.monotonic()
    if benchmark == heldout.BENCHMARK:
        if heldout_world is None:
            raise ValueError("the held-out benchmark needs tasks and a world factory")
        tasks = heldout.select_heldout(heldout_world[0], settings.heldout_tasks, settings.sample_seed)
        if not tasks:
            raise ValueError("no held-out tasks to evaluate on (every task is in train or rl)")
        run = heldout.evaluate_heldout(tasks, heldout_world[1], endpoint, settings.seeds, mode=settings.heldout_mode,
                                       max_steps=settings.heldout_max_steps)
        tests = [heldout.heldout_self_test(tasks, heldout_world[1], mode=settings.heldout_mode)]
    elif benchmark == bfcl.BENCHMARK:
        run = bfcl.evaluate_bfcl(endpoint, settings.seeds, settings.bfcl_categories, settings.bfcl_per_category,
                                 settings.sample_seed, settings.bfcl_max_steps_per_turn)
        tests = [bfcl.bfcl_self_test(settings.bfcl_categories, settings.bfcl_per_category, settings.sample_seed)]
    elif benchmark == tau2.BENCHMARK:
        run = tau2.evaluate_tau2(endpoint, settings.seeds, settings.tau2_task_sets, settings.tau2_per_task_set,
                                 settings.sample_seed, settings.tau2_max_steps, settings.tau2_max_user_turns,
                                 user_endpoint)
        tests = [tau2.tau2_self_test(settings.tau2_task_sets, settings.tau2_per_task_set, settings.sample_seed)]
    else:
        raise ValueError(f"unknown benchmark {benchmark!r}; choose from {BENCHMARKS}")
    rows = score_rows(run, settings.bootstrap_seed) + self_test_rows(benchmark, endpoint.name, tests)
    return BenchmarkOutcome(rows=rows, self_tests=tests, details=run.details, wall_s=time.monotonic() - started)


def library_heldout_world(seed: int = 3, n: int = 60) -> tuple[list[Task], Any]:
    """Tasks over the built-in library services (offline synthesis) and a world factory for them.

    The caller closes the factory. About a fifth of the sampled tasks land in the held-out split.
    """
    from compoworld_assets.engine.library import builtin_spec
    from compoworld_assets.engine.rollout.worlds import PooledWorldFactory
    from compoworld_assets.engine.runtime.sandbox import trusted_executor
    from compoworld_assets.engine.service_build import build_service
    from compoworld_assets.engine.synthesis.offline import OfflineSynthesizer
    from compoworld_assets.engine.tasks.pipeline import generate_tasks
    from compoworld_assets.engine.world_model.offline import OfflineWorldModel

    world_model = OfflineWorldModel()
    builds = {sid: build_service(builtin_spec(sid), OfflineSynthesizer(), trusted_executor, world_model, seed=1)
              for sid in LIBRARY_SERVICES}
    built = {sid: b.built() for sid, b in builds.items()}
    tasks, _ = generate_tasks([b.spec for b in builds.values()], built, seed=seed, n=n)
    factory = PooledWorldFactory(built, {sid: b.seed_state for sid, b in builds.items()}, world_model,
                                 mount_size=len(LIBRARY_SERVICES))
    return tasks, factory


def main(argv: list[str] | None = None) -> None:
    from compoworld_assets.serving.openai_server import LOCAL_API_KEY, local_server

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoint", required=True)
    parser.add_argument("--name", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--benchmarks", nargs="+", default=list(BENCHMARKS))
    parser.add_argument("--seeds", nargs="+", type=int, default=[1, 2])
    parser.add_argument("--temperature", type=float, default=0.7)
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--heldout", type=int, default=10)
    parser.add_argument("--bfcl-per-category", type=int, default=3)
    parser.add_argument("--tau2-per-task-set", type=int, default=3)
    parser.add_argument("--max-steps", type=int, default=8, help="per held-out/τ² episode; per BFCL turn: half")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so the model server and workers are stopped too
    settings = SuiteSettings(seeds=tuple(args.seeds), heldout_tasks=args.heldout, heldout_max_steps=args.max_steps,
                             bfcl_per_category=args.bfcl_per_category, bfcl_max_steps_per_turn=max(1, args.max_steps // 2),
                             tau2_per_task_set=args.tau2_per_task_set, tau2_max_steps=args.max_steps)
    from training.chat_template import TEMPLATE_VERSION

    report: dict[str, Any] = {"model": args.name, "checkpoint": args.checkpoint, "settings": vars(args),
                              "template_version": TEMPLATE_VERSION, "rows": [], "details": {}}
    with local_server(args.checkpoint, name=args.name) as server:
        endpoint = ModelEndpoint(name=args.name, model=server.litellm_model, api_base=server.api_base,
                                 api_key=LOCAL_API_KEY, temperature=args.temperature, max_tokens=args.max_tokens)
        for benchmark in args.benchmarks:
            if benchmark == heldout.BENCHMARK:
                tasks, factory = library_heldout_world()
                with factory:
                    outcome = run_benchmark(benchmark, endpoint, settings, (tasks, factory))
            else:
                outcome = run_benchmark(benchmark, endpoint, settings)
            report["rows"] += outcome.rows
            report["details"][benchmark] = {**outcome.details, "wall_s": round(outcome.wall_s, 1),
                                            "self_test_failures": [f for t in outcome.self_tests for f in t.failures]}
            Path(args.out).parent.mkdir(parents=True, exist_ok=True)
            Path(args.out).write_text(json.dumps(report, indent=2, sort_keys=True) + "\n", encoding="utf-8")
            print(f"{benchmark}: {outcome.wall_s:.0f} s", flush=True)


if __name__ == "__main__":
    main()
