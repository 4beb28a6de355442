"""Stage 3: the tool catalog, one row per tool across every service."""


import dagster as dg
import polars as pl

from compoworld_assets.engine import tables

CATALOG_VERSION = "1"


@dg.asset(group_name="services", code_version=CATALOG_VERSION, pool="duckdb",
          metadata={"primary_key": "qualified_name"})
def tool_catalog(service_specs: pl.DataFrame, services: pl.DataFrame) -> dg.Output[pl.DataFrame]:
    """Every tool with its input and output types, implementation (code or world model) and verdict."""
    specs = tables.specs_from_rows(service_specs)
    services = services.filter(pl.col("service_id").is_in(list(specs)))
    catalog = tables.catalog_rows(specs, services)
    by_verdict = catalog.group_by("verdict").len().sort("verdict")
    return dg.Output(catalog, metadata={
        "n_tools": len(catalog),
        "n_services": catalog["service_id"].n_unique(),
        "by_verdict": dg.MetadataValue.json(dict(by_verdict.iter_rows())),
    })
