"""The Slurm backend end to end on a real cluster (scripts/slurm/start_slurm.sh brings one up)."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest
from dispatch_support import REPO, failure_text, job_command, materialization_metadata

from resources.compute import ComputeResource, SlurmConfig
from resources.pipes_slurm import job_status

pytestmark = pytest.mark.slurm


def slurm_compute(tmp_path, **slurm) -> ComputeResource:
    return ComputeResource(backend="slurm", shared_dir=str(tmp_path / "shared"), workdir=str(REPO),
                           poll_interval_s=0.2, slurm=SlurmConfig(**slurm))


def test_slurm_job_metadata_reaches_the_materialization(slurm, materialize_job, tmp_path):
    result = materialize_job(slurm_compute(tmp_path, time_limit="00:05:00"), job_command("--sleep", "0.1"),
                             extras={"marker": "slurm-run"})
    assert result.success
    metadata = materialization_metadata(result)
    assert metadata["marker"] == "slurm-run"
    assert metadata["argv"] == "--sleep 0.1"
    assert job_status(str(metadata["slurm_job_id"])) == ("COMPLETED", "0:0")
    script = (tmp_path / "shared" / "slurm").glob("*/job.sbatch")
    assert "#SBATCH --time=00:05:00" in next(script).read_text()


def test_failing_slurm_job_fails_with_its_log_tail(slurm, materialize_job, tmp_path):
    result = materialize_job(slurm_compute(tmp_path), job_command("--fail", "7"))
    assert not result.success
    text = failure_text(result)
    assert "ended FAILED (exit code 7:0)" in text
    assert "job-side failure marker: loss went NaN at step 7" in text


def test_gpu_request_is_accepted_and_visible_to_the_job(slurm, materialize_job, tmp_path):
    result = materialize_job(slurm_compute(tmp_path), job_command(), gpus=1)
    assert result.success
    assert materialization_metadata(result)["cuda_visible_devices"] == "0"
    script = next((tmp_path / "shared" / "slurm").glob("*/job.sbatch")).read_text()
    assert "#SBATCH --gres=gpu:1" in script


DRIVER = textwrap.dedent("""
    import sys
    import dagster as dg
    from resources.compute import ComputeResource

    shared, started = sys.argv[1], sys.argv[2]

    @dg.asset
    def trained(context: dg.AssetExecutionContext, compute: ComputeResource):
        command = [sys.executable, "tests/dispatch/jobs/pipes_job.py", "--sleep", "120",
                   "--started-file", started]
        yield from compute.run(context, command).get_results()

    compute = ComputeResource(backend="slurm", shared_dir=shared, poll_interval_s=0.2)
    with dg.instance_for_test() as instance:
        dg.materialize([trained], resources={"compute": compute}, instance=instance, raise_on_error=False)
""")


@pytest.mark.slow
def test_interrupted_run_cancels_its_slurm_job(slurm, tmp_path):
    started = tmp_path / "started"
    driver = subprocess.Popen([sys.executable, "-c", DRIVER, str(tmp_path / "shared"), str(started)],
                              cwd=REPO, env={**os.environ, "SLURM_CONF": slurm})
    try:
        deadline = time.monotonic() + 60
        while not started.exists():
            assert driver.poll() is None and time.monotonic() < deadline, "the job never started"
            time.sleep(0.1)
        job_id = started.read_text()
        assert job_status(job_id)[0] == "RUNNING"
        driver.send_signal(signal.SIGINT)
        driver.wait(timeout=60)
    finally:
        if driver.poll() is None:
            driver.kill()
    deadline = time.monotonic() + 20
    while job_status(job_id)[0] != "CANCELLED":
        assert time.monotonic() < deadline, f"job {job_id} is {job_status(job_id)}"
        time.sleep(0.2)
