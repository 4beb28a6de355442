"""A Dagster Pipes client that runs a command as a Slurm batch job.

The orchestrating process and the job share a directory (``shared_dir``: a network file
system on a real cluster, any local folder on a single node). Each run gets its own session
folder there holding the Pipes context file, the Pipes message file, the generated sbatch
script and the job's log. The client submits with ``sbatch --parsable``, polls
``scontrol show job`` (falling back to ``sacct`` once the controller has forgotten the job)
until a terminal state, and cancels the job with ``scancel`` if the run is interrupted or the
client fails while the job is queued or running. The job side needs only ``dagster-pipes``.
"""

import re
import shlex
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from dagster import AssetExecutionContext, OpExecutionContext
from dagster._core.pipes.client import PipesClient, PipesClientCompletedInvocation
from dagster._core.pipes.utils import PipesFileContextInjector, PipesFileMessageReader, open_pipes_session
from dagster_pipes import PipesExtras

TERMINAL_STATES = frozenset({
    "BOOT_FAIL", "CANCELLED", "COMPLETED", "DEADLINE", "FAILED", "NODE_FAIL", "OUT_OF_MEMORY",
    "PREEMPTED", "REVOKED", "TIMEOUT",
})
# A job the controller forgot (MinJobAge passed) and no accounting records: stop waiting.
MAX_UNKNOWN_POLLS = 30


class SlurmJobError(Exception):
    """A Slurm job ended in a state other than COMPLETED; the message carries its log tail."""

    def __init__(self, job_id: str, state: str, exit_code: str, log_path: Path, log_tail: str):
        self.job_id, self.state, self.exit_code, self.log_path = job_id, state, exit_code, log_path
        super().__init__(
            f"Slurm job {job_id} ended {state} (exit code {exit_code}). "
            f"Last lines of {log_path}:\n{log_tail}"
        )


@dataclass(frozen=True)
class SlurmJobSpec:
    """Scheduler options of one job; ``None`` leaves the cluster's default."""

    partition: str | None = None
    time_limit: str | None = None
    mem: str | None = None
    cpus_per_task: int | None = None
    gpus: int = 0
    extra_sbatch_args: Sequence[str] = field(default_factory=tuple)

    def directives(self, job_name: str, workdir: Path, log_path: Path) -> list[str]:
        options = [f"--job-name={job_name}", f"--chdir={workdir}", f"--output={log_path}",
                   "--open-mode=append"]
        for flag, value in (("partition", self.partition), ("time", self.time_limit), ("mem", self.mem),
                            ("cpus-per-task", self.cpus_per_task)):
            if value is not None:
                options.append(f"--{flag}={value}")
        if self.gpus > 0:
            options.append(f"--gres=gpu:{self.gpus}")
        options.extend(self.extra_sbatch_args)
        return [f"#SBATCH {option}" for option in options]


def render_sbatch_script(command: Sequence[str], env: Mapping[str, str], spec: SlurmJobSpec, *,
                         job_name: str, workdir: Path, log_path: Path) -> str:
    """The batch script: directives, explicit env exports (they survive any ``--export`` policy
    of the cluster), then ``exec`` of the command so the job's exit code is the command's."""
    lines = ["#!/bin/bash", *spec.directives(job_name, workdir, log_path), "set -e"]
    lines += [f"export {name}={shlex.quote(value)}" for name, value in sorted(env.items())]
    lines.append(f"exec {shlex.join(command)}")
    return "\n".join(lines) + "\n"


def parse_scontrol_job(text: str) -> tuple[str, str] | None:
    """(JobState, ExitCode) from ``scontrol show job`` output, or None when it names no job."""
    state = re.search(r"\bJobState=(\S+)", text)
    exit_code = re.search(r"\bExitCode=(\S+)", text)
    if state is None:
        return None
    return state.group(1), exit_code.group(1) if exit_code else "?"


def parse_sacct_job(text: str) -> tuple[str, str] | None:
    """(State, ExitCode) from ``sacct -n -P -X -o State,ExitCode``; "CANCELLED by 0" -> CANCELLED."""
    for line in text.splitlines():
        if "|" in line:
            state, exit_code = line.split("|", 1)
            return state.split()[0], exit_code.strip()
    return None


