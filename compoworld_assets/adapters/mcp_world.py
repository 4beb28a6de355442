"""One task's world over the Model Context Protocol (the official ``mcp`` SDK), for any MCP client.

The server plays one episode of the task at a time on a fresh world (:class:`ToolEnvironment`): ``tools/list`` shows
the episode's tools (gateway mode: the four discovery tools; direct mode: the services' own tools, each with its
parameter schema) plus ``submit_answer``, ``score_episode`` and ``reset_episode``; ``tools/call`` runs one call as one assistant turn
of the episode and answers with the usual envelope (as text and as structured content; ``isError`` when it
failed). The prompt ``task`` holds the system and user messages an agent is given. ``score_episode`` evaluates
the task's rubric on the world as it is now and the answer submitted so far: criteria, rubric score and full
success; ``reset_episode`` starts over on a fresh world. Calls are run in order, in a worker thread (the services
are sandboxed processes).
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server

from compoworld_assets.engine.agents.interface import DiscoverMode
from compoworld_assets.engine.agents.world import WorldFactory
from compoworld_assets.engine.rollout.environment import ToolEnvironment
from compoworld_assets.engine.tasks.model import Task
from compoworld_assets.engine.tasks.rubrics import rubric_score

SCORE_TOOL = "score_episode"
RESET_TOOL = "reset_episode"
UNBOUNDED_TURNS = 10_000  # an MCP client decides when it is done; the episode does not end it


class EpisodeSession:
    """One episode of ``task`` on a fresh world (created on the server's first request, closed by
    ``reset_episode``; the world goes back with the factory when the process ends)."""

    def __init__(self, task: Task, factory: WorldFactory, mode: DiscoverMode) -> None:
        self.task = task
        self.environment = ToolEnvironment(factory, mode, max_steps=UNBOUNDED_TURNS)
        self.observation = self.environment.reset(task)
        self.calls = 0
        self.lock = anyio.Lock()

    def tools(self) -> list[types.Tool]:
        listed = [types.Tool(name=f["function"]["name"], description=f["function"]["description"],
                             input_schema=f["function"]["parameters"]) for f in self.observation.tools]
        return listed + [
            types.Tool(name=SCORE_TOOL, description=(
                "Score the episode so far: the task's rubric on the world as it is now and the submitted answer."),
                input_schema={"type": "object", "properties": {}}),
            types.Tool(name=RESET_TOOL, description="Start the task again on a fresh world.",
                       input_schema={"type": "object", "properties": {}})]

    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        if name == SCORE_TOOL:
            results = self.environment.score()
            return {"success": True, "data": {
                "rubric_score": rubric_score(self.task, results), "full_success": all(r.passed for r in results),
                "criteria": [r.model_dump() for r in results]}}
        self.calls += 1
        step = self.environment.step({"role": "assistant", "content": "", "tool_calls": [
            {"id": f"mcp_{self.calls}", "type": "function", "function": {"name": name, "arguments": arguments}}]})
        return json.loads(step.messages[0]["content"])

    def close(self) -> None:
        self.environment.close()


def world_server(task: Task, factory: WorldFactory, mode: DiscoverMode = "gateway") -> Server[Any]:
    """An MCP server of ``task``'s world: one episode at a time on a fresh world from ``factory``, started by the
    first request and again by ``reset_episode``. MCP's current protocol keeps no state between requests, so the
    episode is the server's: a stdio server has its one client; run one server per agent for parallel episodes."""
    state: dict[str, EpisodeSession] = {}
    lock = anyio.Lock()

    async def session() -> EpisodeSession:
        async with lock:
            if "episode" not in state:
                state["episode"] = await anyio.to_thread.run_sync(lambda: EpisodeSession(task, factory, mode))
            return state["episode"]

    async def reset() -> dict[str, Any]:
        async with lock:
            old = state.pop("episode", None)
            if old is not None:
                async with old.lock:  # a call still running on the old world finishes first
                    await anyio.to_thread.run_sync(old.close)
        await session()
        return {"success": True, "data": {"reset": True}}

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=(await session()).tools())

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        if params.name == RESET_TOOL:
            envelope = await reset()
        else:
            episode = await session()
            async with episode.lock:
                envelope = await anyio.to_thread.run_sync(episode.call, params.name, dict(params.arguments or {}))
        return types.CallToolResult(content=[types.TextContent(type="text", text=json.dumps(envelope))],
                                    structured_content=envelope, is_error=not envelope.get("success", False))

    async def list_prompts(ctx: Any, params: Any) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=[types.Prompt(name="task", description="The task an agent is given.")])

    async def get_prompt(ctx: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        messages = (await session()).observation.messages
        text = "\n\n".join(m["content"] for m in messages)
        return types.GetPromptResult(messages=[types.PromptMessage(role="user", content=types.TextContent(
            type="text", text=text))])

    return Server(f"compoworld-{task.task_id}", on_list_tools=list_tools, on_call_tool=call_tool,
                  on_list_prompts=list_prompts, on_get_prompt=get_prompt)
