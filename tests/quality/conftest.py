"""Small well-formed frames, one per pipeline table, built on the real schemas."""

import json

import polars as pl
import pytest

from compoworld_assets.engine import tables, task_tables
from compoworld_assets.engine.exports import SAMPLE_FORMAT
from compoworld_assets.engine.tasks.graph import EDGE_SCHEMA, NODE_SCHEMA

SFT_SCHEMA = {"trajectory_id": pl.String, "task_id": pl.String, "round": pl.String, "domain": pl.String,
              "sample_json": pl.String}
RL_SCHEMA = {"task_id": pl.String, "round": pl.String, "domain": pl.String, "n_criteria": pl.Int64,
             "task_hash": pl.String}


def _frame(rows: list[dict], schema: dict) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=schema)


def service_specs() -> pl.DataFrame:
    return _frame([{
        "service_id": sid, "name": sid.title(), "domain": "business", "description": "d", "version": "1",
        "source_kind": "builtin", "source_location": "builtin", "n_entities": 1, "n_tools": 4,
        "spec_hash": f"h{sid}", "spec_json": json.dumps({"id": sid}),
    } for sid in ("crm", "mail", "orders")], tables.SPEC_SCHEMA)


def quarantined_specs() -> pl.DataFrame:
    return _frame([{"quarantine_id": f"q{i}", "source_kind": "openai", "location": f"specs/x.json#/{i}",
                    "reason": "tool has no name", "fragment": "{}"} for i in range(2)], tables.QUARANTINE_SCHEMA)


def services() -> pl.DataFrame:
    return _frame([{
        "service_id": sid, "version": "1", "spec_hash": f"h{sid}", "synthesizer": "template",
        "synthesizer_version": "1", "module_hash": f"m{sid}", "module_source": "def handle(): ...", "rounds": 1,
        "n_tools": 4, "n_verified": 4 - wm, "n_world_model": wm, "seed_state_hash": "s",
        "seed_state_json": "{}", "verdicts_json": "[]",
    } for sid, wm in (("crm", 0), ("mail", 1))], tables.SERVICE_SCHEMA)


def quarantined_services() -> pl.DataFrame:
    return _frame([{"service_id": sid, "spec_hash": f"h{sid}", "synthesizer": "offline", "stage": stage,
                    "error_type": error, "message": "it failed"}
                   for sid, stage, error in (("orders", "synthesis", "RuntimeError"),
                                             ("shop", "verification", "DeadlineExceeded"))],
                  tables.QUARANTINED_SERVICE_SCHEMA)


def tool_catalog() -> pl.DataFrame:
    rows = []
    for sid in ("crm", "mail"):
        for tool, effect in (("create_x", "create"), ("get_x", "read"), ("list_x", "list"), ("send", None)):
            world_model = sid == "mail" and tool == "send"
            rows.append({
                "qualified_name": f"{sid}_{tool}", "service_id": sid, "tool_name": tool, "domain": "business",
                "description": "d", "effect": effect, "entity": None if effect is None else "X",
                "input_types": "{}", "output_types": "{}",
                "implementation": "world_model" if world_model else "code",
                "verdict": "simulated" if world_model else "verified", "failed_checks": "[]",
                "module_hash": f"m{sid}", "parameters_json": "{}", "returns_json": "{}",
            })
    return _frame(rows, tables.CATALOG_SCHEMA)


def dependency_graph() -> pl.DataFrame:
    return _frame([
        {"source": "crm_create_x", "target": "mail_send", "source_service": "crm", "target_service": "mail",
         "kind": "type", "type": "email", "parameter": "to", "output_path": "email", "cross_service": True},
        {"source": "crm_create_x", "target": "crm_get_x", "source_service": "crm", "target_service": "crm",
         "kind": "state", "type": "crm.X.id", "parameter": "id", "output_path": "id", "cross_service": False},
    ], EDGE_SCHEMA)