class PipesSlurmClient(PipesClient):
    def __init__(self, shared_dir: str | Path, *, poll_interval_s: float = 1.0, log_tail_lines: int = 40,
                 env: Mapping[str, str] | None = None):
        self.shared_dir = Path(shared_dir).resolve()  # the job may run in another directory
        self.poll_interval_s = poll_interval_s
        self.log_tail_lines = log_tail_lines
        self.env = dict(env or {})

    @classmethod
    def _is_dagster_maintained(cls) -> bool:
        return False

    def run(  # ty: ignore[invalid-method-override]
            self, *, context: OpExecutionContext | AssetExecutionContext, command: Sequence[str],
            spec: SlurmJobSpec = SlurmJobSpec(), extras: PipesExtras | None = None,
            env: Mapping[str, str] | None = None, workdir: str | Path | None = None,
            job_name: str | None = None) -> PipesClientCompletedInvocation:
        """Submit ``command`` as one batch job and wait for it; raises SlurmJobError unless it
        COMPLETED, and cancels the job if waiting is interrupted."""
        self.shared_dir.mkdir(parents=True, exist_ok=True)
        session_dir = Path(tempfile.mkdtemp(prefix=f"{context.run.run_id[:8]}-", dir=self.shared_dir))
        log_path = session_dir / "job.log"
        name = job_name or f"dagster-{context.op.name}"[:64]
        with open_pipes_session(
            context=context,
            extras=extras,
            context_injector=PipesFileContextInjector(str(session_dir / "context.json")),
            message_reader=PipesFileMessageReader(str(session_dir / "messages.jsonl")),
        ) as session:
            script = render_sbatch_script(
                command, {**self.env, **(env or {}), **session.get_bootstrap_env_vars()}, spec,
                job_name=name, workdir=Path(workdir or Path.cwd()).resolve(), log_path=log_path)
            script_path = session_dir / "job.sbatch"
            script_path.write_text(script)
            job_id = submit(script_path)
            context.log.info(f"Submitted Slurm job {job_id} ({name}); log: {log_path}")
            try:
                state, exit_code = self._wait(job_id)
            except BaseException:
                cancel(job_id)
                context.log.warning(f"Cancelled Slurm job {job_id}")
                raise
            if state != "COMPLETED":
                raise SlurmJobError(job_id, state, exit_code, log_path, tail(log_path, self.log_tail_lines))
        metadata = {"slurm_job_id": job_id, "slurm_log": str(log_path)}
        return PipesClientCompletedInvocation(session, metadata=metadata)

    def _wait(self, job_id: str) -> tuple[str, str]:
        unknown_polls = 0
        while True:
            status = job_status(job_id)
            if status is not None and status[0] in TERMINAL_STATES:
                return status
            unknown_polls = unknown_polls + 1 if status is None else 0
            if unknown_polls > MAX_UNKNOWN_POLLS:
                raise RuntimeError(f"Slurm job {job_id} is unknown to scontrol and sacct")
            time.sleep(self.poll_interval_s)


def submit(script_path: Path) -> str:
    done = subprocess.run(["sbatch", "--parsable", str(script_path)],
                          check=False, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"sbatch failed ({done.returncode}): {done.stderr.strip()}")
    return done.stdout.strip().split(";")[0]


def job_status(job_id: str) -> tuple[str, str] | None:
    """The job's (state, exit code); None while neither scontrol nor sacct can tell yet."""
    shown = subprocess.run(["scontrol", "show", "job", "-o", job_id],
                           check=False, capture_output=True, text=True)
    status = parse_scontrol_job(shown.stdout) if shown.returncode == 0 else None
    if status is not None:
        return status
    accounted = subprocess.run(["sacct", "-j", job_id, "-n", "-P", "-X", "-o", "State,ExitCode"],
                               check=False, capture_output=True, text=True)
    return parse_sacct_job(accounted.stdout) if accounted.returncode == 0 else None


def cancel(job_id: str) -> None:
    subprocess.run(["scancel", job_id], check=False, capture_output=True, text=True)


def tail(path: Path, lines: int) -> str:
    if not path.exists():
        return "(no log file was written)"
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
