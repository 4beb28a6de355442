"""Kubernetes backend: dagster-k8s's ``PipesK8sClient`` with a pod spec built from typed config.

The pod's first container runs the command; Pipes context goes in through env vars and
messages come back on the container's stderr via the pod log stream (dagster-k8s defaults).
Volumes make ``shared_dir`` (checkpoints, resume folders) visible inside the pod.
"""

from typing import Any

import dagster as dg
from pydantic import Field

GPU_RESOURCE = "nvidia.com/gpu"


class KubernetesVolume(dg.Config):
    """One volume mounted into the job container: a PersistentVolumeClaim or a host path."""

    name: str
    mount_path: str
    persistent_volume_claim: str | None = None
    host_path: str | None = None
    read_only: bool = False

    def volume(self) -> dict[str, Any]:
        if (self.persistent_volume_claim is None) == (self.host_path is None):
            raise ValueError(f"volume {self.name!r}: set exactly one of persistent_volume_claim, host_path")
        if self.persistent_volume_claim is not None:
            return {"name": self.name, "persistentVolumeClaim": {"claimName": self.persistent_volume_claim}}
        return {"name": self.name, "hostPath": {"path": self.host_path}}

    def mount(self) -> dict[str, Any]:
        return {"name": self.name, "mountPath": self.mount_path, "readOnly": self.read_only}


class KubernetesConfig(dg.Config):
    image: str = Field(default="", description="container image holding the project and its venv")
    namespace: str = "default"
    kubeconfig_file: str | None = Field(default=None, description="None: ~/.kube/config or in-cluster")
    kube_context: str | None = None
    in_cluster: bool = Field(default=False, description="use the service account of the pod we run in")
    working_dir: str | None = None
    cpu: str | None = Field(default=None, description='request and limit, e.g. "8"')
    memory: str | None = Field(default=None, description='request and limit, e.g. "64Gi"')
    volumes: list[KubernetesVolume] = Field(default_factory=list)
    node_selector: dict[str, str] = Field(default_factory=dict)
    service_account_name: str | None = None
    image_pull_policy: str | None = None
    poll_interval_s: float = 2.0


def build_pod_spec(config: KubernetesConfig, gpus: int) -> dict[str, Any]:
    """The ``base_pod_spec`` for ``PipesK8sClient.run``: one container with resources and mounts."""
    if not config.image:
        raise ValueError("the kubernetes backend needs kubernetes.image")
    amounts: dict[str, str] = {}
    if config.cpu:
        amounts["cpu"] = config.cpu
    if config.memory:
        amounts["memory"] = config.memory
    limits = {**amounts, **({GPU_RESOURCE: str(gpus)} if gpus > 0 else {})}
    resources = {"requests": dict(amounts), "limits": limits}
    container: dict[str, Any] = {"image": config.image, "resources": resources}
    if config.working_dir:
        container["workingDir"] = config.working_dir
    if config.image_pull_policy:
        container["imagePullPolicy"] = config.image_pull_policy
    if config.volumes:
        container["volumeMounts"] = [v.mount() for v in config.volumes]
    spec: dict[str, Any] = {"containers": [container], "restartPolicy": "Never"}
    if config.volumes:
        spec["volumes"] = [v.volume() for v in config.volumes]
    if config.node_selector:
        spec["nodeSelector"] = dict(config.node_selector)
    if config.service_account_name:
        spec["serviceAccountName"] = config.service_account_name
    return spec


def pipes_k8s_client(config: KubernetesConfig, env: dict[str, str]):
    from dagster_k8s import PipesK8sClient

    if config.in_cluster:
        return PipesK8sClient(env=env, load_incluster_config=True, poll_interval=config.poll_interval_s)
    return PipesK8sClient(env=env, load_incluster_config=False, kubeconfig_file=config.kubeconfig_file,
                          kube_context=config.kube_context, poll_interval=config.poll_interval_s)
