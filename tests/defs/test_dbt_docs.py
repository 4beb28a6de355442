"""Every dbt model and every column it produces is described (dbt/models/**.yml).

The models run on empty pipeline tables in an in-memory DuckDB (their Jinja is only ``source()``,
``ref()`` and ``config()``), so the test knows the columns each model really produces without a
pipeline run. Column descriptions that reference doc blocks must name a block that exists: the
Dagster assets show the same blocks for the same pipeline columns.
"""

import re
from pathlib import Path

import duckdb
import polars as pl
import yaml

from compoworld_assets.defs.metadata import column_docs

MODELS = Path(__file__).resolve().parents[2] / "dbt" / "models"
_SOURCE = re.compile(r"{{\s*source\('\w+',\s*'(\w+)'\)\s*}}")
_REF = re.compile(r"{{\s*ref\('(\w+)'\)\s*}}")
_CONFIG = re.compile(r"{{\s*config\(.*?\)\s*}}", re.DOTALL)
_DOC = re.compile(r"{{\s*doc\('(\w+)'\)\s*}}")


def documented_models() -> dict[str, dict]:
    models = {}
    for path in MODELS.rglob("*.yml"):
        for model in (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("models", []):
            models[model["name"]] = model
    return models


def produced_columns(pipeline_schemas: dict[str, dict]) -> dict[str, list[str]]:
    """Model → the columns its SQL produces over empty pipeline tables."""
    connection = duckdb.connect()
    connection.execute("create schema pipeline")
    for table, schema in pipeline_schemas.items():
        empty = pl.DataFrame(schema=schema).to_arrow()  # noqa: F841  (referenced by name in the SQL)
        connection.execute(f"create table pipeline.{table} as select * from empty")
    pending = {path.stem: path.read_text(encoding="utf-8") for path in MODELS.rglob("*.sql")}
    columns: dict[str, list[str]] = {}
    while pending:
        ready = [m for m, sql in pending.items() if set(_REF.findall(sql)) <= set(columns)]
        assert ready, f"models whose refs never resolve: {sorted(pending)}"
        for model in ready:
            sql = _REF.sub(r"\1", _SOURCE.sub(r"pipeline.\1", _CONFIG.sub("", pending.pop(model))))
            connection.execute(f"create view {model} as {sql}")
            columns[model] = [row[0] for row in connection.execute(f"describe {model}").fetchall()]
    return columns


def test_every_model_and_every_column_it_produces_is_described(pipeline_schemas):
    documented = documented_models()
    produced = produced_columns(pipeline_schemas)
    assert set(documented) == set(produced)
    blocks = column_docs()
    problems = []
    for name, model in sorted(documented.items()):
        if len((model.get("description") or "").split()) < 4:
            problems.append(f"{name}: no description")
        described = {c["name"]: c.get("description") or "" for c in model.get("columns", [])}
        if list(described) != produced[name]:
            problems.append(f"{name}: documents {list(described)}, produces {produced[name]}")
        for column, text in described.items():
            missing = [block for block in _DOC.findall(text) if block not in blocks]
            if not text.strip() or missing:
                problems.append(f"{name}.{column}: {'unknown doc block ' + str(missing) if missing else 'no description'}")
    assert problems == []
