"""A temporary ``DAGSTER_HOME`` with the project's dagster.yaml, a data directory and a drop folder."""

import os
import shutil
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "specs"
sys.path.insert(0, str(Path(__file__).resolve().parent))  # dagster_dev


def pytest_configure(config):
    config.addinivalue_line("markers", "e2e: drives the Dagster UI in a real browser (needs Debian's chromium)")


@pytest.fixture
def project_env(tmp_path) -> dict[str, str]:
    """Environment for a Dagster process over a fresh instance, using the project's dagster.yaml."""
    home = tmp_path / "dagster_home"
    home.mkdir()
    shutil.copy(REPO / "dagster.yaml", home / "dagster.yaml")
    specs = tmp_path / "specs"
    specs.mkdir()
    for name in ("bfcl_message_api.json", "malformed_tools.json"):
        shutil.copy(FIXTURES / name, specs / name)
    return {**os.environ, "DAGSTER_HOME": str(home), "COMPOWORLD_DATA_DIR": str(tmp_path / "data"),
            "COMPOWORLD_SPEC_DIR": str(specs), "LITELLM_LOCAL_MODEL_COST_MAP": "True", "OMP_NUM_THREADS": "1"}
