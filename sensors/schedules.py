"""Schedules: a new task round every night, retraining every week."""

import dagster as dg

from compoworld_assets.defs.tasks.partitions import task_rounds
from sensors.jobs import task_round_job, training_job


def round_name(when) -> str:
    """The task round a nightly tick creates, named after its scheduled date: ``r20261130``."""
    return f"r{when:%Y%m%d}"


@dg.schedule(job=task_round_job, cron_schedule="0 2 * * *", execution_timezone="UTC",
             default_status=dg.DefaultScheduleStatus.STOPPED)
def nightly_task_round_schedule(context: dg.ScheduleEvaluationContext) -> dg.RunRequest:
    """Register tonight's ``task_round`` partition and sample, roll out and verify it."""
    round_key = round_name(context.scheduled_execution_time)
    if not context.instance.has_dynamic_partition(task_rounds.name, round_key):
        context.instance.add_dynamic_partitions(task_rounds.name, [round_key])
    return dg.RunRequest(run_key=round_key, partition_key=round_key)


@dg.schedule(job=training_job, cron_schedule="0 4 * * 0", execution_timezone="UTC",
             default_status=dg.DefaultScheduleStatus.STOPPED)
def weekly_training_schedule(context: dg.ScheduleEvaluationContext) -> dg.RunRequest:
    """Retrain every Sunday (base model → SFT → RL) on the datasets as they stand."""
    training = dg.AssetSelection.groups("training").resolve(context.repository_def.asset_graph)
    return dg.RunRequest(run_key=f"train-{context.scheduled_execution_time:%Y%m%d}",
                         tags={"compoworld/trains": ",".join(sorted(k.to_user_string() for k in training))})


ALL_SCHEDULES = [nightly_task_round_schedule, weekly_training_schedule]
