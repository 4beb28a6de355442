"""Checks beside the dependency graph."""

import dagster as dg
import polars as pl

from compoworld_assets.defs.expectation_checks import expectations_result


@dg.asset_check(pool="duckdb", asset="dependency_graph", blocking=True,
                additional_ins={"dependency_graph_nodes": dg.AssetIn()},
                description="The graph has cross-service edges and every edge joins two known tools.")
def edges_join_known_tools(dependency_graph: pl.DataFrame,
                           dependency_graph_nodes: pl.DataFrame) -> dg.AssetCheckResult:
    known = set(dependency_graph_nodes["qualified_name"].to_list())
    dangling = dependency_graph.filter(~pl.col("source").is_in(known) | ~pl.col("target").is_in(known))
    cross = int(dependency_graph["cross_service"].sum()) if len(dependency_graph) else 0
    return dg.AssetCheckResult(passed=dangling.is_empty() and cross > 0,
                               metadata={"dangling_edges": len(dangling), "cross_service_edges": cross})


@dg.asset_check(pool="duckdb", asset="dependency_graph_nodes", description="Node names are unique.")
def node_names_unique(dependency_graph_nodes: pl.DataFrame) -> dg.AssetCheckResult:
    dupes = dependency_graph_nodes["qualified_name"].is_duplicated().sum()
    return dg.AssetCheckResult(passed=dupes == 0, metadata={"duplicates": int(dupes)})


@dg.asset_check(asset="dependency_graph",
                pool="duckdb",
                description="Great Expectations suite: edge keys, kinds, cross-service flag consistent.")
def dependency_graph_expectations(context: dg.AssetCheckExecutionContext,
                                  dependency_graph: pl.DataFrame) -> dg.AssetCheckResult:
    return expectations_result(context, "dependency_graph", dependency_graph)


@dg.asset_check(asset="dependency_graph_nodes",
                pool="duckdb",
                description="Great Expectations suite: node keys, effects, degrees, world-model share.")
def dependency_graph_nodes_expectations(context: dg.AssetCheckExecutionContext,
                                        dependency_graph_nodes: pl.DataFrame) -> dg.AssetCheckResult:
    return expectations_result(context, "dependency_graph_nodes", dependency_graph_nodes)
