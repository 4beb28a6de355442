"""Checks beside ``benchmark_scores``: the benchmarks' self-tests pass and every interval is ordered."""

import dagster as dg
import polars as pl

from compoworld_assets.engine.evaluation.results import SELF_TEST_PREFIX


@dg.asset_check(asset="benchmark_scores", blocking=True, pool="duckdb",
                description="Every evaluated (benchmark, model) has self-test rows, and every self-test scored 1.")
def benchmark_self_tests_pass(benchmark_scores: pl.DataFrame) -> dg.AssetCheckResult:
    tests = benchmark_scores.filter(pl.col("metric").str.starts_with(SELF_TEST_PREFIX))
    failing = tests.filter(pl.col("mean") < 1.0)
    evaluated = set(benchmark_scores.select("benchmark", "model").unique().iter_rows())
    untested = sorted(evaluated - set(tests.select("benchmark", "model").unique().iter_rows()))
    return dg.AssetCheckResult(passed=failing.is_empty() and not untested and not benchmark_scores.is_empty(),
                               metadata={"self_test_rows": len(tests),
                                         "failing": dg.MetadataValue.json(failing.to_dicts()[:20]),
                                         "untested": dg.MetadataValue.json([list(u) for u in untested])})


@dg.asset_check(asset="benchmark_scores", blocking=True, pool="duckdb",
                description="ci_low <= mean <= ci_high within [0, 1], with n >= 1 items and k >= 1 seeds.")
def benchmark_intervals_ordered(benchmark_scores: pl.DataFrame) -> dg.AssetCheckResult:
    bad = benchmark_scores.filter(~((pl.col("ci_low") <= pl.col("mean")) & (pl.col("mean") <= pl.col("ci_high"))
                                    & (pl.col("ci_low") >= 0.0) & (pl.col("ci_high") <= 1.0)
                                    & (pl.col("n") >= 1) & (pl.col("k") >= 1)))
    return dg.AssetCheckResult(passed=bad.is_empty(), metadata={"rows": len(benchmark_scores), "bad": len(bad),
                                                                "examples": dg.MetadataValue.json(bad.to_dicts()[:5])})
