"""Benchmark × model partitions: the benchmarks are fixed, models are added as checkpoints appear."""

import dagster as dg

from compoworld_assets.engine.evaluation.suite import BENCHMARKS

benchmarks = dg.StaticPartitionsDefinition(list(BENCHMARKS))
eval_models = dg.DynamicPartitionsDefinition(name="eval_model")
benchmark_model = dg.MultiPartitionsDefinition({"benchmark": benchmarks, "model": eval_models})
