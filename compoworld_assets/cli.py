"""Command line: run the main job, materialize chosen assets, export datasets, print what is stored.

``compoworld run`` runs the location's jobs in order on a local DuckDB file: ``import_specs_job`` →
``build_services_job`` (all partitions, one run) → ``catalog_and_graph_job`` → ``task_round_job``
(one round) → ``datasets_job``, recording runs in ``$DAGSTER_HOME`` so ``dagster dev`` lists them
under those jobs and can re-execute them (:mod:`compoworld_assets.launch`). ``compoworld
materialize`` runs any assets through the location's asset job, as the UI's Materialize button
does (one partition, or every ``service`` partition); ``compoworld export`` copies the SFT samples,
RL tasks and every kept trajectory out of the DuckDB file as JSON lines; ``compoworld serve-mcp``
serves one stored task's world to an MCP client (:mod:`compoworld_assets.adapters.mcp_world`). Runs are
tagged with the command, its seed and a hash of its run config.

Runs survive being killed: every run is tagged with this process (host, pid, start time); on start
the CLI marks failed the runs whose process is gone and frees the pool slots they held
(``sensors.stale_runs``). SIGINT and SIGTERM stop a run, even one waiting for the ``duckdb`` pool
(exit status 130).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import signal
import sys
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from compoworld_assets.task_volume import MIN_PLANS, PLANS_PER_SERVICE, services_before_growth

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA_DIR = "data"  # also the default of definitions.build_resources and dbt/profiles.yml


def _data_dir_option(data_dir: str) -> str:
    """`` --data-dir DIR`` for a hint to a command, or nothing when ``data_dir`` is the default one."""
    if os.path.normpath(data_dir) == DEFAULT_DATA_DIR:
        return ""
    return f" --data-dir {shlex.quote(data_dir)}"


def _prepare_environment(data_dir: str) -> None:
    warnings.filterwarnings("ignore", category=Warning, module=r"dagster.*")
    warnings.filterwarnings("ignore", message=r".*is currently in beta.*")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ["COMPOWORLD_DATA_DIR"] = data_dir
    home = Path(os.environ.setdefault("DAGSTER_HOME", str(REPO_ROOT / ".dagster_home")))
    home.mkdir(parents=True, exist_ok=True)
    if not (home / "dagster.yaml").exists():
        shutil.copy(REPO_ROOT / "dagster.yaml", home / "dagster.yaml")


def _launcher(log_level: str, command_tags: dict[str, str]) -> tuple[object, Callable[..., None]]:
    """The instance in ``$DAGSTER_HOME`` and ``launch(job_name, **kwargs)`` (:func:`compoworld_assets.launch.launch`)."""
    import dagster as dg

    from compoworld_assets import launch as launching
    from compoworld_assets.interrupts import interruptible_run
    from sensors.stale_runs import launcher_tags, reap_dead_runs

    instance = dg.DagsterInstance.get()
    for reaped in reap_dead_runs(instance):
        print(f"  run {reaped.run_id}: its process (pid {reaped.pid}) is gone; "
              f"{'marked failed, ' if reaped.marked_failed else ''}pool slots freed", file=sys.stderr)

    def launch(job_name: str, **kwargs) -> None:
        run_config = {"loggers": {"console": {"config": {"log_level": log_level}}},
                      **kwargs.pop("run_config", {})}
        tags = {**launcher_tags(), **command_tags, **kwargs.pop("tags", {})}
        with interruptible_run():
            result = launching.launch(instance, job_name, run_config=run_config, tags=tags, **kwargs)
        failed = [e for e in result.get_asset_check_evaluations() if not e.passed]
        for evaluation in failed:
            print(f"  check failed: {evaluation.asset_key.to_user_string()} {evaluation.check_name}",
                  file=sys.stderr)

    return instance, launch


def _services_tags(instance, span: str | None = None) -> dict[str, str]:
    """Tags selecting the registered ``service`` partitions ``FIRST..LAST`` (every one when ``span`` is
    None) as one run, a single-run backfill: runs over disjoint ranges build side by side."""
    partitions = instance.get_dynamic_partitions("service")
    if not partitions:
        raise SystemExit("no service partitions yet: materialize service_specs first")
    first, last = span.split("..", 1) if span else (partitions[0], partitions[-1])
    unknown = [key for key in (first, last) if key not in partitions]
    if unknown:
        raise SystemExit(f"no service partition {unknown[0]!r}: materialize service_specs first")
    if partitions.index(first) > partitions.index(last):
        raise SystemExit(f"empty range {span!r}: {first!r} comes after {last!r} among the registered services")
    return {"dagster/asset_partition_range_start": first, "dagster/asset_partition_range_end": last}


def run_pipeline(data_dir: str, seed: int, rows_per_entity: int, n_plans: int | None, task_round: str,
                 log_level: str = "WARNING") -> dict[str, int]:
    """Materialize every stage in order with a progress bar over the stages; returns the summary counts."""
    from tqdm import tqdm

    from compoworld_assets.launch import command_tags

    options = {"seed": seed, "rows_per_entity": rows_per_entity, "n_plans": n_plans, "round": task_round}
    instance, launch = _launcher(log_level, command_tags("run", options, seed))

    def import_specs() -> None:
        launch("import_specs_job")

    def build_services() -> None:
        launch("build_services_job", tags=_services_tags(instance),
               run_config={"ops": {"services": {"config": {"seed": seed, "rows_per_entity": rows_per_entity}}}})

    def catalog_and_graph() -> None:
        launch("catalog_and_graph_job")

    def task_round_stage() -> None:
        if not instance.has_dynamic_partition("task_round", task_round):
            instance.add_dynamic_partitions("task_round", [task_round])
        walks = {} if n_plans is None else {"n_plans": n_plans}
        launch("task_round_job", partition_key=task_round,
               run_config={"ops": {"sample_tasks": {"config": {"seed": seed, **walks}}}})

    def datasets() -> None:
        launch("datasets_job")

    stages = [
        ("importing specs", import_specs),
        ("synthesizing and verifying services", build_services),
        ("building the tool catalog and the dependency graph", catalog_and_graph),
        (f"task round {task_round}: {n_plans or 'default'} walks, oracle rollouts, verification", task_round_stage),
        ("writing the SFT and RL datasets and the dbt marts", datasets),
    ]
    with tqdm(stages, desc="compoworld run", unit="stage", file=sys.stdout) as bar:
        for description, stage in bar:
            bar.set_postfix_str(description)
            stage()
    return summarize(Path(data_dir) / "compoworld.duckdb")


def _partition_key(partitions_def, partition: str, instance) -> object:
    """``partition`` as the key ``partitions_def`` takes, registering new dynamic keys (not services).

    Multi-partitions take ``a|b`` in dimension order, e.g. ``bfcl|sft`` for ``benchmark_scores``.
    """
    import dagster as dg

    if isinstance(partitions_def, dg.MultiPartitionsDefinition):
        values = partition.split("|")
        dimensions = partitions_def.partitions_defs
        if len(values) != len(dimensions):
            names = "|".join(d.name for d in dimensions)
            raise SystemExit(f"partition {partition!r} needs one value per dimension: {names}")
        for dimension, value in zip(dimensions, values, strict=True):
            _partition_key(dimension.partitions_def, value, instance)
        return dg.MultiPartitionKey({d.name: v for d, v in zip(dimensions, values, strict=True)})
    if isinstance(partitions_def, dg.DynamicPartitionsDefinition):
        if not instance.has_dynamic_partition(partitions_def.name, partition):
            if partitions_def.name == "service":
                raise SystemExit(f"no service partition {partition!r}: materialize service_specs first")
            instance.add_dynamic_partitions(partitions_def.name, [partition])
    elif partition not in partitions_def.get_partition_keys():
        raise SystemExit(f"unknown partition {partition!r}; choose from {partitions_def.get_partition_keys()}")
    return partition


def _run_config(config: str | None) -> dict:
    """Run config from a JSON string or a .json/.yaml file (``{"ops": {"<op>": {"config": {...}}}}``)."""
    if config is None:
        return {}
    path = Path(config)
    if path.is_file():
        import yaml

        return yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    try:
        return json.loads(config)
    except json.JSONDecodeError as exc:
        raise SystemExit(f"--config is neither a file nor JSON: {exc}") from exc


def materialize_assets(data_dir: str, keys: list[str], partition: str | None, log_level: str,
                       config: str | None = None) -> None:
    """Materialize ``keys`` (one partition, or for ``services`` without one: every registered service).

    ``keys`` and ``partition`` have passed :func:`_refuse_selection` (``main`` checks them before
    Dagster is imported)."""
    import dagster as dg
    from tqdm import tqdm

    from compoworld_assets.definitions import defs

    graph = defs().resolve_asset_graph()
    partitions_defs = {graph.get(dg.AssetKey.from_user_string(k)).partitions_def for k in keys} - {None}
    from compoworld_assets.launch import ASSET_JOB, command_tags

    run_config = _run_config(config)
    instance, launch = _launcher(log_level, command_tags("materialize", run_config))
    kwargs: dict = {"run_config": run_config} if run_config else {}
    if partitions_defs:
        [partitions_def] = partitions_defs
        if partition is None or ".." in partition:  # only service partitions may be left out or ranged
            kwargs["tags"] = _services_tags(instance, partition)
        else:
            kwargs["partition_key"] = _partition_key(partitions_def, partition, instance)
    with tqdm(total=1, desc=f"materialize {' '.join(keys)}", unit="run", file=sys.stdout) as bar:
        launch(ASSET_JOB, assets=[dg.AssetKey.from_user_string(k) for k in keys], **kwargs)
        bar.update()


def _refuse_selection(keys: list[str], partition: str | None) -> None:
    from compoworld_assets.asset_index import selection_error

    error = selection_error(keys, partition)
    if error:
        raise SystemExit(error)


def _database(data_dir: str) -> Path:
    """The DuckDB file under ``data_dir``; a clear exit when there is none yet."""
    database = Path(data_dir) / "compoworld.duckdb"
    if not database.is_file():
        raise SystemExit(f"no database at {database}: run `compoworld run{_data_dir_option(data_dir)}` "
                         "(or materialize service_specs) first")
    return database


_EXPORT_BATCH = 256  # ~170 MB of RL task JSON at paper scale; each batch scans the table again
# Each export: its keys in order, and its lines for a batch of keys (``$keys``), filtered on the table scanned so that
# DuckDB reads only their rows. DuckDB's Python client holds a whole result in memory, streamed or not, when its
# rows carry large texts (duckdb-python#617), and a paper-scale round's RL tasks are GBs of JSON (~650 KB a task):
# one query for them all peaked at 4.1 GB; in batches the export of a paper-scale data folder peaks at 1.6 GB.
EXPORTS = {
    "sft.jsonl": (
        "select trajectory_id from pipeline.sft_dataset",
        ("select sample_json from pipeline.sft_dataset where trajectory_id in (select unnest($keys)) "
         "order by trajectory_id"),
    ),
    # the RL split's tasks, as rl_tasks names them (id and content hash), from sampled_tasks
    "rl_tasks.jsonl": (
        "select task_id from pipeline.rl_tasks r join pipeline.sampled_tasks s using (task_id, task_hash)",
        ("select task_json from pipeline.sampled_tasks where task_id in (select unnest($keys)) "
         "and task_hash in (select task_hash from pipeline.rl_tasks where task_id in (select unnest($keys))) "
         "order by task_id"),
    ),
    "samples.jsonl": (
        "select trajectory_id from pipeline.verified_trajectories where passed",
        ("select sample_json from pipeline.verified_trajectories where passed "
         "and trajectory_id in (select unnest($keys)) order by trajectory_id"),
    ),
}


def export(data_dir: str, target: Path) -> dict[str, int]:
    """Write the SFT samples, RL tasks and every kept trajectory as JSON lines under ``target`` (the trajectories
    twice: in our sample format, ``samples.jsonl``, and in the reference system's published rows, ``paper.jsonl``)."""
    import duckdb
    from tqdm import tqdm

    database = _database(data_dir)
    target.mkdir(parents=True, exist_ok=True)
    written = {}
    with duckdb.connect(str(database), read_only=True) as con:
        for name, (keys_sql, lines_sql) in EXPORTS.items():
            written[name] = 0
            with (target / name).open("w", encoding="utf-8") as out, \
                    tqdm(desc=name, unit="row", file=sys.stdout) as progress:
                for line in _lines_by_key(con, keys_sql, lines_sql):
                    out.write(line + "\n")
                    written[name] += 1
                    progress.update(1)
    written["paper.jsonl"] = _paper_rows(target / "samples.jsonl", target / "paper.jsonl")
    return written


def export_hf(data_dir: str, target: Path, push_to: str | None = None) -> dict[str, int]:
    """The SFT samples and the RL and held-out tasks as a Hugging Face ``DatasetDict`` saved under ``target`` with its
    card (:mod:`compoworld_assets.adapters.hf_datasets`; the splits are held in memory while they are written)."""
    import duckdb

    from compoworld_assets.adapters import hf_datasets

    database = _database(data_dir)
    with duckdb.connect(str(database), read_only=True) as con:
        sft = [json.loads(text) for (text,) in con.execute(
            "select sample_json from pipeline.sft_dataset order by trajectory_id").fetchall()]
        rl = [hf_datasets.task_row(*row) for row in con.execute(
            "select s.task_json, s.task_hash, s.round from pipeline.rl_tasks r join pipeline.sampled_tasks s "
            "using (task_id, task_hash) order by task_id").fetchall()]
        heldout = [hf_datasets.task_row(*row) for row in con.execute(
            "select task_json, task_hash, round from pipeline.sampled_tasks where split = 'heldout' "
            "order by task_id").fetchall()]
    datasets = hf_datasets.dataset_dict(sft, rl, heldout)
    written = hf_datasets.save(datasets, target, str(database))
    if push_to:
        hf_datasets.push(datasets, push_to, str(database))
    return written


def _paper_rows(samples: Path, rows: Path) -> int:
    """The kept trajectories again, in the reference system's published row shape (:mod:`.engine.paper_rows`)."""
    from compoworld_assets.engine.paper_rows import paper_row

    count = 0
    with samples.open(encoding="utf-8") as source, rows.open("w", encoding="utf-8") as out:
        for line in source:
            out.write(json.dumps(paper_row(json.loads(line)), ensure_ascii=False) + "\n")
            count += 1
    return count


def _lines_by_key(con: Any, keys_sql: str, lines_sql: str) -> Iterator[str]:
    """The lines of an export in key order: its distinct keys first, then the lines of :data:`_EXPORT_BATCH` keys
    per query, so that no result holds more than a batch of lines."""
    keys = [key for (key,) in con.execute(f"select distinct * from ({keys_sql}) order by 1").fetchall()]
    for start in range(0, len(keys), _EXPORT_BATCH):
        yield from (line for (line,) in con.execute(lines_sql, {"keys": keys[start:start + _EXPORT_BATCH]}).fetchall())


def serve_mcp(data_dir: str, task_id: str, mode: str, transport: str, port: int) -> int:
    """Serve the world of one stored task over MCP until the client goes (stdio) or the process is stopped (HTTP)."""
    import anyio

    from compoworld_assets.adapters.mcp_world import world_server
    from compoworld_assets.adapters.stored import load_stored_world

    _database(data_dir)
    try:
        stored = load_stored_world(data_dir, [task_id])
    except KeyError as missing:
        raise SystemExit(str(missing).strip("'\"")) from None
    server = world_server(stored.tasks[task_id], stored.factory, mode)  # type: ignore[arg-type]
    try:
        if transport == "http":
            import uvicorn

            uvicorn.run(server.streamable_http_app(), host="127.0.0.1", port=port, log_level="warning")
        else:
            from mcp.server.stdio import stdio_server

            async def run_stdio() -> None:
                async with stdio_server() as (read, write):
                    await server.run(read, write, server.create_initialization_options())

            anyio.run(run_stdio)
    finally:
        stored.close()
    return 0


def summarize(database: Path) -> dict[str, int]:
    """Counts per stage; a table not materialized yet counts 0."""
    import duckdb

    with duckdb.connect(str(database), read_only=True) as con:
        def one(sql: str) -> int:
            try:
                return int(con.execute(sql).fetchone()[0] or 0)
            except duckdb.CatalogException:
                return 0

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


def _print_summary(summary: dict[str, int], data_dir: str, title: str) -> None:
    print(f"\n{title}:")
    for key, value in summary.items():
        print(f"  {key:>18}: {value}")
    print(f"\nData: {data_dir}/compoworld.duckdb (schema 'pipeline'; the partitioned tables are views of the Delta "
          f"Lake tables under {data_dir}/tables/); modules under {data_dir}/modules/")
    print(f"UI:   scripts/ui.sh{_data_dir_option(data_dir)}  → http://127.0.0.1:3000 (asset graph, runs, checks)")


def build_parser() -> argparse.ArgumentParser:
    """The command line's verbs and options (the docs test checks the docs against it)."""
    parser = argparse.ArgumentParser(prog="compoworld", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run the main job on the embedded default")
    run.add_argument("--seed", type=int, default=7,
                     help="seed of the services' seeded states and verification cases, and of the task round's "
                          "sampling (each round draws with a seed derived from this and its name); default: %(default)s")
    run.add_argument("--rows-per-entity", type=int, default=5,
                     help="rows seeded into each entity table of every service (entities whose spec brings its "
                          "own seed records hold exactly those); default: %(default)s")
    run.add_argument("--tasks", type=int, default=None,
                     help=f"task walks to sample (tasks = those passing the gate); default: {MIN_PLANS:,}, or "
                          f"{PLANS_PER_SERVICE:g} per service when the library has more than "
                          f"{services_before_growth()} services")
    run.add_argument("--round", default="r000",
                     help="task generation round (a task_round partition, added when new); default: %(default)s")
    materialize = sub.add_parser("materialize", help="materialize assets (with their checks)")
    materialize.add_argument("assets", nargs="+", help="asset keys, e.g. services or marts/catalog_by_domain")
    materialize.add_argument("--partition", help=("a service id, a task round, or benchmark|model for "
                                                   "benchmark_scores; services also take FIRST..LAST (registered "
                                                   "order) and default to all"))
    materialize.add_argument("--config", help="run config: JSON, or a .json/.yaml file")
    for command in (run, materialize):
        command.add_argument("--log-level", default="WARNING",
                             help="Dagster console log level (DEBUG for all); default: %(default)s")
    exporter = sub.add_parser("export", help="write sft.jsonl, rl_tasks.jsonl, samples.jsonl and paper.jsonl to a folder")
    exporter.add_argument("target", type=Path, help="folder to write the files into (created when missing)")
    exporter.add_argument("--format", choices=("jsonl", "hf"), default="jsonl",
                          help="jsonl: sft.jsonl, rl_tasks.jsonl, samples.jsonl and paper.jsonl; hf: a Hugging Face "
                               "DatasetDict (sft, rl, heldout) with its card; default: %(default)s")
    exporter.add_argument("--push-to-hub", metavar="REPO", help="with --format hf, also upload it (HF_TOKEN)")
    mcp = sub.add_parser("serve-mcp", help="serve one stored task's world over the Model Context Protocol")
    mcp.add_argument("--task", required=True, help="a task id of sampled_tasks")
    mcp.add_argument("--mode", choices=("gateway", "direct"), default="gateway",
                     help="gateway: the four discovery tools; direct: the services' own tools; default: %(default)s")
    mcp.add_argument("--transport", choices=("stdio", "http"), default="stdio",
                     help="stdio (an MCP client starts this command) or streamable HTTP on --port; "
                          "default: %(default)s")
    mcp.add_argument("--port", type=int, default=8765,
                     help="port on 127.0.0.1 for --transport http (unused with stdio); default: %(default)s")
    sub.add_parser("status", help="print the counts stored in the DuckDB file")
    sub.add_parser("assets", help="list the assets `materialize` takes and how each is partitioned")
    for name, command in sub.choices.items():
        command.add_argument("--data-dir", default=DEFAULT_DATA_DIR, help=(
            "unused: `assets` reads no data" if name == "assets" else
            "data folder: the DuckDB file compoworld.duckdb, the Delta Lake tables under tables/ and the "
            "synthesized modules under modules/; default: %(default)s (relative to the current directory)"))
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    # Commands that need no Dagster run, and refusals, come before Dagster is imported (seconds).
    if args.command in ("assets", "status", "export"):
        return _command(args)
    if args.command == "serve-mcp":
        return serve_mcp(args.data_dir, args.task, args.mode, args.transport, args.port)
    if args.command == "materialize":
        _refuse_selection(args.assets, args.partition)
    _prepare_environment(args.data_dir)
    from dagster import DagsterExecutionInterruptedError

    # SIGTERM like Ctrl-C (KeyboardInterrupt), so a run ends through Dagster's interrupt handling.
    previous = signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        return _command(args)
    except (KeyboardInterrupt, DagsterExecutionInterruptedError):
        print("\ninterrupted; a run in progress was marked failed", file=sys.stderr)
        return 130
    finally:
        signal.signal(signal.SIGTERM, previous)


def _command(args: argparse.Namespace) -> int:
    if args.command == "materialize":
        materialize_assets(args.data_dir, args.assets, args.partition, args.log_level, args.config)
        return 0
    if args.command == "export":
        written = (export_hf(args.data_dir, args.target, args.push_to_hub) if args.format == "hf"
                   else export(args.data_dir, args.target))
        for name, count in written.items():
            print(f"  {count:>6} rows → {args.target / name}")
        return 0
    if args.command == "assets":
        from compoworld_assets.asset_index import ASSET_PARTITIONS

        for key, partitions in ASSET_PARTITIONS.items():
            print(f"  {key:<38} {'partitioned by ' + partitions if partitions else ''}")
        return 0
    if args.command == "run":
        summary = run_pipeline(args.data_dir, args.seed, args.rows_per_entity, args.tasks, args.round, args.log_level)
        _print_summary(summary, args.data_dir, "CompoWorld main job finished")
    else:
        _print_summary(summarize(_database(args.data_dir)), args.data_dir, "CompoWorld tables now")
    return 0


if __name__ == "__main__":
    sys.exit(main())
