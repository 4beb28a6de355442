"""Markers, a throwaway Dagster instance, and the local Slurm cluster when it is up."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest

from resources.compute import ComputeResource

sys.path.insert(0, str(Path(__file__).resolve().parent))  # fake_k8s, dispatch_support

SLURM_CONF = Path(os.environ.get("SLURM_LOCAL_ROOT", "/tmp/compoworld-slurm"), "etc", "slurm.conf")


def pytest_configure(config):
    config.addinivalue_line("markers", "slurm: needs a Slurm cluster (scripts/slurm/start_slurm.sh)")
    config.addinivalue_line("markers", "k8s_real: needs a real Kubernetes cluster (COMPOWORLD_K8S_REAL=1)")


@pytest.fixture
def instance():
    with dg.instance_for_test() as test_instance:
        yield test_instance


@pytest.fixture(scope="session")
def slurm_conf() -> str:
    """SLURM_CONF of a reachable cluster, or skip: the caller's own, else start_slurm.sh's."""
    if shutil.which("sinfo") is None:
        pytest.skip("Slurm is not installed (run scripts/slurm/start_slurm.sh)")
    conf = os.environ.get("SLURM_CONF") or str(SLURM_CONF)
    if not Path(conf).is_file():
        pytest.skip(f"no Slurm config at {conf} (run scripts/slurm/start_slurm.sh)")
    try:
        up = subprocess.run(["sinfo", "-h"], env={**os.environ, "SLURM_CONF": conf}, check=False,
                            capture_output=True, timeout=10).returncode == 0
    except subprocess.TimeoutExpired:
        up = False
    if not up:
        pytest.skip(f"no Slurm controller answers with SLURM_CONF={conf} (run scripts/slurm/start_slurm.sh)")
    return conf


@pytest.fixture
def slurm(slurm_conf, monkeypatch) -> str:
    monkeypatch.setenv("SLURM_CONF", slurm_conf)
    return slurm_conf


@pytest.fixture
def materialize_job(instance):
    """``materialize_job(compute, command, **run_kwargs)``: materialize a one-asset graph whose
    asset runs ``command`` through ``compute.run`` (uncaught failures stay in the result)."""

    def materialize(compute, command: list[str], *, resume: bool = False,
                    **run_kwargs) -> dg.ExecuteInProcessResult:
        @dg.asset
        def trained(context: dg.AssetExecutionContext, compute: ComputeResource):
            resume_dir = compute.resume_dir_for(context) if resume else None
            yield from compute.run(context, command, resume_dir=resume_dir, **run_kwargs).get_results()

        return dg.materialize([trained], resources={"compute": compute}, instance=instance,
                              raise_on_error=False)

    return materialize
