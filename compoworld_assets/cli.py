"""Command line: run the main job on the embedded default, or print what is stored.

``compoworld run`` materializes specs → services (all partitions, one run) → tool catalog on
a local DuckDB file, recording runs in ``$DAGSTER_HOME`` so ``dagster dev`` shows them.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import warnings
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


def _prepare_environment(data_dir: str) -> None:
    warnings.filterwarnings("ignore", category=Warning, module=r"dagster.*")
    warnings.filterwarnings("ignore", message=r".*is currently in beta.*")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ["COMPOWORLD_DATA_DIR"] = data_dir
    home = Path(os.environ.setdefault("DAGSTER_HOME", str(REPO_ROOT / ".dagster_home")))
    home.mkdir(parents=True, exist_ok=True)
    if not (home / "dagster.yaml").exists():
        shutil.copy(REPO_ROOT / "dagster.yaml", home / "dagster.yaml")


def run_pipeline(data_dir: str, seed: int, rows_per_entity: int, n_plans: int, task_round: str,
                 log_level: str = "WARNING") -> dict[str, int]:
    """Materialize the service stages in order; returns the summary counts."""
    import dagster as dg

    from compoworld_assets.definitions import all_asset_checks, all_assets, build_resources

    instance = dg.DagsterInstance.get()
    everything = [*all_assets(), *all_asset_checks()]
    resources = build_resources(data_dir)

    def materialize(selection: list[str] | dg.AssetSelection, **kwargs) -> None:
        if isinstance(selection, list):
            selection = dg.AssetSelection.assets(*selection)
        run_config = {"loggers": {"console": {"config": {"log_level": log_level}}},
                      **kwargs.pop("run_config", {})}
        result = dg.materialize(everything, selection=selection, resources=resources, instance=instance,
                                raise_on_error=True, run_config=run_config, **kwargs)
        failed = [e for e in result.get_asset_check_evaluations() if not e.passed]
        for evaluation in failed:
            print(f"  check failed: {evaluation.asset_key.to_user_string()} {evaluation.check_name}",
                  file=sys.stderr)

    print("1/5 importing specs …", flush=True)
    materialize(["service_specs", "quarantined_specs"])
    partitions = instance.get_dynamic_partitions("service")
    print(f"2/5 synthesizing and verifying {len(partitions)} services …", flush=True)
    materialize(["services"], tags={"dagster/asset_partition_range_start": partitions[0],
                                    "dagster/asset_partition_range_end": partitions[-1]},
                run_config={"ops": {"services": {"config": {"seed": seed, "rows_per_entity": rows_per_entity}}}})
    print("3/5 building the tool catalog and the dependency graph …", flush=True)
    materialize(["tool_catalog", "dependency_graph", "dependency_graph_nodes"])
    if not instance.has_dynamic_partition("task_round", task_round):
        instance.add_dynamic_partitions("task_round", [task_round])
    print(f"4/5 sampling ~{n_plans} task walks (round {task_round}), rolling out the oracle, verifying …", flush=True)
    materialize(["sampled_tasks", "quarantined_tasks", "rubrics", "trajectories", "verified_trajectories"],
                partition_key=task_round,
                run_config={"ops": {"sample_tasks": {"config": {"seed": seed, "n_plans": n_plans}}}})
    print("5/5 writing the SFT and RL datasets and the dbt marts …", flush=True)
    materialize(dg.AssetSelection.assets("sft_dataset", "rl_tasks") | dg.AssetSelection.groups("reporting"))
    return summarize(Path(data_dir) / "compoworld.duckdb")


def summarize(database: Path) -> dict[str, int]:
    import duckdb

    with duckdb.connect(str(database), read_only=True) as con:
        def one(sql: str) -> int:
            return int(con.execute(sql).fetchone()[0] or 0)

        return {
            "specs": one("select count(*) from pipeline.service_specs"),
            "quarantined": one("select count(*) from pipeline.quarantined_specs"),
            "services": one("select count(*) from pipeline.services"),
            "tools": one("select count(*) from pipeline.tool_catalog"),
            "verified_tools": one("select count(*) from pipeline.tool_catalog where verdict = 'verified'"),
            "world_model_tools": one("select count(*) from pipeline.tool_catalog where implementation = 'world_model'"),
            "domains": one("select count(distinct domain) from pipeline.service_specs"),
            "graph_edges": one("select count(*) from pipeline.dependency_graph"),
            "tasks": one("select count(*) from pipeline.sampled_tasks"),
            "quarantined_tasks": one("select count(*) from pipeline.quarantined_tasks"),
            "trajectories": one("select count(*) from pipeline.trajectories"),
            "verified_trajectories": one("select count(*) from pipeline.verified_trajectories where passed"),
            "sft_samples": one("select count(*) from pipeline.sft_dataset"),
            "rl_tasks": one("select count(*) from pipeline.rl_tasks"),
        }


def _print_summary(summary: dict[str, int], data_dir: str) -> None:
    print("\nCompoWorld main job finished:")
    for key, value in summary.items():
        print(f"  {key:>18}: {value}")
    print(f"\nData: {data_dir}/compoworld.duckdb (schema 'pipeline'); modules under {data_dir}/modules/")
    print("UI:   scripts/ui.sh  → http://127.0.0.1:3000 (asset graph, runs, checks)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="compoworld", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run the main job on the embedded default")
    run.add_argument("--data-dir", default="data")
    run.add_argument("--seed", type=int, default=7)
    run.add_argument("--rows-per-entity", type=int, default=5)
    run.add_argument("--tasks", type=int, default=1100, help="task walks to sample (tasks = those passing the gate)")
    run.add_argument("--round", default="r000", help="task generation round (a task_round partition)")
    run.add_argument("--log-level", default="WARNING", help="Dagster console log level (DEBUG for everything)")
    status = sub.add_parser("status", help="print the counts stored in the DuckDB file")
    status.add_argument("--data-dir", default="data")
    args = parser.parse_args(argv)
    _prepare_environment(args.data_dir)
    if args.command == "run":
        summary = run_pipeline(args.data_dir, args.seed, args.rows_per_entity, args.tasks, args.round, args.log_level)
    else:
        summary = summarize(Path(args.data_dir) / "compoworld.duckdb")
    _print_summary(summary, args.data_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
