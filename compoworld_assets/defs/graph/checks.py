"""Checks beside the dependency graph."""

import dagster as dg
import polars as pl


@dg.asset_check(asset="dependency_graph", blocking=True,
                additional_ins={"dependency_graph_nodes": dg.AssetIn()},
                description="The graph has cross-service edges and every edge joins two known tools.")
def edges_join_known_tools(dependency_graph: pl.DataFrame,
                           dependency_graph_nodes: pl.DataFrame) -> dg.AssetCheckResult:
    known = set(dependency_graph_nodes["qualified_name"].to_list())
    dangling = dependency_graph.filter(~pl.col("source").is_in(known) | ~pl.col("target").is_in(known))
    cross = int(dependency_graph["cross_service"].sum()) if len(dependency_graph) else 0
    return dg.AssetCheckResult(passed=dangling.is_empty() and cross > 0,
                               metadata={"dangling_edges": len(dangling), "cross_service_edges": cross})


@dg.asset_check(asset="dependency_graph_nodes", description="Node names are unique.")
def node_names_unique(dependency_graph_nodes: pl.DataFrame) -> dg.AssetCheckResult:
    dupes = dependency_graph_nodes["qualified_name"].is_duplicated().sum()
    return dg.AssetCheckResult(passed=dupes == 0, metadata={"duplicates": int(dupes)})
