"""Generated tokens/s and episodes/hour of the local model server: sequential against batched, by concurrency.

Episodes are CompoWorld tasks from the built-in library played through the rollout engine (the
same environment, LLM policy, litellm client and server the held-out evaluation uses), each turn
teacher-forced: the served model is asked for its answer (the cost measured, ``--max-tokens``
at temperature 0) and then the oracle's move is played, so every server and concurrency level
runs the very same requests whatever the model answers. ``--max-turns`` caps an episode's turns.

For every torch thread count, server (``sequential``: ``--sequential``, one ``model.generate`` at
a time, as the server was before batching; ``batched``: the default) and concurrency ``c``, a
fresh server (an empty prefix cache) plays ``max(c, --min-episodes)`` episodes, ``c`` at a time.
Printed per row: requests, prompt and generated tokens, wall seconds, generated tokens/s,
episodes/hour, the ratio to the sequential server at the same threads and concurrency, and the
batcher's counters (largest batch, prompt tokens read from the prefix cache). Last, how many
completions were identical between the servers (greedy, same requests).

    python benchmarks/serving_throughput.py --concurrency 1 8 32 --threads 1 2 --json data/bench/serving.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
import urllib.request
from pathlib import Path
from typing import Any

from compoworld_assets.engine.rollout.engine import run_rollouts
from compoworld_assets.engine.rollout.library_world import build_library
from compoworld_assets.engine.rollout.llm import LLMPolicy, litellm_completion
from compoworld_assets.engine.rollout.policy import OraclePolicy
from compoworld_assets.serving.openai_server import LOCAL_API_KEY, local_server
from compoworld_assets.serving.settings import DEFAULT_BATCHING

SERVICES = ("crm", "helpdesk", "mail", "invoicing", "calendar", "payments", "orders", "files")
REQUEST_TIMEOUT_S = 24 * 3600.0


class TeacherForced:
    """Asks the served model every turn (what is measured), then plays the oracle's move."""

    def __init__(self, task: Any, mode: str, model: LLMPolicy) -> None:
        self.name = "teacher_forced"
        self.oracle = OraclePolicy(task, mode)
        self.model = model

    async def next_message(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
        await self.model.next_message(messages, tools)
        return await self.oracle.next_message(messages, tools)


def play(tasks: list[Any], factory: Any, server: Any, args: argparse.Namespace, concurrency: int) -> dict[str, Any]:
    """Play ``tasks`` against ``server``; the completions by (task, turn) and the token counts."""
    completions: dict[str, str] = {}
    usage = {"requests": 0, "prompt_tokens": 0, "completion_tokens": 0}

    def policy_factory(task: Any, mode: str) -> TeacherForced:
        turn = iter(range(10**6))

        async def counted(**kwargs: Any) -> Any:
            response = await litellm_completion(**kwargs)
            usage["requests"] += 1
            usage["prompt_tokens"] += response.usage.prompt_tokens
            usage["completion_tokens"] += response.usage.completion_tokens
            completions[f"{task.task_id}/{next(turn)}"] = response.choices[0].message.content or ""
            return response

        model = LLMPolicy(server.litellm_model, api_base=server.api_base, api_key=LOCAL_API_KEY, temperature=0.0,
                          max_tokens=args.max_tokens, request_timeout_s=REQUEST_TIMEOUT_S, completion_fn=counted)
        return TeacherForced(task, mode, model)

    started = time.perf_counter()
    trajectories = asyncio.run(run_rollouts(tasks, policy_factory, factory, mode=args.mode, concurrency=concurrency,
                                            max_steps=args.max_turns, episode_timeout_s=REQUEST_TIMEOUT_S,
                                            max_retries=0))
    wall = time.perf_counter() - started
    errors = [t.meta["model_error"] for t in trajectories if "model_error" in t.meta]
    if errors:
        raise RuntimeError(f"{len(errors)} episodes got a model error, e.g. {errors[0]}")
    with urllib.request.urlopen(f"{server.api_base}/stats") as response:
        stats = json.load(response)
    return {**usage, "wall_s": wall, "episodes": len(tasks), "stats": stats, "completions": completions}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None, help="a checkpoint folder (default: the bundled SmolLM2-135M)")
    parser.add_argument("--mode", choices=("gateway", "direct"), default="gateway")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 32])
    parser.add_argument("--min-episodes", type=int, default=4)
    parser.add_argument("--max-turns", type=int, default=3)
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--threads", type=int, nargs="+", default=[1])
    parser.add_argument("--servers", nargs="+", choices=("sequential", "batched"), default=["sequential", "batched"])
    parser.add_argument("--task-seed", type=int, default=3)
    parser.add_argument("--json", type=Path, default=None, help="also write every row (completions included) here")
    parser.add_argument("--baseline", type=Path, default=None,
                        help="rows of an earlier run (its --json) to compare with instead of running them again")
    args = parser.parse_args()

    from training.base_model import prepare_base_model

    model_dir = prepare_base_model(model_id_or_path=args.model) if args.model else prepare_base_model()
    library = build_library(SERVICES)
    needed = max(max(args.concurrency), args.min_episodes)
    tasks, _ = library.sample_tasks(2 * needed, args.task_seed)
    tasks = sorted(tasks, key=lambda t: t.task_id)[:needed]
    if len(tasks) < needed:
        raise SystemExit(f"only {len(tasks)} tasks sampled, {needed} needed")
    print(f"model {model_dir}; {args.mode} mode, <= {args.max_turns} turns, max_tokens {args.max_tokens}, "
          f"temperature 0; distinct tasks per level: max(c, {args.min_episodes})")
    print(f"{'server':>10} {'thr':>3} {'c':>3} {'eps':>4} {'reqs':>5} {'prompt':>7} {'gen':>6} {'wall_s':>8} "
          f"{'gen_tok/s':>9} {'eps/h':>7} {'x_seq':>6} {'batch':>5} {'cached':>6}")
    rows: list[dict[str, Any]] = json.loads(args.baseline.read_text())["rows"] if args.baseline else []
    for row in rows:
        print(f"{row['server']:>10} {row['threads']:>3} {row['concurrency']:>3} {row['episodes']:>4} "
              f"{row['requests']:>5} {row['prompt_tokens']:>7} {row['completion_tokens']:>6} {row['wall_s']:>8.1f} "
              f"{row['gen_tokens_per_s']:>9.2f} {row['episodes_per_hour']:>7.1f}  (from {args.baseline})")
    with library.world_factory() as factory:
        for threads in args.threads:
            for kind in args.servers:
                for concurrency in args.concurrency:
                    episodes = tasks[:max(concurrency, args.min_episodes)]
                    batching = None if kind == "sequential" else DEFAULT_BATCHING
                    with local_server(model_dir, name="bench", batching=batching, threads=threads) as server:
                        result = play(episodes, factory, server, args, concurrency)
                    row = {"server": kind, "threads": threads, "concurrency": concurrency, **result}
                    row["gen_tokens_per_s"] = result["completion_tokens"] / result["wall_s"]
                    row["episodes_per_hour"] = result["episodes"] / result["wall_s"] * 3600
                    base = next((r for r in rows if r["server"] == "sequential" and r["threads"] == threads
                                 and r["concurrency"] == concurrency), None)
                    row["x_sequential"] = row["episodes_per_hour"] / base["episodes_per_hour"] if base else None
                    rows.append(row)
                    stats = result["stats"]
                    cached = stats.get("prompt_tokens_cached", 0) / max(stats.get("prompt_tokens", 0), 1)
                    ratio = f"{row['x_sequential']:.2f}" if row["x_sequential"] else "-"
                    print(f"{kind:>10} {threads:>3} {concurrency:>3} {result['episodes']:>4} {result['requests']:>5} "
                          f"{result['prompt_tokens']:>7} {result['completion_tokens']:>6} {result['wall_s']:>8.1f} "
                          f"{row['gen_tokens_per_s']:>9.2f} {row['episodes_per_hour']:>7.1f} {ratio:>6} "
                          f"{stats.get('max_batch', 1):>5} {cached:>6.0%}", flush=True)
                    if args.json:  # after every row, so a run cut short keeps what it measured
                        args.json.parent.mkdir(parents=True, exist_ok=True)
                        args.json.write_text(json.dumps({"settings": vars(args) | {"json": str(args.json)},
                                                         "rows": rows}, indent=1, default=str))
    for row in rows:
        reference = {k: v for r in rows if r["server"] == "sequential" and r["threads"] == row["threads"]
                     for k, v in r["completions"].items()}
        shared = sorted(set(reference) & set(row["completions"]))
        if row["server"] == "batched" and shared:
            same = sum(reference[k] == row["completions"][k] for k in shared)
            print(f"batched, {row['threads']} thread(s), c={row['concurrency']}: {same}/{len(shared)} completions "
                  f"identical to the sequential server's (greedy, same requests)")

if __name__ == "__main__":
    main()
