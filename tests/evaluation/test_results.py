"""Score rows and the leaderboard table."""

from compoworld_assets.engine.evaluation.results import (
    MAX_SAMPLES,
    BenchmarkRun,
    SelfTest,
    leaderboard_markdown,
    score_rows,
    self_test_rows,
)


def test_rows_hold_every_metric_plus_pass_hat_k_with_intervals():
    run = BenchmarkRun(benchmark="bfcl", model="m", seeds=[1, 2], success_metric="accuracy")
    for item, values in {"a": [1, 1], "b": [1, 0], "c": [0, 0]}.items():
        for value in values:
            run.add("accuracy", item, value)
    rows = {r["metric"]: r for r in score_rows(run)}
    assert set(rows) == {"accuracy", "pass^k"}
    assert rows["accuracy"]["mean"] == 0.5 and rows["pass^k"]["mean"] == 1 / 3
    assert all(r["ci_low"] <= r["mean"] <= r["ci_high"] and (r["n"], r["k"]) == (3, 2) for r in rows.values())


def test_self_test_rows_and_markdown():
    [row] = self_test_rows("tau2", "m", [SelfTest("gold_replay", passed=2, total=4)])
    assert (row["metric"], row["mean"], row["n"]) == ("self_test:gold_replay", 0.5, 4)
    table = leaderboard_markdown([{"benchmark": "bfcl", "model": "m", "metric": "accuracy", "mean": 0.25,
                                   "ci_low": 0.1, "ci_high": 0.4, "n": 8, "k": 2}, row])
    assert "| m | bfcl | accuracy | 0.250 [0.100, 0.400] | 8 | 2 |" in table and "gold_replay" not in table


def test_samples_keep_the_first_episodes_only():
    run = BenchmarkRun(benchmark="bfcl", model="m", seeds=[1])
    for k in range(MAX_SAMPLES + 5):
        run.sample(f"item{k}", 1, k % 2, calls=[f"f({k})"])
    samples = run.details["samples"]
    assert len(samples) == MAX_SAMPLES
    assert samples[1] == {"item": "item1", "seed": 1, "score": 1.0, "calls": ["f(1)"]}
