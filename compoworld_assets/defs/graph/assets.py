"""Stage 4: the tool dependency graph over every built service."""

import dagster as dg
import polars as pl

from compoworld_assets.defs.metadata import DATA_OWNERS, table_metadata
from compoworld_assets.engine import tables
from compoworld_assets.engine.canonical import content_hash
from compoworld_assets.engine.evaluation.plot import svg_markdown_image
from compoworld_assets.engine.tasks.graph import (
    built_services_graph,
    graph_statistics,
    graph_tables,
    service_graph_svg,
)
from resources import StorageResource

GRAPH_VERSION = "2"
GRAPH_KINDS = {"python", "networkx", "duckdb"}


@dg.multi_asset(
    outs={
        "dependency_graph": dg.AssetOut(
            description="Edges t1 → t2: an output of t1 can feed an input of t2 (type edge) or t1 writes "
                        "an entity t2 reads (state edge).",
            code_version=GRAPH_VERSION, automation_condition=dg.AutomationCondition.eager(),
            kinds=GRAPH_KINDS, owners=DATA_OWNERS),
        "dependency_graph_nodes": dg.AssetOut(description="One node per tool with its degrees.",
                                              code_version=GRAPH_VERSION,
                                              automation_condition=dg.AutomationCondition.eager(),
                                              metadata={"primary_key": "qualified_name"},
                                              kinds=GRAPH_KINDS, owners=DATA_OWNERS),
    },
    group_name="tasks",
    pool="duckdb",
)
def dependency_graph(service_specs: pl.DataFrame, services: pl.DataFrame, storage: StorageResource):
    specs = tables.specs_from_rows(service_specs)
    built = tables.built_services_from_rows(specs, services)
    graph = built_services_graph(built)
    nodes, edges = graph_tables(graph)
    stats = graph_statistics(graph)
    svg = service_graph_svg(graph)
    picture = storage.path("graphs", "service_graph.svg")
    picture.write_text(svg, encoding="utf-8")
    yield dg.Output(edges, "dependency_graph", data_version=dg.DataVersion(content_hash(edges.rows())[:16]),
                    metadata={
                        **table_metadata("dependency_graph", edges),
                        **{k: v for k, v in stats.items() if isinstance(v, (int, float))},
                        "statistics": dg.MetadataValue.json(stats),
                        "service_graph": dg.MetadataValue.md(svg_markdown_image(svg, alt="service graph")),
                        "service_graph_file": dg.MetadataValue.path(str(picture)),
                    })
    yield dg.Output(nodes, "dependency_graph_nodes",
                    data_version=dg.DataVersion(content_hash(nodes.rows())[:16]),
                    metadata={**table_metadata("dependency_graph_nodes", nodes), "nodes": len(nodes)})
