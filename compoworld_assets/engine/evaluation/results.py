"""What every benchmark runner shares: the model endpoint, per-item per-seed scores, and score rows.

A run holds ``metric -> item id -> [score under each seed]``; :func:`score_rows` turns it into
one row per metric (mean, bootstrap interval, n items, k seeds) plus ``pass^k`` on the run's
success metric. Self-tests (gold answers fed through the same scorer) become ``self_test:<name>``
rows whose mean is the share of gold items that scored as correct.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from compoworld_assets.engine.evaluation.stats import Estimate, estimate, pass_hat_k
from compoworld_assets.engine.rollout.llm import CompletionFn, LLMPolicy, litellm_completion

PASS_HAT_K = "pass^k"
SELF_TEST_PREFIX = "self_test:"
ROW_COLUMNS = ("benchmark", "model", "metric", "mean", "ci_low", "ci_high", "n", "k")
# Episodes whose observed behaviour is kept in ``details["samples"]``, to read failures by.
MAX_SAMPLES = 24
SAMPLE_TEXT_CHARS = 200
# Tokens per turn for a benchmark that derives no budget of its own (τ²) when the endpoint sets none.
DEFAULT_MAX_TOKENS = 512


@dataclass(frozen=True)
class ModelEndpoint:
    """A chat model as litellm reaches it (``openai/<name>`` + ``api_base`` for a local or vLLM server)."""

    name: str
    model: str
    api_base: str | None = None
    api_key: str | None = None
    temperature: float = 0.0
    max_tokens: int | None = None  # None: each benchmark's own per-turn budget (derived from its tasks)
    request_timeout_s: float = 600.0

    def policy(self, seed: int, completion_fn: CompletionFn = litellm_completion,
               max_tokens: int | None = None) -> LLMPolicy:
        """A policy whose every call carries ``seed`` (servers that honour it sample reproducibly).

        Tokens per turn: ``max_tokens`` (a benchmark's budget), else the endpoint's, else
        :data:`DEFAULT_MAX_TOKENS`.
        """
        limit = max_tokens if max_tokens is not None else self.max_tokens
        return LLMPolicy(self.model, api_base=self.api_base, api_key=self.api_key, temperature=self.temperature,
                         max_tokens=DEFAULT_MAX_TOKENS if limit is None else limit,
                         request_timeout_s=self.request_timeout_s, completion_fn=completion_fn, extra={"seed": seed})


@dataclass(frozen=True)
class SelfTest:
    """Gold answers scored by the benchmark's own scorer: all of them must pass."""

    name: str
    passed: int
    total: int
    failures: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.total > 0 and self.passed == self.total


@dataclass
class BenchmarkRun:
    benchmark: str
    model: str
    seeds: list[int]
    scores: dict[str, dict[str, list[float]]] = field(default_factory=dict)
    success_metric: str = "success"
    details: dict[str, Any] = field(default_factory=dict)

    def add(self, metric: str, item: str, value: float) -> None:
        self.scores.setdefault(metric, {}).setdefault(item, []).append(float(value))

    def sample(self, item: str, seed: int, score: float, **observed: Any) -> None:
        """Keep what the model did in one episode, for the first :data:`MAX_SAMPLES` episodes."""
        samples = self.details.setdefault("samples", [])
        if len(samples) < MAX_SAMPLES:
            samples.append({"item": item, "seed": seed, "score": float(score), **observed})

    def estimates(self, bootstrap_seed: int = 0) -> dict[str, Estimate]:
        out = {metric: estimate(items, bootstrap_seed) for metric, items in sorted(self.scores.items())}
        if self.scores.get(self.success_metric):
            out[PASS_HAT_K] = pass_hat_k(self.scores[self.success_metric], seed=bootstrap_seed)
        return out


def score_rows(run: BenchmarkRun, bootstrap_seed: int = 0) -> list[dict[str, Any]]:
    """One row per metric of ``run``: benchmark, model, metric, mean, ci_low, ci_high, n, k."""
    return [{"benchmark": run.benchmark, "model": run.model, "metric": metric, **value.as_dict()}
            for metric, value in run.estimates(bootstrap_seed).items()]


def self_test_rows(benchmark: str, model: str, tests: list[SelfTest]) -> list[dict[str, Any]]:
    rows = []
    for test in tests:
        share = test.passed / test.total if test.total else 0.0
        rows.append({"benchmark": benchmark, "model": model, "metric": SELF_TEST_PREFIX + test.name, "mean": share,
                     "ci_low": share, "ci_high": share, "n": test.total, "k": 1})
    return rows


def leaderboard_markdown(rows: list[dict[str, Any]], metrics: tuple[str, ...] = ("success", "accuracy", "reward",
                                                                                   PASS_HAT_K)) -> str:
    """A markdown table: one line per (model, benchmark), headline metrics as ``mean [low, high]``."""
    lines = ["| model | benchmark | metric | mean [95% CI] | n | k |", "|---|---|---|---|---|---|"]
    for row in sorted(rows, key=lambda r: (r["model"], r["benchmark"], r["metric"])):
        if row["metric"] in metrics:
            lines.append(f"| {row['model']} | {row['benchmark']} | {row['metric']} | {row['mean']:.3f} "
                         f"[{row['ci_low']:.3f}, {row['ci_high']:.3f}] | {row['n']} | {row['k']} |")
    return "\n".join(lines)
