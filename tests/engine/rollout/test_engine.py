"""The rollout engine with the oracle and a scripted LLM: episodes, retries, timeouts, concurrency."""

import asyncio
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from toy_world import toy_task, toy_world_factory

from compoworld_assets.engine.lanes import cut_into_lanes, next_job
from compoworld_assets.engine.rollout.engine import run_rollouts
from compoworld_assets.engine.rollout.llm import LLMPolicy, TransientModelError
from compoworld_assets.engine.rollout.policy import OraclePolicy
from compoworld_assets.engine.rollout.verify import verify_trajectory
from compoworld_assets.engine.tasks.plan_exec import execute_plan


def run(tasks, policy_factory, **options):
    return asyncio.run(run_rollouts(tasks, policy_factory, toy_world_factory, **options))


def tool_names(trajectory):
    return [c["function"]["name"] for m in trajectory.messages if m["role"] == "assistant"
            for c in m.get("tool_calls", [])]


@pytest.mark.parametrize("mode", ["gateway", "direct"])
def test_oracle_reproduces_the_gold_plan(mode):
    task = toy_task()
    [trajectory] = run([task], OraclePolicy, mode=mode)
    gold_calls, gold_state, gold_answer = execute_plan(task, toy_world_factory(task))
    assert trajectory.finish_reason == "submitted" and trajectory.discover_mode == mode
    assert trajectory.calls == gold_calls
    assert trajectory.final_answer == gold_answer and trajectory.final_state_hash == gold_state.content_hash()
    assert trajectory.messages[0]["role"] == "system" and trajectory.messages[1]["role"] == "user"
    assert trajectory.meta["environment"]["crm"]["module_hash"]
    verified = verify_trajectory(task, trajectory, toy_world_factory)
    assert verified.passed and verified.rubric_score == 1.0


def test_gateway_oracle_discovers_before_calling():
    [trajectory] = run([toy_task()], OraclePolicy, mode="gateway")
    assert tool_names(trajectory) == ["list_services", "list_tools", "describe_tool", "call_tool", "list_tools",
                                      "describe_tool", "call_tool", "submit_answer"]
    for message in trajectory.messages[2:]:
        assert message["role"] in {"assistant", "tool"}
        if message["role"] == "tool":
            assert json.loads(message["content"])["success"] is True


def test_direct_oracle_calls_the_tools_by_qualified_name():
    [trajectory] = run([toy_task()], OraclePolicy, mode="direct")
    assert tool_names(trajectory) == ["crm_search_contacts", "helpdesk_open_ticket", "submit_answer"]


def test_rollouts_come_back_in_order_with_their_own_worlds():
    tasks = [toy_task(f"toy-{i}") for i in range(6)]
    trajectories = run(tasks, OraclePolicy, mode="direct", rollouts_per_task=2, concurrency=4)
    assert [(t.task_id, t.rollout_idx) for t in trajectories] == [(f"toy-{i}", k) for i in range(6) for k in (0, 1)]
    # every episode starts from the same initial world, so every one creates the same ticket id
    assert len({t.final_answer["ticket_id"] for t in trajectories}) == 1
    assert len({t.final_state_hash for t in trajectories}) == 1


class ScriptedModel:
    """A completion function that replays scripted replies (exceptions are raised) and logs requests."""

    def __init__(self, replies, delay_s=0.0):
        self.replies = list(replies)
        self.requests = []
        self.delay_s = delay_s

    async def __call__(self, **request):
        self.requests.append(request)
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        reply = self.replies.pop(0)
        if isinstance(reply, BaseException):
            raise reply
        return {"choices": [{"message": reply}]}


def call(name, arguments, call_id):
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}]}


def test_llm_policy_retries_a_transient_error_and_parses_content_tool_calls():
    model = ScriptedModel([
        TransientModelError("503 upstream busy"),
        call("crm_search_contacts", {"query": "Zoe Kowalski"}, "c1"),
        {"role": "assistant", "content": '<tool_call>{"name": "submit_answer", "arguments": '
                                         '{"answer": {"ticket_id": "none"}}}</tool_call>'},
    ])
    [trajectory] = run([toy_task()], lambda task, mode: LLMPolicy("scripted/model", completion_fn=model),
                       mode="direct", retry_backoff_s=0.0)
    assert trajectory.finish_reason == "submitted" and trajectory.policy == "llm:scripted/model"
    assert trajectory.final_answer == {"ticket_id": "none"}
    assert [c.tool for c in trajectory.calls] == ["search_contacts"]
    assert len(trajectory.meta["retries"]) == 1 and "503" in trajectory.meta["retries"][0]["error"]
    assert len(model.requests) == 3
    assert model.requests[0]["model"] == "scripted/model" and model.requests[0]["tools"][-1]["function"]["name"] \
        == "submit_answer"
    assert [m["role"] for m in model.requests[2]["messages"]] == ["system", "user", "assistant", "tool"]


