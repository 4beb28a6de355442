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


FORBIDDEN_IN_ENGINE = ("dagster", "dagster_", "training", "resources", "sensors", "compoworld_assets.defs")


def forbidden_imports(root) -> list[str]:
    """Every import statement in ``root``'s modules, at any depth (inside functions too), of a module the
    engine must not depend on: Dagster, the training scripts, the Dagster resources, sensors or assets."""
    import ast
    from pathlib import Path

    found = []
    for path in sorted(Path(root).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            names = ([alias.name for alias in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else [])
            for name in names:
                if any(name == bad or name.startswith(bad if bad.endswith("_") else bad + ".")
                       for bad in FORBIDDEN_IN_ENGINE):
                    found.append(f"{path.name}:{node.lineno}: {name}")
    return found


def test_no_engine_module_imports_dagster_or_training_even_inside_functions():
    assert forbidden_imports(engine.__path__[0]) == []


def test_the_static_check_sees_function_level_imports(tmp_path):
    (tmp_path / "m.py").write_text("def f():\n    from training.chat_template import X\n    import dagster\n")
    assert forbidden_imports(tmp_path) == ["m.py:2: training.chat_template", "m.py:3: dagster"]
