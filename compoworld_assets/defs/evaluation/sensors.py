"""A new checkpoint triggers its evaluation: the model partition is added and every benchmark requested.

``sft_checkpoint_sensor`` / ``rl_checkpoint_sensor`` watch the training assets; on each new
materialization they add ``sft`` / ``rl`` to the ``eval_model`` partitions (once) and launch
``benchmark_job`` for that model on every benchmark. The run key carries the materializing
run's id, so a re-trained checkpoint is evaluated again.
"""

import dagster as dg

from compoworld_assets.defs.evaluation.partitions import benchmark_model, benchmarks, eval_models

benchmark_job = dg.define_asset_job(
    "benchmark_job", selection=dg.AssetSelection.assets("benchmark_scores"), partitions_def=benchmark_model,
    description="Score one model on one benchmark (held-out CompoWorld tasks, BFCL or τ²-bench).",
)


def evaluation_requests(model: str, event_id: int | str) -> dg.SensorResult:
    """Add ``model`` as a partition and request its evaluation on every benchmark."""
    return dg.SensorResult(
        run_requests=[dg.RunRequest(run_key=f"{model}:{event_id}:{benchmark}",
                                    partition_key=dg.MultiPartitionKey({"benchmark": benchmark, "model": model}))
                      for benchmark in benchmarks.get_partition_keys()],
        dynamic_partitions_requests=[eval_models.build_add_request([model])],
    )


def checkpoint_sensor(asset: str, model: str) -> dg.SensorDefinition:
    @dg.asset_sensor(asset_key=dg.AssetKey(asset), job=benchmark_job, name=f"{asset}_sensor",
                     default_status=dg.DefaultSensorStatus.RUNNING,
                     description=f"Evaluate the new {model} checkpoint on every benchmark.")
    def _sensor(context: dg.SensorEvaluationContext, asset_event: dg.EventLogEntry) -> dg.SensorResult:
        return evaluation_requests(model, asset_event.run_id)

    return _sensor


sft_checkpoint_sensor = checkpoint_sensor("sft_checkpoint", "sft")
rl_checkpoint_sensor = checkpoint_sensor("rl_checkpoint", "rl")