def test_llm_policy_gives_up_on_a_permanent_error():
    model = ScriptedModel([ValueError("bad request")])
    [trajectory] = run([toy_task()], lambda task, mode: LLMPolicy("m", completion_fn=model), retry_backoff_s=0.0)
    assert trajectory.finish_reason == "model_error" and "bad request" in trajectory.meta["model_error"]["error"]
    assert trajectory.meta["retries"] == []


def test_retries_are_bounded():
    model = ScriptedModel([TransientModelError("busy")] * 3)
    [trajectory] = run([toy_task()], lambda task, mode: LLMPolicy("m", completion_fn=model), max_retries=2,
                       retry_backoff_s=0.0)
    assert trajectory.finish_reason == "model_error" and len(trajectory.meta["retries"]) == 2


def test_episode_timeout_keeps_what_happened_so_far():
    model = ScriptedModel([call("list_services", {}, "c1"), call("list_services", {}, "c2")], delay_s=0.0)
    slow = ScriptedModel([], delay_s=5.0)

    def factory(task, mode):
        policy = LLMPolicy("m", completion_fn=model)
        policy.completion_fn = lambda **r: (model if model.replies else slow)(**r)
        return policy

    [trajectory] = run([toy_task()], factory, episode_timeout_s=0.5)
    assert trajectory.finish_reason == "timeout"
    assert tool_names(trajectory) == ["list_services", "list_services"]
    assert trajectory.final_state_hash == toy_task().initial_state.content_hash()


def test_a_plain_text_reply_ends_the_episode_without_an_answer():
    model = ScriptedModel([{"role": "assistant", "content": "I cannot help with that."}])
    [trajectory] = run([toy_task()], lambda task, mode: LLMPolicy("m", completion_fn=model))
    assert trajectory.finish_reason == "stop" and trajectory.final_answer == {}
    assert trajectory.messages[-1] == {"role": "assistant", "content": "I cannot help with that."}


def test_max_steps_stops_a_looping_policy():
    model = ScriptedModel([call("list_services", {}, f"c{i}") for i in range(5)])
    [trajectory] = run([toy_task()], lambda task, mode: LLMPolicy("m", completion_fn=model), max_steps=3)
    assert trajectory.finish_reason == "max_steps" and len(tool_names(trajectory)) == 3


def test_episodes_run_in_the_order_given_and_come_back_in_task_order_as_what_keep_makes():
    tasks = [toy_task(f"toy-{k}") for k in range(3)]
    started = []

    def policy(task, mode):
        started.append(task.task_id)
        return OraclePolicy(task, mode)

    kept = run(tasks, policy, order=[2, 0, 1], rollouts_per_task=2, concurrency=1,
               keep=lambda trajectory: (trajectory.task_id, trajectory.rollout_idx))
    assert started == ["toy-2", "toy-2", "toy-0", "toy-0", "toy-1", "toy-1"]
    assert kept == [("toy-0", 0), ("toy-0", 1), ("toy-1", 0), ("toy-1", 1), ("toy-2", 0), ("toy-2", 1)]
    with pytest.raises(ValueError, match="every task once"):
        run(tasks, OraclePolicy, order=[0, 1])


@given(st.integers(0, 40), st.integers(1, 5), st.lists(st.integers(0, 4), max_size=80))
def test_lanes_run_consecutive_episodes_and_every_episode_once(n_jobs, count, turns):
    """Each lane takes its own run of consecutive episodes in order, then the tail of the longest other lane,
    whatever order the lanes ask in; no episode runs twice or is left out, and no lane stops while one has work."""
    jobs = [(i, 0) for i in range(n_jobs)]
    lanes = cut_into_lanes(jobs, count)
    cut = [list(lane) for lane in lanes]
    assert [job for lane in cut for job in lane] == jobs
    taken: list[list[tuple[int, int]]] = [[] for _ in lanes]
    for who in [t % count for t in turns] + [n % count for n in range(n_jobs * count + count)]:
        job = next_job(lanes, lanes[who])
        if job is None:
            assert not any(lanes), "a lane gave up while another still had episodes"
            continue
        taken[who].append(job)
    assert sorted(job for run in taken for job in run) == jobs
    for lane, run in zip(cut, taken, strict=True):
        own = [job for job in run if job in lane]
        assert run[:len(own)] == own == lane[:len(own)], "a lane runs its own episodes first, in order"
