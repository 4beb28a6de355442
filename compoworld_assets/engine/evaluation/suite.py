"""The three benchmarks behind one call, their self-tests, and the built-in held-out world.

``training/benchmark_suite.py`` is the command line that serves a checkpoint and runs them.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from compoworld_assets.engine.agents.world import WorldFactory
from compoworld_assets.engine.evaluation import bfcl, heldout, tau2
from compoworld_assets.engine.evaluation.results import ModelEndpoint, SelfTest, score_rows, self_test_rows
from compoworld_assets.engine.rollout.budgets import TokenCounter, estimated_tokens
from compoworld_assets.engine.tasks.model import Task

BENCHMARKS = (heldout.BENCHMARK, bfcl.BENCHMARK, tau2.BENCHMARK)
LIBRARY_SERVICES = ("crm", "helpdesk", "mail", "invoicing", "calendar", "payments", "orders", "files", "docs", "projects",
                    "travel")


@dataclass(frozen=True)
class SuiteSettings:
    seeds: tuple[int, ...] = (1, 2)
    sample_seed: int = 0
    bootstrap_seed: int = 0
    heldout_tasks: int | None = 10
    heldout_mode: str = "direct"
    heldout_max_steps: int | None = None  # None: derived from the tasks (heldout.heldout_budget)
    # Episodes in flight at once: the local server decodes their turns together (serving/batching.py).
    # An episode's wall time then includes waiting for the others, hence the longer timeout.
    heldout_concurrency: int = 8
    heldout_episode_timeout_s: float = 3600.0
    bfcl_categories: tuple[str, ...] = bfcl.DEFAULT_CATEGORIES
    bfcl_per_category: int | None = 3
    bfcl_max_steps_per_turn: int | None = None  # None: BFCL's own limit (bfcl.steps_per_turn)
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
    # metric -> item id -> one score per seed: what a paired comparison of two models needs (stats.paired_difference)
    scores: dict[str, dict[str, list[float]]] = field(default_factory=dict)


def run_benchmark(benchmark: str, endpoint: ModelEndpoint, settings: SuiteSettings,
                  heldout_world: tuple[Sequence[Task], WorldFactory] | None = None,
                  user_endpoint: ModelEndpoint | None = None,
                  count_tokens: TokenCounter = estimated_tokens) -> BenchmarkOutcome:
    """Score ``endpoint`` on one benchmark and run that benchmark's self-test on the same sample.

    Held-out and BFCL budgets are derived from the sample (the oracle's or the ground truth's needs plus
    slack; ``count_tokens``: the model's tokenizer when at hand) unless ``settings``/``endpoint`` set them;
    each self-test checks the gold answers fit the budget the model got.
    """
    started = time.monotonic()
    if benchmark == heldout.BENCHMARK:
        if heldout_world is None:
            raise ValueError("the held-out benchmark needs tasks and a world factory")
        tasks = heldout.select_heldout(heldout_world[0], settings.heldout_tasks, settings.sample_seed)
        if not tasks:
            raise ValueError("no held-out tasks to evaluate on (every task is in train or rl)")
        budget = heldout.heldout_budget(tasks, heldout_world[1], settings.heldout_mode, count_tokens,
                                        max_steps=settings.heldout_max_steps, max_tokens=endpoint.max_tokens)
        run = heldout.evaluate_heldout(tasks, heldout_world[1], endpoint, settings.seeds, mode=settings.heldout_mode,
                                       budget=budget, concurrency=settings.heldout_concurrency,
                                       episode_timeout_s=settings.heldout_episode_timeout_s)
        tests = [heldout.heldout_self_test(tasks, heldout_world[1], settings.heldout_mode, budget, count_tokens,
                                           concurrency=settings.heldout_concurrency)]
    elif benchmark == bfcl.BENCHMARK:
        run = bfcl.evaluate_bfcl(endpoint, settings.seeds, settings.bfcl_categories, settings.bfcl_per_category,
                                 settings.sample_seed, settings.bfcl_max_steps_per_turn, count_tokens=count_tokens)
        tests = [bfcl.bfcl_self_test(settings.bfcl_categories, settings.bfcl_per_category, settings.sample_seed,
                                     max_tokens=run.details["budget"]["max_tokens"], count_tokens=count_tokens)]
    elif benchmark == tau2.BENCHMARK:
        run = tau2.evaluate_tau2(endpoint, settings.seeds, settings.tau2_task_sets, settings.tau2_per_task_set,
                                 settings.sample_seed, settings.tau2_max_steps, settings.tau2_max_user_turns,
                                 user_endpoint)
        tests = [tau2.tau2_self_test(settings.tau2_task_sets, settings.tau2_per_task_set, settings.sample_seed)]
    else:
        raise ValueError(f"unknown benchmark {benchmark!r}; choose from {BENCHMARKS}")
    rows = score_rows(run, settings.bootstrap_seed) + self_test_rows(benchmark, endpoint.name, tests)
    return BenchmarkOutcome(rows=rows, self_tests=tests, details=run.details, wall_s=time.monotonic() - started,
                            scores=run.scores)


def library_heldout_world(seed: int = 3, n: int = 60) -> tuple[list[Task], Any]:
    """Tasks over the built-in library services (offline synthesis) and a world factory for them.

    The caller closes the factory. About a fifth of the sampled tasks land in the held-out split.
    """
    from compoworld_assets.engine.rollout.library_world import build_library

    library = build_library(LIBRARY_SERVICES)
    tasks, _ = library.sample_tasks(n, seed)
    return tasks, library.world_factory()
