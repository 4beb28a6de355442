"""The engine is pure: importing every engine module never imports Dagster."""

import pkgutil
import subprocess
import sys

from compoworld_assets import engine


def test_engine_imports_no_dagster():
    modules = sorted(m.name for m in pkgutil.walk_packages(engine.__path__, prefix="compoworld_assets.engine."))
    assert len(modules) > 10
    program = (
        "import importlib, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "bad = sorted(m for m in sys.modules if m == 'dagster' or m.startswith(('dagster.', 'dagster_')))\n"
        "print(','.join(bad))\n"
    )
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "", f"engine imported Dagster modules: {result.stdout.strip()}"


def test_purity_check_detects_dagster(tmp_path):
    """The check itself can fail: importing dagster shows up in sys.modules."""
    program = "import sys, dagster\nprint('dagster' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "True"
