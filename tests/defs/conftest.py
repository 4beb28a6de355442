"""A temporary DuckDB file, Dagster instance and spec drop folder for materialize tests.

Every materialization through the ``pipeline`` fixture is audited (:class:`ReadAudit`): a test fails
when a step reads a pipeline table that its asset or check does not declare as an upstream.
"""

import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import dagster as dg
import duckdb
import pytest

from compoworld_assets.definitions import all_asset_checks, all_assets, build_resources
from resources.storage import SCHEMA

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "specs"


@pytest.fixture(scope="session")
def pipeline_schemas() -> dict[str, dict]:
    """Every table the pipeline stores, with its fixed polars schema."""
    from compoworld_assets.defs.datasets.assets import RL_SCHEMA, SFT_SCHEMA
    from compoworld_assets.defs.evaluation.assets import SCORE_SCHEMA
    from compoworld_assets.defs.training.assets import BASE_MODEL_SCHEMA, CHECKPOINT_SCHEMA
    from compoworld_assets.engine import tables, task_tables
    from compoworld_assets.engine.tasks.graph import EDGE_SCHEMA, NODE_SCHEMA

    return {
        "service_specs": tables.SPEC_SCHEMA, "quarantined_specs": tables.QUARANTINE_SCHEMA,
        "services": tables.SERVICE_SCHEMA, "quarantined_services": tables.QUARANTINED_SERVICE_SCHEMA,
        "tool_catalog": tables.CATALOG_SCHEMA, "dependency_graph": EDGE_SCHEMA, "dependency_graph_nodes": NODE_SCHEMA,
        "sampled_tasks": task_tables.TASK_SCHEMA, "quarantined_tasks": task_tables.QUARANTINED_TASK_SCHEMA,
        "rubrics": task_tables.RUBRIC_SCHEMA, "trajectories": task_tables.TRAJECTORY_SCHEMA,
        "verified_trajectories": task_tables.VERIFIED_SCHEMA, "sft_dataset": SFT_SCHEMA, "rl_tasks": RL_SCHEMA,
        "base_model": BASE_MODEL_SCHEMA, "sft_checkpoint": CHECKPOINT_SCHEMA, "rl_checkpoint": CHECKPOINT_SCHEMA,
        "benchmark_scores": SCORE_SCHEMA,
    }


# A schema-qualified table name, and what a statement does to it when the words before it say so.
_QUALIFIED = re.compile(rf'"?\b{SCHEMA}"?\s*\.\s*"?(\w+)"?', re.IGNORECASE)
_WRITES = re.compile(r"(insert\s+(or\s+\w+\s+)?into|create\s+(or\s+replace\s+)?(table|view)(\s+if\s+not\s+exists)?"
                     r"|delete\s+from|drop\s+(table|view)(\s+if\s+exists)?|update|alter\s+table|truncate)\s*$",
                     re.IGNORECASE)


@dataclass
class _StepLog:
    step: str
    declared: frozenset[str]
    path: Path


@dataclass
class ReadAudit:
    """Which pipeline tables each step's SQL reads, whichever way it reaches DuckDB.

    Every DuckDB connection opened while a step's compute function runs (its own SQL, or the IO
    manager loading a value through ``context.load_asset_value``) logs its statements to a file of
    that step (DuckDB's ``log_query_path``). A table named ``pipeline.<t>`` in a statement, and not
    as the target of a write, is a read of asset ``<t>``; the step may read its own assets and the
    upstreams its asset (or check) declares. Inputs the IO manager loads before the compute function
    starts are declared by construction and not logged.
    """

    folder: Path
    logs: list[_StepLog] = field(default_factory=list)

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        real_connect = duckdb.connect

        def connect(*args, **kwargs):
            connection = real_connect(*args, **kwargs)
            step = _current_step()
            if step is not None:
                path = self.folder / f"{len(self.logs):05d}.sql"
                connection.execute(f"set log_query_path = '{path}'")
                self.logs.append(_StepLog(step[0], step[1], path))
            return connection

        monkeypatch.setattr(duckdb, "connect", connect)

    def reads(self) -> dict[str, set[str]]:
        """Step → the pipeline tables its statements read."""
        found: dict[str, set[str]] = {}
        for log in self.logs:
            sql = log.path.read_text(encoding="utf-8") if log.path.is_file() else ""
            tables = {m.group(1) for m in _QUALIFIED.finditer(sql) if not _WRITES.search(sql[: m.start()][-80:])}
            found.setdefault(log.step, set()).update(tables)
        return found

    def undeclared(self) -> list[tuple[str, str]]:
        declared = {log.step: log.declared for log in self.logs}
        return sorted((step, table) for step, tables in self.reads().items() for table in tables
                      if table not in declared[step])


def _current_step() -> tuple[str, frozenset[str]] | None:
    """(step name, the asset names it may read) of the compute function running now, or None."""
    try:
        context = dg.OpExecutionContext.get()
    except dg.DagsterInvariantViolationError:
        return None
    assets = context.assets_def
    own = set(assets.keys) | {key.asset_key for key in assets.check_keys}
    names = {key.path[-1] for key in (*assets.keys_by_input_name.values(), *own)}
    return str(context.op_handle), frozenset(names)


@pytest.fixture
def read_audit(tmp_path, monkeypatch) -> ReadAudit:
    audit = ReadAudit(tmp_path / "read-audit")
    audit.folder.mkdir()
    audit.install(monkeypatch)
    return audit


@pytest.fixture
def pipeline(tmp_path, monkeypatch, read_audit):
    """Materialize helpers bound to a fresh instance and data directory; every read is audited."""
    spec_dir = tmp_path / "specs"
    spec_dir.mkdir()
    for name in ("bfcl_message_api.json", "malformed_tools.json"):
        shutil.copy(FIXTURES / name, spec_dir / name)
    monkeypatch.setenv("COMPOWORLD_SPEC_DIR", str(spec_dir))
    monkeypatch.setenv("COMPOWORLD_DATA_DIR", str(tmp_path / "data"))
    with dg.instance_for_test() as instance:
        yield Pipeline(instance, build_resources(str(tmp_path / "data")), tmp_path, read_audit)
    assert read_audit.undeclared() == [], "steps read pipeline tables they do not declare (step, table)"


class Pipeline:
    def __init__(self, instance: dg.DagsterInstance, resources: dict, root: Path, audit: ReadAudit):
        self.instance = instance
        self.resources = resources
        self.root = root
        self.audit = audit
        self.database = root / "data" / "compoworld.duckdb"
        self.everything = [*all_assets(), *all_asset_checks()]

    def materialize(self, *keys: str, raise_on_error: bool = True, **kwargs) -> dg.ExecuteInProcessResult:
        return dg.materialize(self.everything, selection=dg.AssetSelection.assets(*keys),
                              resources=self.resources, instance=self.instance,
                              raise_on_error=raise_on_error, **kwargs)

    def query(self, sql: str) -> list[tuple]:
        import duckdb

        with duckdb.connect(str(self.database), read_only=True) as con:
            return con.execute(sql).fetchall()
