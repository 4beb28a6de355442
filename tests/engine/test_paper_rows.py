"""The reference system's published rows: services rebuilt from an episode's replies, rows read and written back,
and our own samples written in that shape and read back by the same reader. The row here is made up in the
published shape (gateway meta-tools, object arguments, unwrapped meta-tool replies, integer error codes)."""

import asyncio
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "rollout"))

from toy_world import toy_task, toy_world_factory

from compoworld_assets.engine.exports import sample_record
from compoworld_assets.engine.paper_rows import (
    PAPER_META,
    RowError,
    paper_row,
    row_from_trajectory,
    trajectory_from_row,
)
from compoworld_assets.engine.rollout.engine import run_rollouts
from compoworld_assets.engine.rollout.policy import OraclePolicy
from compoworld_assets.engine.rollout.verify import verify_trajectory
from compoworld_assets.engine.runtime.sandbox import trusted_executor
from compoworld_assets.engine.service_build import build_service
from compoworld_assets.engine.specs.importers import import_document, import_spec_file
from compoworld_assets.engine.synthesis.offline import OfflineSynthesizer
from compoworld_assets.engine.world_model.offline import OfflineWorldModel

META_TOOLS = [{"type": "function", "function": {"name": name, "description": f"{name} meta-tool.",
                                                "parameters": {"type": "object", "properties": {}}}}
              for name in ("list_services", "list_tools", "describe_tool", "call_tool")]


def _call(call_id, name, arguments):
    return {"role": "assistant", "content": "", "reasoning_content": f"Calling {name}.",
            "tool_calls": [{"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}]}


def _reply(call_id, name, content):
    return {"role": "tool", "tool_call_id": call_id, "name": name, "content": json.dumps(content)}


def published_row():
    invoice = {"id": "inv-7", "customer_email": "ana.lima@example.com", "amount_due": 420.0, "status": "open"}
    return {
        "tools": META_TOOLS,
        "meta": {"task_id": 17, "src": "output/run-a", "rollout_idx": 2, "rubric_score": 1.0, "score": 1.0,
                 "net_score": 1.0, "n_tool_calls": 6, "n_real_tool_calls": 2, "n_steps": 6,
                 "discover_mode": "gateway", "finish_reason": "stop", "services": ["ledgerly", "notifyhub"],
                 "domain": "finance-ops", "capabilities": ["sequential-dependency"]},
        "source": "Example/ReAct-Gateway",
        "messages": [
            {"role": "system", "content": "Today's date is 2026-01-15."},
            {"role": "user", "content": "Remind Ana Lima about invoice inv-7 and tell me what she owes."},
            _call("c1", "list_services", {}),
            _reply("c1", "list_services", {"services": ["ledgerly", "notifyhub", "weatherly"]}),
            _call("c2", "list_tools", {"service": "ledgerly"}),
            _reply("c2", "list_tools", {"service": "ledgerly", "tools": [
                {"name": "ledgerly_get_invoice", "description": "Get one invoice by its id."},
                {"name": "ledgerly_list_invoices", "description": "List invoices."}]}),
            _call("c3", "list_tools", {"service": "notifyhub"}),
            _reply("c3", "list_tools", {"service": "notifyhub", "tools": [
                {"name": "send_reminder", "description": "Send a payment reminder by email."}]}),
            _call("c4", "describe_tool", {"tool": "ledgerly_get_invoice"}),
            _reply("c4", "describe_tool", {"name": "ledgerly_get_invoice", "description": "Get one invoice by its id.",
                                           "parameters": {"type": "object", "properties": {
                                               "invoice_id": {"type": "string", "description": "Invoice id."}},
                                               "required": ["invoice_id"]}}),
            _call("c5", "call_tool", {"tool_name": "ledgerly_get_invoice", "arguments": {"invoice_id": "inv-7"}}),
            _reply("c5", "call_tool", {"success": True, "data": invoice}),
            _call("c6", "call_tool", {"tool_name": "send_reminder", "arguments": {"to": "ana.lima@example.com"}}),
            _reply("c6", "call_tool", {"success": False, "error": {"code": 400, "message": "body is required"}}),
            {"role": "assistant", "content": "Reminder attempted; Ana owes 420.00.", "reasoning_content": "Done."},
        ],
    }


def test_a_file_of_rows_becomes_the_services_its_replies_show(tmp_path):
    path = tmp_path / "episodes.jsonl"
    path.write_text(json.dumps(published_row()) + "\n" + json.dumps({"tools": [], "messages": []}) + "\n")
    result = import_spec_file(path)
    specs = {s.id: s for s in result.specs}
    assert sorted(specs) == ["ledgerly", "notifyhub"]  # weatherly was listed but never opened: nothing to build
    get_invoice = specs["ledgerly"].tool("get_invoice")
    assert get_invoice.parameters["required"] == ["invoice_id"]
    assert get_invoice.returns["properties"]["amount_due"]["type"] == "number"  # inferred from the observed result
    assert specs["notifyhub"].tool("send_reminder").description == "Send a payment reminder by email."
    assert specs["ledgerly"].domain == "finance-ops"
    [rejected] = result.quarantined
    assert rejected.location.endswith("#row=2") and "four meta-tools" in rejected.reason
    for spec in specs.values():  # the pipeline can build each one
        build = build_service(spec, OfflineSynthesizer(), trusted_executor, OfflineWorldModel(), seed=3)
        assert {v.tool for v in build.verdicts} == {t.name for t in spec.tools}


def test_a_row_read_as_a_trajectory_and_written_back_is_the_same_row():
    row = published_row()
    specs = {s.id: s for s in import_document([row], location="episodes.jsonl").specs}
    trajectory = trajectory_from_row(row, specs)
    assert [(c.service_id, c.tool, c.arguments) for c in trajectory.calls] == [
        ("ledgerly", "get_invoice", {"invoice_id": "inv-7"}), ("notifyhub", "send_reminder", {"to": "ana.lima@example.com"})]
    assert trajectory.calls[1].result["error"]["code"] == 400
    assert (trajectory.task_id, trajectory.policy, trajectory.rollout_idx) == ("17", "Example/ReAct-Gateway", 2)
    assert json.dumps(row_from_trajectory(trajectory), sort_keys=True) == json.dumps(row, sort_keys=True)
    with pytest.raises(RowError, match="not a tool of the rebuilt services"):
        trajectory_from_row(row, {})


@pytest.fixture(scope="module")
def sample():
    task = toy_task()
    [trajectory] = asyncio.run(run_rollouts([task], OraclePolicy, toy_world_factory, mode="gateway"))
    return sample_record(task, verify_trajectory(task, trajectory, toy_world_factory))


def test_our_samples_are_written_as_published_rows_and_read_back(sample):
    row = paper_row(sample)
    assert list(row["meta"]) == list(PAPER_META) and row["source"] == "compoworld/oracle"
    assert row["meta"]["services"] == ["crm", "helpdesk"] and row["meta"]["net_score"] == 1.0
    calls = [c for m in row["messages"] for c in m.get("tool_calls") or []]
    assert calls and all(isinstance(c["function"]["arguments"], dict) for c in calls)
    listing = next(m for m in row["messages"] if m.get("name") == "list_services")
    assert json.loads(listing["content"])["services"]
    specs = {s.id: s for s in import_document([row], location="ours.jsonl").specs}
    assert {"crm", "helpdesk"} <= set(specs)
    trajectory = trajectory_from_row(row, specs)
    assert [(c.service_id, c.tool) for c in trajectory.calls] == [
        (c["service_id"], c["tool"]) for c in sample["meta"]["calls"]]
    assert row_from_trajectory(trajectory) == row
