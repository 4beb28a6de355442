"""The sbatch script and the scontrol/sacct parsing of the Slurm client (no cluster needed)."""

from pathlib import Path

from resources.compute import SlurmConfig
from resources.pipes_slurm import parse_sacct_job, parse_scontrol_job, render_sbatch_script


def test_script_has_directives_env_and_execs_the_command():
    spec = SlurmConfig(partition="gpu", time_limit="02:00:00", mem="64G", cpus_per_task=8,
                       extra_sbatch_args=["--account=lab"]).job_spec(gpus=2)
    command = ["python", "-m", "training.sft", "--note", "it's"]
    script = render_sbatch_script(command, {"B": "2", "A": "x y"}, spec,
                                  job_name="sft", workdir=Path("/work"), log_path=Path("/shared/s/job.log"))
    lines = script.splitlines()
    assert lines[0] == "#!/bin/bash"
    assert [line for line in lines if line.startswith("#SBATCH")] == [
        "#SBATCH --job-name=sft", "#SBATCH --chdir=/work", "#SBATCH --output=/shared/s/job.log",
        "#SBATCH --open-mode=append", "#SBATCH --partition=gpu", "#SBATCH --time=02:00:00",
        "#SBATCH --mem=64G",
        "#SBATCH --cpus-per-task=8", "#SBATCH --gres=gpu:2", "#SBATCH --account=lab"]
    assert lines[-3:] == ["export A='x y'", "export B=2", "exec python -m training.sft --note 'it'\"'\"'s'"]


def test_cpu_job_asks_for_no_gres_and_leaves_cluster_defaults():
    script = render_sbatch_script(["true"], {}, SlurmConfig().job_spec(gpus=0), job_name="j",
                                  workdir=Path("/w"), log_path=Path("/l"))
    assert "--gres" not in script and "--partition" not in script and "--time" not in script


def test_parse_scontrol_and_sacct():
    shown = "JobId=42 JobName=sft JobState=FAILED Reason=NonZeroExitCode Restarts=0 ExitCode=7:0"
    assert parse_scontrol_job(shown) == ("FAILED", "7:0")
    assert parse_scontrol_job("slurm_load_jobs error: Invalid job id specified") is None
    assert parse_sacct_job("CANCELLED by 0|0:15\n") == ("CANCELLED", "0:15")
    assert parse_sacct_job("") is None
