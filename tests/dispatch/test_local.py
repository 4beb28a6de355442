"""The local backend (PipesSubprocessClient) and resume folders, through dg.materialize."""

from dispatch_support import REPO, failure_text, job_command, materialization_metadata

from resources.compute import RESUME_DIR_ENV, ComputeResource


def test_local_job_reports_metadata_to_the_materialization(materialize_job, tmp_path):
    compute = ComputeResource(shared_dir=str(tmp_path), workdir=str(REPO))
    result = materialize_job(compute, job_command("--sleep", "0"), extras={"marker": "m-17"})
    assert result.success
    metadata = materialization_metadata(result)
    assert metadata["argv"] == "--sleep 0"
    assert metadata["marker"] == "m-17"
    assert metadata["resumed"] is False


def test_local_job_failure_fails_the_materialization(materialize_job, tmp_path):
    result = materialize_job(ComputeResource(shared_dir=str(tmp_path)), job_command("--fail", "5"))
    assert not result.success
    assert "failed with code 5" in failure_text(result)


def test_retry_resumes_from_the_checkpoint_in_the_resume_dir(materialize_job, tmp_path):
    compute = ComputeResource(shared_dir=str(tmp_path))
    first = materialize_job(compute, job_command("--fail-once"), resume=True)
    assert not first.success
    checkpoint = tmp_path / "resume" / "trained" / "checkpoint-1.txt"
    assert checkpoint.read_text() == "step=1"
    second = materialize_job(compute, job_command("--fail-once"), resume=True)
    assert second.success
    metadata = materialization_metadata(second)
    assert metadata["resumed"] is True
    assert "resume_dir" in metadata["extras_seen"]


def test_env_reaches_the_job(materialize_job, tmp_path):
    compute = ComputeResource(shared_dir=str(tmp_path), env={RESUME_DIR_ENV: str(tmp_path / "from-env")})
    (tmp_path / "from-env").mkdir()
    (tmp_path / "from-env" / "checkpoint-1.txt").write_text("step=1")
    result = materialize_job(compute, job_command())
    assert materialization_metadata(result)["resumed"] is True
