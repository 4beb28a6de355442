"""dbt-duckdb models over the tables the pipeline writes; dbt tests become asset checks.

The manifest is built once at set-up (``scripts/setup.sh`` runs ``dbt parse``), never per step.
"""


import os
import sys
from pathlib import Path

import dagster as dg
from dagster_dbt import (
    DagsterDbtTranslator,
    DagsterDbtTranslatorSettings,
    DbtCliResource,
    DbtProject,
    dbt_assets,
)

from resources import StorageResource

DBT_PROJECT_DIR = Path(__file__).resolve().parents[3] / "dbt"

dbt_project = DbtProject(project_dir=DBT_PROJECT_DIR, profiles_dir=DBT_PROJECT_DIR)


class _Translator(DagsterDbtTranslator):
    def get_group_name(self, dbt_resource_props) -> str:
        return "reporting"


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
    yield from dbt.cli(["build"], context=context).stream()


def dbt_resource() -> DbtCliResource:
    """dbt from this interpreter's environment, whether or not the venv is on PATH."""
    beside_python = Path(sys.executable).parent / "dbt"
    executable = str(beside_python) if beside_python.exists() else "dbt"
    return DbtCliResource(project_dir=dbt_project, profiles_dir=str(DBT_PROJECT_DIR), dbt_executable=executable)
