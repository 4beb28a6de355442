"""Paired comparison of suite reports: did a checkpoint beat its baseline, and is the difference real?

Reads the JSON reports ``training.benchmark_suite`` writes (their ``scores``: metric -> item -> one
score per seed) and, for every benchmark and metric the first report (the baseline) shares with a
later one, prints both means and the paired difference over the items both scored, with a seeded
bootstrap 95% interval (``stats.paired_difference``). A difference is called significant when its
interval excludes 0.

    python -m compoworld_assets.engine.evaluation.compare data/eval/base.json data/eval/sft.json \\
        --metrics success rubric_completion first_call_exact --out docs/results/lift.md
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from compoworld_assets.engine.evaluation.stats import estimate, paired_difference


def verdict(ci_low: float, ci_high: float) -> str:
    if ci_low > 0:
        return "yes, higher"
    if ci_high < 0:
        return "yes, lower"
    return "no"


def comparison_rows(reports: Sequence[dict[str, Any]], metrics: Sequence[str] | None = None,
                    bootstrap_seed: int = 0) -> list[dict[str, Any]]:
    """One row per (later report, benchmark, metric) that the baseline (``reports[0]``) also scored."""
    if len(reports) < 2:
        raise ValueError("a comparison needs a baseline report and at least one more")
    baseline, rows = reports[0], []
    for report in reports[1:]:
        for benchmark, by_metric in sorted(report.get("scores", {}).items()):
            base_metrics = baseline.get("scores", {}).get(benchmark, {})
            for metric, items in sorted(by_metric.items()):
                if metric not in base_metrics or (metrics and metric not in metrics):
                    continue
                shared = sorted(set(items) & set(base_metrics[metric]))
                if not shared:
                    continue
                base = estimate({i: base_metrics[metric][i] for i in shared}, bootstrap_seed)
                candidate = estimate({i: items[i] for i in shared}, bootstrap_seed)
                difference = paired_difference(base_metrics[metric], items, bootstrap_seed)
                rows.append({"benchmark": benchmark, "metric": metric, "baseline": baseline["model"],
                             "model": report["model"], "n": difference.n, "k": difference.k,
                             "baseline_mean": base.mean, "model_mean": candidate.mean,
                             "model_ci": [candidate.ci_low, candidate.ci_high],
                             "difference": difference.mean, "difference_ci": [difference.ci_low, difference.ci_high],
                             "significant": verdict(difference.ci_low, difference.ci_high)})
    return rows


def comparison_markdown(rows: Sequence[dict[str, Any]]) -> str:
    header = ("| benchmark | metric | items × seeds | baseline | model: mean [95% CI] | model − baseline [95% CI] "
              "| significant |")
    lines = [header, "|---|---|---|---|---|---|---|"]
    for row in rows:
        low, high = row["model_ci"]
        d_low, d_high = row["difference_ci"]
        lines.append(f"| {row['benchmark']} | {row['metric']} | {row['n']} × {row['k']} "
                     f"| {row['baseline']}: {row['baseline_mean']:.3f} "
                     f"| {row['model']}: {row['model_mean']:.3f} [{low:.3f}, {high:.3f}] "
                     f"| {row['difference']:+.3f} [{d_low:+.3f}, {d_high:+.3f}] | {row['significant']} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reports", nargs="+", help="suite JSON reports; the first is the baseline")
    parser.add_argument("--metrics", nargs="+", default=None, help="only these metrics (default: every shared one)")
    parser.add_argument("--bootstrap-seed", type=int, default=0)
    parser.add_argument("--out", default=None, help="also write the Markdown table here")
    args = parser.parse_args(argv)
    reports = [json.loads(Path(path).read_text(encoding="utf-8")) for path in args.reports]
    table = comparison_markdown(comparison_rows(reports, args.metrics, args.bootstrap_seed))
    print(table, end="")
    if args.out:
        Path(args.out).write_text(table, encoding="utf-8")


if __name__ == "__main__":
    main()
