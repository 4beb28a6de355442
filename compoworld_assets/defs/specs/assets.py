"""Stage 1: import tool specifications; quarantine what cannot be imported."""


import dagster as dg
import polars as pl

from compoworld_assets.defs.services.partitions import service_partitions
from compoworld_assets.engine import tables
from resources import SpecSourcesResource

IMPORTER_VERSION = "1"


@dg.multi_asset(
    outs={
        "service_specs": dg.AssetOut(
            description="One row per imported service spec (typed entities and tools as JSON).",
            code_version=IMPORTER_VERSION, metadata={"primary_key": "service_id"},
        ),
        "quarantined_specs": dg.AssetOut(
            description="Specs or fragments that could not be imported or validated, with the reason.",
            code_version=IMPORTER_VERSION, metadata={"primary_key": "quarantine_id"},
        ),
    },
    group_name="services",
    pool="duckdb",
)
def import_specs(context: dg.AssetExecutionContext, spec_sources: SpecSourcesResource):
    """Import every configured source; register one ``service`` partition per service id."""
    result = spec_sources.load()
    specs = tables.spec_rows(result.specs)
    quarantined = tables.quarantine_rows(result.quarantined)
    ids = specs["service_id"].to_list()
    registered = set(context.instance.get_dynamic_partitions(service_partitions.name))
    new_ids = [i for i in ids if i not in registered]
    if new_ids:
        context.instance.add_dynamic_partitions(service_partitions.name, new_ids)
    for gone in sorted(registered - set(ids)):
        context.instance.delete_dynamic_partition(service_partitions.name, gone)
    yield dg.Output(specs, "service_specs", data_version=dg.DataVersion(_frame_hash(specs, "spec_hash")),
                    metadata={
                        "n_specs": len(specs), "n_tools": int(specs["n_tools"].sum()),
                        "spec_hashes": dg.MetadataValue.json(dict(zip(ids, specs["spec_hash"].to_list(),
                                                                      strict=True))),
                        "domains": dg.MetadataValue.json(sorted(set(specs["domain"].to_list()))),
                        "new_partitions": len(new_ids),
                        "removed_partitions": len(registered - set(ids)),
                    })
    reasons = quarantined.group_by("reason").len().sort("len", descending=True).head(10)
    yield dg.Output(quarantined, "quarantined_specs",
                    data_version=dg.DataVersion(_frame_hash(quarantined, "quarantine_id")),
                    metadata={
                        "n_quarantined": len(quarantined),
                        "top_reasons": dg.MetadataValue.md(_markdown(reasons)),
                    })


def _frame_hash(frame: pl.DataFrame, column: str) -> str:
    from compoworld_assets.engine.canonical import content_hash

    return content_hash(sorted(frame[column].to_list()))[:16]


def _markdown(frame: pl.DataFrame) -> str:
    if frame.is_empty():
        return "_none_"
    lines = ["| reason | count |", "|---|---|"]
    lines += [f"| {r['reason'][:120].replace('|', '/')} | {r['len']} |" for r in frame.iter_rows(named=True)]
    return "\n".join(lines)
