"""Stage 3: the tool catalog, one row per tool across every service."""


import dagster as dg
import polars as pl

from compoworld_assets.defs.metadata import DATA_OWNERS, TABLE_KINDS, table_metadata
from compoworld_assets.engine import tables
from compoworld_assets.engine.canonical import content_hash

CATALOG_VERSION = "1"


@dg.asset(group_name="services", code_version=CATALOG_VERSION, pool="duckdb",
          metadata={"primary_key": "qualified_name"}, automation_condition=dg.AutomationCondition.eager(),
          kinds=TABLE_KINDS, owners=DATA_OWNERS)
def tool_catalog(service_specs: pl.DataFrame, services: pl.DataFrame) -> dg.Output[pl.DataFrame]:
    """Every tool with its input and output types, implementation (code or world model) and verdict."""
    specs = tables.specs_from_rows(service_specs)
    services = services.filter(pl.col("service_id").is_in(list(specs)))
    catalog = tables.catalog_rows(specs, services)
    by_verdict = catalog.group_by("verdict").len().sort("verdict")
    return dg.Output(catalog, data_version=dg.DataVersion(content_hash(catalog.rows())[:16]), metadata={
        **table_metadata("tool_catalog", catalog),
        "n_tools": len(catalog),
        "n_services": catalog["service_id"].n_unique(),
        "by_verdict": dg.MetadataValue.json(dict(by_verdict.iter_rows())),
    })
