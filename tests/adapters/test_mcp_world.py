"""A task's world over MCP, driven by the official SDK's own client (in process, and over stdio)."""

import asyncio
import json
import sys
from pathlib import Path

import pytest
from mcp import Client

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engine" / "rollout"))

from toy_world import toy_task, toy_world_factory

from compoworld_assets.adapters.mcp_world import RESET_TOOL, SCORE_TOOL, world_server
from compoworld_assets.engine.rollout.engine import run_rollouts
from compoworld_assets.engine.rollout.policy import OraclePolicy
from compoworld_assets.engine.rollout.verify import verify_trajectory


def _oracle(mode):
    task = toy_task()
    [trajectory] = asyncio.run(run_rollouts([task], OraclePolicy, toy_world_factory, mode=mode))
    return task, trajectory, verify_trajectory(task, trajectory, toy_world_factory)


async def _play(server, calls):
    """List the tools, make ``calls`` (name, arguments) in order, then ask for the score."""
    async with Client(server) as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
        prompt = await client.get_prompt("task")
        answers = [await client.call_tool(name, arguments) for name, arguments in calls]
        score = await client.call_tool(SCORE_TOOL, {})
    return names, prompt, answers, score


@pytest.mark.parametrize("mode", ["gateway", "direct"])
def test_the_oracle_episode_played_through_the_mcp_client_scores_as_our_verification(mode):
    task, trajectory, verified = _oracle(mode)
    calls = [(c["function"]["name"], json.loads(c["function"]["arguments"]) if isinstance(
        c["function"]["arguments"], str) else c["function"]["arguments"])
        for m in trajectory.messages if m.get("role") == "assistant" for c in m.get("tool_calls") or []]
    names, prompt, answers, score = asyncio.run(_play(world_server(task, toy_world_factory, mode), calls))
    assert set(names) >= {c[0] for c in calls} | {SCORE_TOOL}
    if mode == "gateway":
        assert {"list_services", "list_tools", "describe_tool", "call_tool"} <= set(names)
    assert task.instruction.split(".")[0] in prompt.messages[0].content.text
    shown = [m["content"] for m in trajectory.messages if m.get("role") == "tool"]
    assert [a.content[0].text for a in answers] == shown  # the same envelopes the episode showed
    assert not any(a.is_error for a in answers)
    data = score.structured_content["data"]
    assert data["rubric_score"] == verified.rubric_score == 1.0 and data["full_success"]


def test_a_failed_call_is_an_error_result_and_nothing_is_submitted():
    task = toy_task()
    _, _, [answer], score = asyncio.run(_play(world_server(task, toy_world_factory, "direct"),
                                                  [("crm_get_contact", {"contact_id": "con_9999"})]))
    assert answer.is_error and answer.structured_content["error"]["code"] == "not_found"
    assert score.structured_content["data"]["full_success"] is False


def test_a_reset_episode_starts_again_on_a_fresh_world():
    task = toy_task()
    server = world_server(task, toy_world_factory, "direct")
    contact = {"full_name": "Nia Park", "email": "nia.park@acme.example.com", "lifecycle": "lead",
               "created_at": "2026-05-30T09:00:00Z"}

    async def play():
        async with Client(server) as client:
            made = await client.call_tool("crm_create_contact", contact)
            before = await client.call_tool("crm_list_contacts", {"email": contact["email"]})
            await client.call_tool(RESET_TOOL, {})
            after = await client.call_tool("crm_list_contacts", {"email": contact["email"]})
        return made, before, after

    made, before, after = asyncio.run(play())
    assert not made.is_error, made.structured_content
    assert before.structured_content["data"]["count"] == 1 and after.structured_content["data"]["count"] == 0