def dependency_graph_nodes() -> pl.DataFrame:
    return _frame([
        {"qualified_name": name, "service_id": name.split("_")[0], "tool": name.split("_", 1)[1],
         "domain": "business", "effect": effect, "entity": "X", "changes_state": effect == "create",
         "code": True, "walkable": True, "in_degree": i, "out_degree": 2 - i}
        for i, (name, effect) in enumerate((("crm_create_x", "create"), ("crm_get_x", "read"), ("mail_send", None)))
    ], NODE_SCHEMA)


def sampled_tasks() -> pl.DataFrame:
    return _frame([{
        "task_id": f"task_{i:04d}", "round": "r000", "split": split, "plan_hash": f"p{i}", "domain": "business",
        "services": json.dumps(["crm", "mail"]), "n_services": 2, "n_steps": 3, "n_write_steps": 1,
        "n_criteria": 3, "capabilities": "[]", "service_combination": "crm+mail", "instruction": "Do it.",
        "task_hash": f"t{i}", "task_json": "{}",
    } for i, split in enumerate(("train", "rl", "heldout"))], task_tables.TASK_SCHEMA)


def quarantined_tasks() -> pl.DataFrame:
    return _frame([{"task_id": f"task_{i:04d}", "round": "r000", "plan_hash": f"p{i}", "stage": stage,
                    "reason": "no draw works"} for i, stage in enumerate(("instantiate", "gate"))],
                  task_tables.QUARANTINED_TASK_SCHEMA)


def rubrics() -> pl.DataFrame:
    return _frame([{
        "criterion_key": f"task_0000/{cid}", "task_id": "task_0000", "round": "r000", "criterion_id": cid,
        "kind": kind, "weight": 1.0, "description": "d", "check_json": json.dumps({"op": "exists"}),
    } for cid, kind in (("step0_created", "state"), ("answer_id", "answer"), ("no_collateral", "negative"))],
        task_tables.RUBRIC_SCHEMA)


def trajectories() -> pl.DataFrame:
    return _frame([{
        "trajectory_id": f"task_{i:04d}/oracle/gateway/0", "task_id": f"task_{i:04d}", "round": "r000",
        "policy": "oracle", "rollout_idx": 0, "discover_mode": "gateway", "finish_reason": "submitted",
        "n_calls": 3, "n_messages": 8, "trajectory_hash": f"h{i}", "trajectory_json": "{}",
    } for i in range(2)], task_tables.TRAJECTORY_SCHEMA)


def verified_trajectories() -> pl.DataFrame:
    return _frame([{
        "trajectory_id": f"task_{i:04d}/oracle/gateway/0", "task_id": f"task_{i:04d}", "round": "r000",
        "split": "train", "replay_identical": True, "rubric_score": score, "passed": score == 1.0,
        "mismatches": "[]", "criteria_json": json.dumps([{"id": "step0_created", "passed": True, "detail": ""}]),
        "sample_json": "{}",
    } for i, score in enumerate((1.0, 0.75))], task_tables.VERIFIED_SCHEMA)


def sft_dataset() -> pl.DataFrame:
    return _frame([{"trajectory_id": f"task_{i:04d}/oracle/gateway/0", "task_id": f"task_{i:04d}", "round": "r000",
                    "domain": "business", "sample_json": json.dumps({"messages": [], "meta": {"format": SAMPLE_FORMAT}})}
                   for i in range(2)], SFT_SCHEMA)


def rl_tasks() -> pl.DataFrame:
    return _frame([{"task_id": f"task_{i:04d}", "round": "r000", "domain": "business", "n_criteria": 4,
                    "task_hash": f"{i:064x}"} for i in range(2)], RL_SCHEMA)


GOOD_FRAMES = {builder.__name__: builder for builder in (
    service_specs, quarantined_specs, services, quarantined_services, tool_catalog, dependency_graph,
    dependency_graph_nodes,
    sampled_tasks, quarantined_tasks, rubrics, trajectories, verified_trajectories, sft_dataset, rl_tasks,
)}


@pytest.fixture
def good_frames() -> dict:
    """Builders of a fresh well-formed frame per table name."""
    return GOOD_FRAMES
