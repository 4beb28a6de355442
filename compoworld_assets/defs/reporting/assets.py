"""dbt-duckdb models over the tables the pipeline writes; dbt tests become asset checks.

The manifest is built once at set-up (``scripts/setup.sh`` runs ``dbt parse``), never per step.
"""


import json
import os
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

import dagster as dg
import duckdb
from dagster_dbt import (
    DagsterDbtTranslator,
    DagsterDbtTranslatorSettings,
    DbtCliResource,
    DbtProject,
    dbt_assets,
)

from compoworld_assets.defs.metadata import DATA_OWNERS
from resources import StorageResource

DBT_PROJECT_DIR = Path(__file__).resolve().parents[3] / "dbt"

dbt_project = DbtProject(project_dir=DBT_PROJECT_DIR, profiles_dir=DBT_PROJECT_DIR)


class _Translator(DagsterDbtTranslator):
    def get_group_name(self, dbt_resource_props) -> str:
        return "reporting"

    def get_owners(self, dbt_resource_props) -> list[str]:
        return DATA_OWNERS


def with_row_counts(events: Iterable, database: str) -> Iterator:
    """dbt's events, each model's materialization with ``dagster/row_count`` of the relation it built.

    Counted after dbt has exited: dbt-duckdb holds the file for its whole run, so dagster-dbt's own
    ``fetch_row_counts`` (an adapter connection while dbt runs) could not open it.
    """
    events = list(events)
    nodes = json.loads(Path(dbt_project.manifest_path).read_text(encoding="utf-8"))["nodes"]
    with duckdb.connect(database, read_only=True) as connection:
        for event in events:
            node = nodes.get(event.metadata["unique_id"].value) if isinstance(event, dg.Output) else None
            if node is not None and node.get("relation_name"):
                count = connection.execute(f"select count(*) from {node['relation_name']}").fetchone()[0]
                event = event.with_metadata({**event.metadata, "dagster/row_count": dg.MetadataValue.int(count)})
            yield event


@dbt_assets(
    manifest=dbt_project.manifest_path,
    project=dbt_project,
    pool="duckdb",
    dagster_dbt_translator=_Translator(settings=DagsterDbtTranslatorSettings(enable_asset_checks=True)),
)
def compoworld_dbt_models(context: dg.AssetExecutionContext, dbt: DbtCliResource, storage: StorageResource):
    """Staging views and marts (catalog by domain, verification funnel), with their dbt tests."""
    # dbt inherits this process's environment; profiles.yml reads the DuckDB location from it.
    os.environ["COMPOWORLD_DATA_DIR"] = str(Path(storage.data_dir).resolve())
    yield from with_row_counts(dbt.cli(["build"], context=context).stream(),
                               str(Path(storage.data_dir, "compoworld.duckdb")))


def dbt_resource() -> DbtCliResource:
    """dbt from this interpreter's environment, whether or not the venv is on PATH."""
    beside_python = Path(sys.executable).parent / "dbt"
    executable = str(beside_python) if beside_python.exists() else "dbt"
    return DbtCliResource(project_dir=dbt_project, profiles_dir=str(DBT_PROJECT_DIR), dbt_executable=executable)
