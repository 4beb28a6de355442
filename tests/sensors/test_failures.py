"""The run-failure sensor appends one JSON line per failed run."""

import dagster as dg

from resources import StorageResource
from sensors.failures import read_failures, run_failure_recorder


@dg.op
def explode() -> None:
    raise RuntimeError("synthesizer crashed half-way")


@dg.job
def exploding_job():
    explode()


def test_failed_run_is_recorded(tmp_path, instance):
    result = exploding_job.execute_in_process(instance=instance, raise_on_error=False)
    assert not result.success
    context = dg.build_run_status_sensor_context(
        sensor_name=run_failure_recorder.name, dagster_instance=instance, dagster_run=result.dagster_run,
        dagster_event=result.get_run_failure_event(),
        resources={"storage": StorageResource(data_dir=str(tmp_path / "data"))},
    ).for_run_failure()
    run_failure_recorder(context)
    run_failure_recorder(context)
    rows = read_failures(tmp_path / "data" / "run_failures.jsonl")
    assert len(rows) == 2
    assert rows[0]["run_id"] == result.run_id
    assert rows[0]["job_name"] == "exploding_job"
    assert rows[0]["failed_steps"] == ["explode"]
    assert rows[0]["message"]


def test_no_file_means_no_failures(tmp_path):
    assert read_failures(tmp_path / "missing.jsonl") == []
