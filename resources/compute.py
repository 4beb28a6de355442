"""Where long jobs (training, serving) run: a local process, a Slurm job or a Kubernetes pod.

Every backend runs a command line inside a Dagster Pipes session, so the job reports logs,
metadata and its materialization the same way wherever it runs (the job side needs only
``dagster-pipes``). An asset calls one method::

    yield from compute.run(context, ["python", "-m", "training.sft", ...], gpus=1).get_results()

A job that checkpoints can resume after a failed attempt: pass ``resume_dir`` (for example
``compute.resume_dir_for(context)``, stable across retries of the same asset and partition);
the job finds it in ``$COMPOWORLD_RESUME_DIR`` and in the Pipes extras under ``resume_dir``.
See docs/dispatch.md.
"""

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import dagster as dg
from dagster._core.pipes.client import PipesClientCompletedInvocation
from pydantic import Field

from resources.pipes_k8s import KubernetesConfig, build_pod_spec, pipes_k8s_client
from resources.pipes_slurm import PipesSlurmClient, SlurmJobSpec

RESUME_DIR_ENV = "COMPOWORLD_RESUME_DIR"


class SlurmConfig(dg.Config):
    partition: str | None = None
    time_limit: str | None = Field(default=None, description='sbatch --time, e.g. "04:00:00"')
    mem: str | None = Field(default=None, description='sbatch --mem, e.g. "64G"')
    cpus_per_task: int | None = None
    extra_sbatch_args: list[str] = Field(default_factory=list, description='e.g. ["--account=lab"]')
    log_tail_lines: int = 40

    def job_spec(self, gpus: int) -> SlurmJobSpec:
        return SlurmJobSpec(partition=self.partition, time_limit=self.time_limit, mem=self.mem,
                            cpus_per_task=self.cpus_per_task, gpus=gpus,
                            extra_sbatch_args=tuple(self.extra_sbatch_args))


class ComputeResource(dg.ConfigurableResource):
    """Runs commands through Dagster Pipes on the configured backend."""

    backend: Literal["local", "slurm", "kubernetes"] = "local"
    shared_dir: str = Field(default="data/compute", description=(
        "Pipes session files, job logs and resume folders; must be visible to the job (a shared "
        "file system for Slurm, a mounted volume for Kubernetes)"))
    workdir: str | None = Field(default=None, description="the job's working directory (default: cwd)")
    env: dict[str, str] = Field(default_factory=dict, description="environment passed to every job")
    poll_interval_s: float = 1.0
    slurm: SlurmConfig = Field(default_factory=SlurmConfig)
    kubernetes: KubernetesConfig = Field(default_factory=KubernetesConfig)

    def run(self, context: dg.AssetExecutionContext | dg.OpExecutionContext, command: Sequence[str], *,
            env: Mapping[str, str] | None = None, extras: Mapping[str, Any] | None = None, gpus: int = 0,
            resume_dir: str | Path | None = None) -> PipesClientCompletedInvocation:
        job_env = dict(env or {})
        job_extras = dict(extras or {})
        if resume_dir is not None:
            resume_path = Path(resume_dir).resolve()
            resume_path.mkdir(parents=True, exist_ok=True)
            job_env[RESUME_DIR_ENV] = job_extras["resume_dir"] = str(resume_path)
        command = list(command)
        if self.backend == "slurm":
            client = PipesSlurmClient(Path(self.shared_dir, "slurm"), poll_interval_s=self.poll_interval_s,
                                      log_tail_lines=self.slurm.log_tail_lines, env=self.env)
            return client.run(context=context, command=command, spec=self.slurm.job_spec(gpus),
                              extras=job_extras, env=job_env, workdir=self.workdir)
        if self.backend == "kubernetes":
            return pipes_k8s_client(self.kubernetes, dict(self.env)).run(
                context=context, command=command, extras=job_extras, env=job_env,
                namespace=self.kubernetes.namespace, base_pod_spec=build_pod_spec(self.kubernetes, gpus))
        return dg.PipesSubprocessClient(env=dict(self.env), cwd=self.workdir).run(
            context=context, command=command, extras=job_extras, env=job_env)

    def resume_dir_for(self, context: dg.AssetExecutionContext) -> Path:
        """A folder that is the same for every attempt at this asset (and partition)."""
        folder = Path(self.shared_dir, "resume", *context.asset_key.path)
        return folder / context.partition_key if context.has_partition_key else folder


class VLLMServeConfig(dg.Config):
    """One vLLM server for a GPU job: an OpenAI-compatible endpoint, or TRL's weight-syncing one."""

    model: str = Field(description="Hugging Face id or local path of the model to serve")
    tensor_parallel_size: int = Field(default=1, ge=1)
    gpu_memory_utilization: float = Field(default=0.9, gt=0, le=1)
    host: str = "127.0.0.1"
    port: int = Field(default=8000, ge=1, le=65535)
    max_model_len: int | None = None
    dtype: str = "auto"

    @property
    def gpus(self) -> int:
        return self.tensor_parallel_size

    @property
    def api_base(self) -> str:
        """For litellm's ``hosted_vllm/<model>`` (LLMResource.api_base)."""
        return f"http://{self.host}:{self.port}/v1"

    def serve_command(self) -> list[str]:
        """``vllm serve``: an OpenAI-compatible server for evaluation and rollouts."""
        command = ["vllm", "serve", self.model, "--tensor-parallel-size", str(self.tensor_parallel_size),
                   "--gpu-memory-utilization", str(self.gpu_memory_utilization), "--host", self.host,
                   "--port", str(self.port), "--dtype", self.dtype]
        if self.max_model_len is not None:
            command += ["--max-model-len", str(self.max_model_len)]
        return command

    def trl_serve_command(self) -> list[str]:
        """``trl vllm-serve``: the server GRPO's server mode needs (it also syncs weights)."""
        command = ["trl", "vllm-serve", "--model", self.model,
                   "--tensor_parallel_size", str(self.tensor_parallel_size),
                   "--gpu_memory_utilization", str(self.gpu_memory_utilization), "--host", self.host,
                   "--port", str(self.port), "--dtype", self.dtype]
        if self.max_model_len is not None:
            command += ["--max_model_len", str(self.max_model_len)]
        return command

    def grpo_kwargs(self, mode: Literal["server", "colocate"]) -> dict[str, Any]:
        """``trl.GRPOConfig`` fields: talk to a ``trl vllm-serve`` server, or run vLLM in-process."""
        if mode == "server":
            return {"use_vllm": True, "vllm_mode": "server", "vllm_server_host": self.host,
                    "vllm_server_port": self.port}
        kwargs: dict[str, Any] = {"use_vllm": True, "vllm_mode": "colocate",
                                  "vllm_gpu_memory_utilization": self.gpu_memory_utilization,
                                  "vllm_tensor_parallel_size": self.tensor_parallel_size}
        if self.max_model_len is not None:
            kwargs["vllm_max_model_length"] = self.max_model_len
        return kwargs

    def grpo_cli_args(self, mode: Literal["server", "colocate"]) -> list[str]:
        """The same fields as ``--name value`` arguments for a TRL/HfArgumentParser script."""
        args: list[str] = []
        for name, value in self.grpo_kwargs(mode).items():
            args += [f"--{name}", str(value).lower() if isinstance(value, bool) else str(value)]
        return args
