"""The Kubernetes backend: unmodified dagster-k8s PipesK8sClient against the fake API server
(tests/dispatch/fake_k8s.py, a test double), and optionally against a real cluster."""

import os

import pytest
from dispatch_support import REPO, failure_text, job_command, materialization_metadata
from fake_k8s import FakeKubernetes

from resources.compute import ComputeResource
from resources.pipes_k8s import GPU_RESOURCE, KubernetesConfig, KubernetesVolume, build_pod_spec


@pytest.fixture
def cluster():
    with FakeKubernetes() as fake:
        yield fake


def k8s_compute(tmp_path, kubeconfig, **config) -> ComputeResource:
    return ComputeResource(backend="kubernetes", shared_dir=str(tmp_path), kubernetes=KubernetesConfig(
        image="compoworld:test", namespace="training", kubeconfig_file=str(kubeconfig),
        working_dir=str(REPO), poll_interval_s=0.1, **config))


def test_kubernetes_job_materializes_with_its_metadata(cluster, materialize_job, tmp_path):
    compute = k8s_compute(tmp_path, cluster.kubeconfig(tmp_path / "kubeconfig"), memory="2Gi")
    result = materialize_job(compute, job_command("--sleep", "0.2"), extras={"marker": "k8s-run"}, gpus=1,
                             env={"HF_HOME": "/cache/hf"})
    assert result.success
    metadata = materialization_metadata(result)
    assert metadata["marker"] == "k8s-run"
    assert metadata["argv"] == "--sleep 0.2"
    [pod] = cluster.created
    [container] = pod["spec"]["containers"]
    assert pod["metadata"]["namespace"] == "training"
    assert container["image"] == "compoworld:test"
    assert container["resources"]["limits"] == {"memory": "2Gi", GPU_RESOURCE: "1"}
    assert {"name": "HF_HOME", "value": "/cache/hf"} in container["env"]
    assert cluster.pods == {}, "the pod is deleted once it has completed"


def test_failing_container_fails_the_materialization_with_its_logs(cluster, materialize_job, tmp_path):
    compute = k8s_compute(tmp_path, cluster.kubeconfig(tmp_path / "kubeconfig"))
    result = materialize_job(compute, job_command("--fail", "4"))
    assert not result.success
    text = failure_text(result)
    assert "job-side failure marker: loss went NaN at step 7" in text
    assert "some containers exited with errors" in text


def test_pod_spec_carries_volumes_node_selector_and_no_gpu_by_default():
    config = KubernetesConfig(
        image="img", cpu="4", node_selector={"pool": "a100"}, service_account_name="trainer",
        volumes=[KubernetesVolume(name="shared", mount_path="/shared", persistent_volume_claim="cw-shared"),
                 KubernetesVolume(name="models", mount_path="/models", host_path="/srv/models",
                                  read_only=True)])
    spec = build_pod_spec(config, gpus=0)
    [container] = spec["containers"]
    assert container["resources"] == {"requests": {"cpu": "4"}, "limits": {"cpu": "4"}}
    assert spec["volumes"] == [{"name": "shared", "persistentVolumeClaim": {"claimName": "cw-shared"}},
                               {"name": "models", "hostPath": {"path": "/srv/models"}}]
    assert container["volumeMounts"][1] == {"name": "models", "mountPath": "/models", "readOnly": True}
    assert spec["nodeSelector"] == {"pool": "a100"}
    assert spec["serviceAccountName"] == "trainer"


def test_pod_spec_rejects_a_missing_image_and_an_ambiguous_volume():
    with pytest.raises(ValueError, match="kubernetes.image"):
        build_pod_spec(KubernetesConfig(), gpus=0)
    ambiguous = KubernetesVolume(name="v", mount_path="/v", host_path="/a", persistent_volume_claim="b")
    with pytest.raises(ValueError, match="exactly one"):
        build_pod_spec(KubernetesConfig(image="img", volumes=[ambiguous]), gpus=0)


@pytest.mark.k8s_real
@pytest.mark.skipif(os.environ.get("COMPOWORLD_K8S_REAL") != "1",
                    reason="needs COMPOWORLD_K8S_REAL=1, COMPOWORLD_K8S_IMAGE, KUBECONFIG")
def test_real_cluster_runs_a_pipes_pod(materialize_job, tmp_path):
    compute = ComputeResource(backend="kubernetes", kubernetes=KubernetesConfig(
        image=os.environ["COMPOWORLD_K8S_IMAGE"],
        namespace=os.environ.get("COMPOWORLD_K8S_NAMESPACE", "default"),
        kubeconfig_file=os.environ.get("KUBECONFIG")))
    script = ("from dagster_pipes import open_dagster_pipes\n"
              "with open_dagster_pipes() as p:\n"
              "    p.report_asset_materialization(metadata={'where': 'k8s'})")
    result = materialize_job(compute, ["python", "-c", script])
    assert result.success
    assert materialization_metadata(result)["where"] == "k8s"
