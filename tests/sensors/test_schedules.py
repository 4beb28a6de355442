"""The nightly task-round schedule and the weekly retraining schedule."""

from datetime import UTC, datetime

import dagster as dg

from sensors.jobs import TASK_ROUND_ASSETS
from sensors.schedules import nightly_task_round_schedule, weekly_training_schedule


def test_nightly_tick_adds_a_round_partition_and_requests_the_task_round_job(instance, definitions):
    context = dg.build_schedule_context(instance=instance, repository_def=definitions.get_repository_def(),
                                        scheduled_execution_time=datetime(2026, 11, 30, 2, tzinfo=UTC))
    data = nightly_task_round_schedule.evaluate_tick(context)
    [request] = data.run_requests
    assert request.partition_key == "r20261130"
    assert request.run_key == "r20261130"
    assert instance.get_dynamic_partitions("task_round") == ["r20261130"]
    assert nightly_task_round_schedule.job_name == "task_round_job"
    nightly_task_round_schedule.evaluate_tick(context)
    assert instance.get_dynamic_partitions("task_round") == ["r20261130"], "a second tick adds nothing"


def test_task_round_job_selects_sampling_through_verification(definitions):
    job = definitions.resolve_job_def("task_round_job")
    assert {k.to_user_string() for k in job.asset_layer.selected_asset_keys} == set(TASK_ROUND_ASSETS)


def _training_context(instance, definitions: dg.Definitions):
    return dg.build_schedule_context(instance=instance, repository_def=definitions.get_repository_def(),
                                     scheduled_execution_time=datetime(2026, 11, 29, 4, tzinfo=UTC))


def test_weekly_training_requests_every_training_asset(instance, definitions):
    data = weekly_training_schedule.evaluate_tick(_training_context(instance, definitions))
    [request] = data.run_requests
    assert request.run_key == "train-20261129"
    assert request.tags["compoworld/trains"] == "base_model,rl_checkpoint,sft_checkpoint"
    job = definitions.resolve_job_def(weekly_training_schedule.job_name)
    assert {k.to_user_string() for k in job.asset_layer.selected_asset_keys} == {
        "base_model", "sft_checkpoint", "rl_checkpoint"}
