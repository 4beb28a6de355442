"""One declarative expectation suite per pipeline table.

Suites are plain data (GX expectation class names and their keyword arguments, each with the
reason it exists) so that they can be listed, documented and tested without importing Great
Expectations; ``expectations.py`` turns them into GX objects. ``critical`` expectations guard
what downstream stages consume; ``warning`` ones watch distributions: they fail a check but do
not block the assets below it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import get_args

import polars as pl

from compoworld_assets.engine.exports import SAMPLE_FORMAT
from compoworld_assets.engine.service_build import Stage
from compoworld_assets.engine.specs.model import Effect
from compoworld_assets.engine.tasks.gate import TaskStage
from compoworld_assets.engine.tasks.model import Split

CRITICAL = "critical"
WARNING = "warning"

EFFECTS = [effect.value for effect in Effect]
SOURCE_KINDS = ["builtin", "openai", "bfcl", "openapi", "mcp", "compoworld"]
SPLITS = list(get_args(Split))
BUILD_FAILURE_STAGES = list(get_args(Stage))
TASK_REJECTION_STAGES = list(get_args(TaskStage))
WORLD_MODEL_SHARE_CEILING = 0.3


@dataclass(frozen=True)
class Expect:
    """One expectation: a GX class name, its keyword arguments, and why it holds."""

    expectation: str
    kwargs: Mapping[str, object]
    why: str
    severity: str = CRITICAL

    @property
    def column(self) -> str | None:
        return self.kwargs.get("column")  # type: ignore[return-value]


@dataclass(frozen=True)
class TableSuite:
    """The expectations over one table; ``derived`` columns are computed before validation.

    ``payloads``: text columns that no expectation reads the content of (a task with its world, a whole
    episode), validated on their byte lengths so that a large table is never copied into pandas whole (the
    column is still required and non-null)."""

    table: str
    key: tuple[str, ...]
    expectations: tuple[Expect, ...]
    derived: Mapping[str, pl.Expr] = field(default_factory=dict)
    payloads: tuple[str, ...] = ()


def _columns_exist(columns: Sequence[str]) -> Expect:
    return Expect("ExpectTableColumnsToMatchSet", {"column_set": sorted(columns), "exact_match": False},
                  "the columns this suite and downstream readers rely on are present")


def _not_null(columns: Sequence[str], why: str) -> tuple[Expect, ...]:
    return tuple(Expect("ExpectColumnValuesToNotBeNull", {"column": c}, why) for c in columns)


def _unique(column: str, why: str) -> Expect:
    return Expect("ExpectColumnValuesToBeUnique", {"column": column}, why)


def _unique_together(columns: Sequence[str], why: str) -> Expect:
    return Expect("ExpectCompoundColumnsToBeUnique", {"column_list": list(columns)}, why)


def _in_set(column: str, values: Sequence[object], why: str) -> Expect:
    return Expect("ExpectColumnValuesToBeInSet", {"column": column, "value_set": list(values)}, why)


def _between(column: str, why: str, min_value: float | None = None, max_value: float | None = None,
             strict_min: bool = False) -> Expect:
    kwargs = {"column": column, "min_value": min_value, "max_value": max_value, "strict_min": strict_min}
    return Expect("ExpectColumnValuesToBeBetween", kwargs, why)


def _at_least(column_a: str, column_b: str, why: str) -> Expect:
    """``column_a >= column_b`` on every row."""
    return Expect("ExpectColumnPairValuesAToBeGreaterThanB",
                  {"column_A": column_a, "column_B": column_b, "or_equal": True}, why)


def _mean_between(column: str, min_value: float | None, max_value: float | None, why: str) -> Expect:
    kwargs = {"column": column, "min_value": min_value, "max_value": max_value}
    return Expect("ExpectColumnMeanToBeBetween", kwargs, why, severity=WARNING)


def _json(column: str, why: str) -> Expect:
    return Expect("ExpectColumnValuesToBeJsonParseable", {"column": column}, why)


def _non_empty(column: str, why: str) -> Expect:
    return Expect("ExpectColumnValueLengthsToBeBetween", {"column": column, "min_value": 1}, why)


def _rows_at_least(n: int, why: str) -> Expect:
    return Expect("ExpectTableRowCountToBeBetween", {"min_value": n}, why)


def _suite(table: str, key: str | tuple[str, ...], required: Sequence[str], why_required: str,
           *expectations: Expect, derived: Mapping[str, pl.Expr] | None = None,
           payloads: tuple[str, ...] = ()) -> TableSuite:
    keys = (key,) if isinstance(key, str) else key
    head = [_columns_exist(required)]
    if len(keys) == 1:
        head.append(_unique(keys[0], f"{keys[0]} is the table's primary key"))
    else:
        head.append(_unique_together(keys, f"({', '.join(keys)}) is the table's primary key"))
    read = {e.column for e in expectations} | set(keys)
    if read & set(payloads):
        raise ValueError(f"{table}: payload columns {sorted(read & set(payloads))} are read by an expectation")
    return TableSuite(table, keys, (*head, *_not_null(required, why_required), *expectations), derived or {},
                      payloads)


SERVICE_SPECS = _suite(
    "service_specs", "service_id",
    ["service_id", "name", "domain", "version", "source_kind", "n_entities", "n_tools", "spec_hash",
     "spec_json"],
    "synthesis rebuilds every service from these columns",
    _rows_at_least(1, "an import that yields no spec would wipe every service downstream"),
    _in_set("source_kind", SOURCE_KINDS, "only the known importers produce specs"),
    _between("n_tools", "a service without tools cannot be synthesized or used in a task", min_value=1),
    _between("n_entities", "entity counts are counts", min_value=0),
    _unique("spec_hash", "two services with one spec hash are the same spec imported twice"),
    _json("spec_json", "synthesis parses spec_json back into a ServiceSpec"),
)

QUARANTINED_SPECS = _suite(
    "quarantined_specs", "quarantine_id", ["quarantine_id", "source_kind", "location", "reason"],
    "a quarantine entry must say where it came from and why",
    _non_empty("reason", "an empty reason cannot be acted on"),
    _non_empty("location", "an empty location cannot be found again"),
)

SERVICES = _suite(
    "services", "service_id",
    ["service_id", "version", "spec_hash", "synthesizer", "module_hash", "module_source", "n_tools",
     "n_verified", "n_world_model", "seed_state_hash", "seed_state_json", "verdicts_json"],
    "runtimes rebuild a service from its module, seed state and verdicts",
    _rows_at_least(1, "an empty build leaves nothing to catalog"),
    _between("n_tools", "a service without tools cannot be used", min_value=1),
    _between("n_verified", "verified counts are counts", min_value=0),
    _between("n_world_model", "world-model counts are counts", min_value=0),
    _at_least("n_tools", "n_verified", "a service cannot verify more tools than it has"),
    _at_least("n_tools", "n_world_model", "a service cannot simulate more tools than it has"),
    _between("rounds", "every module took at least one synthesis round", min_value=1),
    _json("verdicts_json", "the catalog and runtimes parse verdicts_json"),
)

QUARANTINED_SERVICES = _suite(
    "quarantined_services", "service_id", ["service_id", "stage", "error_type", "message", "synthesizer"],
    "a quarantined service must say which build stage failed and how",
    _in_set("stage", BUILD_FAILURE_STAGES, "builds fail at one of these stages (see engine/service_build.py)"),
    _non_empty("error_type", "the exception type tells a time limit from a crash"),
    _non_empty("message", "an empty message cannot be acted on"),
)

TOOL_CATALOG = _suite(
    "tool_catalog", "qualified_name",
    ["qualified_name", "service_id", "tool_name", "domain", "input_types", "output_types", "implementation",
     "verdict", "module_hash", "parameters_json", "returns_json"],
    "agents see tools by these columns",
    _rows_at_least(1, "an empty catalog leaves agents without tools"),
    _unique_together(["service_id", "tool_name"], "a tool name is unique within its service"),
    _in_set("effect", EFFECTS, "effects come from the Effect enum (null: not classified)"),
    _in_set("implementation", ["code", "world_model"], "a tool is either verified code or simulated"),
    _in_set("verdict", ["verified", "failed", "simulated", "unavailable", "unusable"],
            "the five verdicts of tool_verdict"),
    Expect("ExpectColumnPairValuesToBeInSet",
           {"column_A": "implementation", "column_B": "verdict",
            "value_pairs_set": [("code", "verified"), ("code", "failed"), ("world_model", "simulated"),
                                ("world_model", "unavailable"), ("world_model", "unusable")]},
           "code tools are verified or failed; world-model tools are simulated, unavailable or unusable"),
    _json("input_types", "task sampling parses the input types"),
    _json("output_types", "task sampling parses the output types"),
    _mean_between("is_world_model", 0.0, WORLD_MODEL_SHARE_CEILING,
                  f"at most {WORLD_MODEL_SHARE_CEILING:.0%} of tools may fall back to the world model"),
    derived={"is_world_model": (pl.col("implementation") == "world_model").cast(pl.Int64)},
)

DEPENDENCY_GRAPH = _suite(
    "dependency_graph", ("source", "target", "kind", "parameter", "output_path"),
    ["source", "target", "source_service", "target_service", "kind", "type", "parameter", "output_path",
     "cross_service"],
    "task walks follow edges by these columns",
    _in_set("kind", ["type", "state"], "edges are typed data flow or shared state"),
    Expect("ExpectColumnPairValuesToBeEqual", {"column_A": "cross_service", "column_B": "services_differ"},
           "cross_service marks exactly the edges between two services"),
    _mean_between("cross_service_int", 0.01, 1.0, "compositional tasks need cross-service edges"),
    derived={
        "services_differ": pl.col("source_service") != pl.col("target_service"),
        "cross_service_int": pl.col("cross_service").cast(pl.Int64),
    },
)

DEPENDENCY_GRAPH_NODES = _suite(
    "dependency_graph_nodes", "qualified_name",
    ["qualified_name", "service_id", "tool", "domain", "changes_state", "code", "walkable", "in_degree",
     "out_degree"],
    "every node is a catalog tool",
    _in_set("effect", EFFECTS, "effects come from the Effect enum (null: not classified)"),
    _between("in_degree", "degrees are counts", min_value=0),
    _between("out_degree", "degrees are counts", min_value=0),
    _mean_between("is_world_model", 0.0, WORLD_MODEL_SHARE_CEILING,
                  f"at most {WORLD_MODEL_SHARE_CEILING:.0%} of graph nodes run on the world model"),
    derived={"is_world_model": (~pl.col("code")).cast(pl.Int64)},
)

SAMPLED_TASKS = _suite(
    "sampled_tasks", "task_id",
    ["task_id", "round", "split", "plan_hash", "domain", "services", "n_services", "n_steps", "n_write_steps",
     "n_criteria", "service_combination", "instruction", "task_hash", "task_json"],
    "rollouts and datasets read tasks by these columns",
    _rows_at_least(1, "a round without tasks has nothing to roll out"),
    _unique("plan_hash", "one plan sampled twice in a round is a duplicate task"),
    _in_set("split", SPLITS, "the splits of the task model"),
    _between("n_services", "tasks are compositional: at least two services", min_value=2),
    _between("n_steps", "a plan has at least two steps", min_value=2),
    _between("n_write_steps", "write-step counts are counts", min_value=0),
    _between("n_criteria", "a task without rubric criteria cannot be scored", min_value=1),
    _at_least("n_steps", "n_services", "every service in a task is used by a step"),
    _at_least("n_steps", "n_write_steps", "write steps are steps"),
    _non_empty("instruction", "agents act on the instruction"),
    _json("services", "services is a JSON list"),
    _mean_between("n_steps", 2.0, 12.0, "walks take 2-5 steps, workflows 3-11 (docs/architecture.md, Workflows)"),
    payloads=("task_json",),
)

QUARANTINED_TASKS = _suite(
    "quarantined_tasks", ("round", "task_id"), ["task_id", "round", "plan_hash", "stage", "reason"],
    "a quarantined task must say which stage rejected it and why",
    _in_set("stage", TASK_REJECTION_STAGES, "tasks are rejected at one of these stages (see engine/tasks/gate.py)"),
    Expect("ExpectColumnValuesToBeInSet", {"column": "stage", "value_set": ["instantiate", "gate"]},
           "a task lost to an unexpected exception (error) or to a dying worker (worker) is a defect to fix, "
           "not a plan that did not fit", severity=WARNING),
    _non_empty("reason", "an empty reason cannot be acted on"),
)

RUBRICS = _suite(
    "rubrics", "criterion_key",
    ["criterion_key", "task_id", "round", "criterion_id", "kind", "weight", "check_json"],
    "the rubric engine evaluates criteria by these columns",
    _rows_at_least(1, "tasks without criteria cannot be scored"),
    _unique_together(["task_id", "criterion_id"], "a criterion id is unique within its task"),
    _in_set("kind", ["state", "answer", "negative"], "the three criterion kinds of the task model"),
    _between("weight", "a criterion with weight 0 or less cannot be scored", min_value=0.0, strict_min=True),
    _json("check_json", "the rubric engine parses check_json"),
)

TRAJECTORIES = _suite(
    "trajectories", "trajectory_id",
    ["trajectory_id", "task_id", "round", "policy", "rollout_idx", "discover_mode", "finish_reason",
     "n_calls", "n_messages", "trajectory_hash", "trajectory_json"],
    "verification replays trajectories by these columns",
    _rows_at_least(1, "a round without trajectories has nothing to verify"),
    _in_set("discover_mode", ["gateway", "direct"], "the two tool discovery modes"),
    _in_set("finish_reason", ["submitted", "stop", "timeout", "model_error", "max_steps"],
            "the rollout engine's finish reasons"),
    _between("rollout_idx", "rollout indices are counts", min_value=0),
    _between("n_calls", "call counts are counts", min_value=0),
    _between("n_messages", "an episode has at least the instruction", min_value=1),
    _at_least("n_messages", "n_calls", "every tool call is a message"),
    payloads=("trajectory_json",),
)

VERIFIED_TRAJECTORIES = _suite(
    "verified_trajectories", "trajectory_id",
    ["trajectory_id", "task_id", "round", "split", "replay_identical", "rubric_score", "passed", "mismatches",
     "criteria_json", "sample_json"],
    "the datasets keep trajectories by these columns",
    _in_set("split", SPLITS, "the splits of the task model"),
    _between("rubric_score", "a rubric score is a weighted share", min_value=0.0, max_value=1.0),
    Expect("ExpectColumnPairValuesToBeInSet",
           {"column_A": "passed", "column_B": "replay_identical",
            "value_pairs_set": [(True, True), (False, True), (False, False)]},
           "a kept trajectory replayed identically"),
    _json("criteria_json", "criterion pass rates parse criteria_json"),
    _json("mismatches", "mismatches is a JSON list"),
    _mean_between("rubric_score", 0.5, 1.0, "most trajectories should score well on their rubric"),
    payloads=("sample_json",),
)

SFT_DATASET = _suite(
    "sft_dataset", "trajectory_id", ["trajectory_id", "task_id", "round", "domain", "sample_json"],
    "every SFT sample names its trajectory, task and domain",
    _rows_at_least(1, "an empty SFT export is a failed run"),
    _in_set("sample_format", [SAMPLE_FORMAT], "trainers parse sample_json as a sample of this format"),
    derived={"sample_format": pl.col("sample_json").str.json_path_match("$.meta.format").fill_null("")},
    payloads=("sample_json",),
)

RL_TASKS = _suite(
    "rl_tasks", "task_id", ["task_id", "round", "domain", "n_criteria", "task_hash"],
    "every RL task carries its rubric and names its stored task",
    _rows_at_least(1, "an empty RL export is a failed run"),
    _between("n_criteria", "an RL task without criteria has no reward", min_value=1),
    Expect("ExpectColumnValuesToMatchRegex", {"column": "task_hash", "regex": "^[0-9a-f]{64}$"},
           "training reads each task from sampled_tasks by its id and SHA-256 content hash"),
)

SUITES: dict[str, TableSuite] = {s.table: s for s in (
    SERVICE_SPECS, QUARANTINED_SPECS, SERVICES, QUARANTINED_SERVICES, TOOL_CATALOG, DEPENDENCY_GRAPH,
    DEPENDENCY_GRAPH_NODES, SAMPLED_TASKS, QUARANTINED_TASKS, RUBRICS, TRAJECTORIES, VERIFIED_TRAJECTORIES, SFT_DATASET, RL_TASKS,
)}
