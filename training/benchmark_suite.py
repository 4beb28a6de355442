"""Score a checkpoint folder on the three benchmarks (held-out CompoWorld, BFCL, τ²) without Dagster.

    python -m training.benchmark_suite --checkpoint data/models/base --name base \\
        --out data/eval/base.json --seeds 1 2 --heldout 10 --bfcl-per-category 3 --tau2-per-task-set 3

Serves the checkpoint with :mod:`compoworld_assets.serving.openai_server`, takes the held-out tasks from
``--heldout-file`` (an RL-format task file with its services file, e.g. ``training.demo_data``'s
``heldout_tasks.jsonl``: the held-out split of the data a checkpoint was trained on) or else builds
them from the built-in service library (offline synthesis, as the pipeline does without an LLM), and writes the score rows
(self-tests included) as JSON, with the training chat template's version. Budgets not given are derived
from each benchmark's sample, counted with the checkpoint's tokenizer (``details.<benchmark>.budget``).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
from pathlib import Path
from typing import Any

from compoworld_assets.engine.evaluation import heldout
from compoworld_assets.engine.evaluation.results import DEFAULT_MAX_TOKENS, ModelEndpoint
from compoworld_assets.engine.evaluation.suite import (
    BENCHMARKS,
    SuiteSettings,
    library_heldout_world,
    run_benchmark,
)
from compoworld_assets.engine.rollout.worlds import PooledWorldFactory
from compoworld_assets.engine.tasks.model import Task
from training.chat_template import TEMPLATE_VERSION, token_counter
from training.common import load_tokenizer
from training.data import read_rl_file, read_services, services_path


def heldout_world(heldout_file: str | None) -> tuple[list[Task], PooledWorldFactory]:
    """Held-out tasks and a world factory (the caller closes it): from an RL-format task file, or the library's."""
    if heldout_file is None:
        return library_heldout_world()
    from compoworld_assets.engine.world_model.offline import OfflineWorldModel

    bundle = read_services(services_path(heldout_file))
    return [record.task for record in read_rl_file(heldout_file)], bundle.world_factory(OfflineWorldModel())


def main(argv: list[str] | None = None) -> None:
    from compoworld_assets.serving.openai_server import LOCAL_API_KEY, local_server

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoint", required=True)
    parser.add_argument("--name", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--benchmarks", nargs="+", default=list(BENCHMARKS))
    parser.add_argument("--seeds", nargs="+", type=int, default=[1, 2])
    parser.add_argument("--temperature", type=float, default=0.7)
    parser.add_argument("--max-tokens", type=int, default=None,
                        help="per model turn; default: derived from each benchmark's sample (held-out: the oracle's "
                             f"longest turn, BFCL: the ground truth's, plus slack; τ²: {DEFAULT_MAX_TOKENS})")
    parser.add_argument("--heldout", type=int, default=10, help="held-out tasks sampled (0: all of them)")
    parser.add_argument("--heldout-file", default=None,
                        help="RL-format task file whose heldout-split tasks to play (with <stem>.services.json "
                             "beside it); default: tasks sampled from the built-in library")
    parser.add_argument("--bfcl-per-category", type=int, default=3)
    parser.add_argument("--tau2-per-task-set", type=int, default=3)
    parser.add_argument("--max-steps", type=int, default=None,
                        help="per held-out episode (default: the oracle's turns plus slack)")
    parser.add_argument("--tau2-max-steps", type=int, default=SuiteSettings.tau2_max_steps)
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so the model server and workers are stopped too
    settings = SuiteSettings(seeds=tuple(args.seeds), heldout_tasks=args.heldout or None, heldout_max_steps=args.max_steps,
                             bfcl_per_category=args.bfcl_per_category, tau2_per_task_set=args.tau2_per_task_set,
                             tau2_max_steps=args.tau2_max_steps)
    report: dict[str, Any] = {"model": args.name, "checkpoint": args.checkpoint, "settings": vars(args),
                              "template_version": TEMPLATE_VERSION, "rows": [], "details": {}, "scores": {}}
    count_tokens = token_counter(load_tokenizer(args.checkpoint))
    with local_server(args.checkpoint, name=args.name) as server:
        endpoint = ModelEndpoint(name=args.name, model=server.litellm_model, api_base=server.api_base,
                                 api_key=LOCAL_API_KEY, temperature=args.temperature, max_tokens=args.max_tokens)
        for benchmark in args.benchmarks:
            if benchmark == heldout.BENCHMARK:
                tasks, factory = heldout_world(args.heldout_file)
                with factory:
                    outcome = run_benchmark(benchmark, endpoint, settings, (tasks, factory),
                                            count_tokens=count_tokens)
            else:
                outcome = run_benchmark(benchmark, endpoint, settings, count_tokens=count_tokens)
            report["rows"] += outcome.rows
            report["scores"][benchmark] = outcome.scores
            report["details"][benchmark] = {**outcome.details, "wall_s": round(outcome.wall_s, 1),
                                            "self_test_failures": [f for t in outcome.self_tests for f in t.failures]}
            Path(args.out).parent.mkdir(parents=True, exist_ok=True)
            Path(args.out).write_text(json.dumps(report, indent=2, sort_keys=True) + "\n", encoding="utf-8")
            print(f"{benchmark}: {outcome.wall_s:.0f} s", flush=True)


if __name__ == "__main__":
    main()
