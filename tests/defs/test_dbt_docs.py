"""Every dbt model and every column it produces is described (dbt/models/**.yml).

The models run on empty pipeline tables in an in-memory DuckDB (their Jinja is only ``source()``,
``ref()`` and ``config()``), so the test knows the columns each model really produces without a
pipeline run. Column descriptions that reference doc blocks must name a block that exists: the
Dagster assets show the same blocks for the same pipeline columns.
"""

import re
from pathlib import Path

import dagster as dg
import duckdb
import polars as pl
import pytest
import yaml

from compoworld_assets.definitions import build_resources
from compoworld_assets.defs.metadata import DOCS_FILE, column_docs
from compoworld_assets.defs.reporting.assets import compoworld_dbt_models

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


def create_empty_tables(connection: duckdb.DuckDBPyConnection, pipeline_schemas: dict[str, dict]) -> None:
    connection.execute("create schema pipeline")
    for table, schema in pipeline_schemas.items():
        empty = pl.DataFrame(schema=schema).to_arrow()  # noqa: F841  (referenced by name in the SQL)
        connection.execute(f"create table pipeline.{table} as select * from empty")


def produced_columns(pipeline_schemas: dict[str, dict]) -> dict[str, list[str]]:
    """Model → the columns its SQL produces over empty pipeline tables."""
    connection = duckdb.connect()
    create_empty_tables(connection, pipeline_schemas)
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


def test_doc_block_names_are_unique():
    """dbt refuses to compile a project with two doc blocks of one name."""
    names = re.findall(r"{%\s*docs\s+(\w+)\s*%}", DOCS_FILE.read_text(encoding="utf-8"))
    assert sorted(name for name in set(names) if names.count(name) > 1) == []


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


@pytest.mark.slow
def test_dbt_materializations_carry_row_counts_and_described_columns(pipeline_schemas, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    with duckdb.connect(str(data / "compoworld.duckdb")) as connection:
        create_empty_tables(connection, pipeline_schemas)
    with dg.instance_for_test() as instance:
        result = dg.materialize([compoworld_dbt_models], resources=build_resources(str(data)), instance=instance,
                                raise_on_error=False)
    materialized = {e.asset_key.to_user_string(): e.materialization.metadata
                    for e in result.get_asset_materialization_events()}
    assert len(materialized) == len(documented_models())
    assert {name: m["dagster/row_count"].value for name, m in materialized.items() if name.startswith("marts/")} == {
        "marts/catalog_by_domain": 0, "marts/criterion_pass_rates": 0, "marts/graph_edges_by_kind": 0,
        "marts/graph_service_degrees": 0, "marts/task_difficulty": 0, "marts/verification_funnel": 13,
        "marts/leaderboard": 0}
    [spec] = [s for s in compoworld_dbt_models.specs if s.key.to_user_string() == "marts/verification_funnel"]
    columns = spec.metadata["dagster/column_schema"].columns
    assert [c.name for c in columns] == ["stage", "stage_order", "n"] and all(c.description for c in columns)
