"""The project's jobs with each step a Kubernetes Job (``COMPOWORLD_EXECUTOR=k8s``: dagster-k8s's
``k8s_job_executor``), against the fake API server of tests/dispatch/fake_k8s.py, a TEST DOUBLE that runs each
pod's container command as a local process. What is real: the definitions' executor choice, the executor
creating one batch/v1 Job per step and polling its status, and each step running in a process of its own
(``dagster api execute_step``) that reads its inputs from, and writes its table to, the shared data folder.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import dagster as dg
import duckdb
import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "dispatch"))
from fake_k8s import FakeKubernetes

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

DAGSTER = str(Path(sys.executable).parent / "dagster")
FIRST, LAST = "calendar", "car_rental"  # two built-in services, next to each other in id order
SHARED = ("DAGSTER_HOME", "COMPOWORLD_DATA_DIR", "COMPOWORLD_SPEC_DIR", "LITELLM_LOCAL_MODEL_COST_MAP",
          "OMP_NUM_THREADS", "COMPOWORLD_EXECUTOR")


def test_steps_run_as_kubernetes_jobs_on_the_shared_data_folder(project_env, tmp_path):
    env = {**project_env, "COMPOWORLD_EXECUTOR": "k8s"}
    with FakeKubernetes() as cluster:
        kubeconfig = str(cluster.kubeconfig(tmp_path / "kubeconfig"))
        # As deployed (Dagster's Helm chart): the instance launches runs as Kubernetes Jobs too, and the step
        # executor takes the pull policy and cluster access from that launcher.
        with Path(env["DAGSTER_HOME"], "dagster.yaml").open("a") as instance_yaml:
            instance_yaml.write("run_launcher:\n  module: dagster_k8s\n  class: K8sRunLauncher\n  config:\n" + "".join(
                f"    {key}: {json.dumps(value)}\n" for key, value in {
                    "instance_config_map": "dagster-instance", "dagster_home": env["DAGSTER_HOME"],
                    "service_account_name": "compoworld",
                    "job_image": "compoworld:test", "job_namespace": "compoworld", "image_pull_policy": "Never",
                    "load_incluster_config": False, "kubeconfig_file": kubeconfig}.items()))
        pod_env = [f"{name}={env[name]}" for name in SHARED]
        pod_env.append(f"PATH={Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
        config = tmp_path / "k8s.json"
        config.write_text(json.dumps({"execution": {"config": {
            "job_image": "compoworld:test", "job_namespace": "compoworld", "env_vars": pod_env}}}))

        def execute(job: str, tags: dict[str, str] | None = None) -> None:
            command = [DAGSTER, "job", "execute", "-m", "compoworld_assets.definitions", "-j", job, "-c", str(config)]
            done = subprocess.run(command + (["--tags", json.dumps(tags)] if tags else []), cwd=REPO, env=env,
                                  capture_output=True, text=True, timeout=600, check=False)
            assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]

        execute("import_specs_job")
        execute("build_services_job", tags={"dagster/asset_partition_range_start": FIRST,
                                            "dagster/asset_partition_range_end": LAST})
        jobs = dict(cluster.jobs)

    instance = dg.DagsterInstance.from_config(project_env["DAGSTER_HOME"])
    runs = instance.get_runs()
    assert {r.status for r in runs} == {dg.DagsterRunStatus.SUCCESS} and len(runs) == 2
    steps = {step.step_key for r in runs for step in instance.get_run_step_stats(r.run_id)}
    launched = {job["metadata"]["labels"]["dagster/op"] for job in jobs.values()}
    assert steps == launched, "every step ran as a Kubernetes Job of its own"
    assert {"import_specs", "services"} <= steps
    assert {job["spec"]["template"]["spec"]["containers"][0]["image"] for job in jobs.values()} == {"compoworld:test"}
    with duckdb.connect(str(Path(project_env["COMPOWORLD_DATA_DIR"]) / "compoworld.duckdb"), read_only=True) as con:
        built = con.execute("select service_id from pipeline.services order by 1").fetchall()
    assert built == [(FIRST,), (LAST,)], "the services step read the specs the import step's pod wrote"
