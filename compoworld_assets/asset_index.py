"""The materializable assets of the code location and how each is partitioned, without importing Dagster.

The command line checks asset names and ``--partition`` against this before it loads the
definitions (an import of Dagster, dbt and every stage costs seconds), so a typo is rejected at
once, with suggestions. ``tests/defs/test_asset_index.py`` fails when it disagrees with the
definitions, so it cannot drift.
"""

from __future__ import annotations

import difflib

# asset key → the partitions definition's name (``a|b`` for a multi-partition), None when unpartitioned
ASSET_PARTITIONS: dict[str, str | None] = {
    "service_specs": None, "quarantined_specs": None,
    "services": "service",
    "tool_catalog": None, "dependency_graph": None, "dependency_graph_nodes": None,
    "sampled_tasks": "task_round", "quarantined_tasks": "task_round", "rubrics": "task_round",
    "trajectories": "task_round", "verified_trajectories": "task_round",
    "sft_dataset": None, "rl_tasks": None,
    "base_model": None, "sft_checkpoint": None, "rl_checkpoint": None,
    "benchmark_scores": "benchmark|model",
    **{f"staging/stg_{table}": None for table in (
        "benchmark_scores", "dependency_graph", "dependency_graph_nodes", "quarantined_specs", "quarantined_tasks",
        "rl_tasks", "rubrics", "sampled_tasks", "service_specs", "services", "sft_dataset", "tool_catalog",
        "trajectories", "verified_trajectories")},
    **{f"marts/{mart}": None for mart in (
        "catalog_by_domain", "criterion_pass_rates", "graph_edges_by_kind", "graph_service_degrees", "leaderboard",
        "task_difficulty", "verification_funnel")},
}


def selection_error(keys: list[str], partition: str | None) -> str | None:
    """Why ``keys`` with ``partition`` cannot be one run, or None when they can."""
    unknown = [key for key in keys if key not in ASSET_PARTITIONS]
    if unknown:
        hints = []
        for key in unknown:
            close = difflib.get_close_matches(key, ASSET_PARTITIONS, n=3, cutoff=0.5)
            hints.append(f"{key} (did you mean {' or '.join(close)}?)" if close else key)
        return f"unknown asset(s): {', '.join(hints)}; `compoworld assets` lists them"
    kinds = {ASSET_PARTITIONS[key] for key in keys}
    partitioned = kinds - {None}
    if len(kinds) > 1:
        by = ", ".join(f"{key} ({ASSET_PARTITIONS[key] or 'unpartitioned'})" for key in keys)
        return f"these assets are partitioned differently: materialize them separately: {by}"
    if partition is not None and not partitioned:
        return f"{', '.join(keys)} {'is' if len(keys) == 1 else 'are'} not partitioned: drop --partition"
    if partition is None and partitioned and partitioned != {"service"}:
        [name] = partitioned
        return f"{', '.join(keys)} is partitioned by {name}: pass --partition"
    if partition is not None and ".." in partition and partitioned != {"service"}:
        return f"a range FIRST..LAST selects service partitions; {', '.join(keys)} takes one --partition"
    return None
