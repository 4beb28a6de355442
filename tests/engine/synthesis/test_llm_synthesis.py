"""The LLM synthesizer against a scripted fake model (litellm's ``mock_response``), no network."""

import litellm
import pytest
from toy_service import InProcessExecutor, helpdesk_seed_state

from compoworld_assets.engine.synthesis import prompts
from compoworld_assets.engine.synthesis.llm import LLMSynthesizer, SynthesisError
from compoworld_assets.engine.verification import verify_service

MODEL = "openai/gpt-4o-mini"

ESCALATE = """
def _escalate(state, args):
    problem = _check_arguments(args, {"required": ["ticket_id"], "closed": False,
                                      "parameters": {"ticket_id": {"types": ["string"]}}})
    if problem is not None:
        return _error(INVALID_ARGUMENTS, problem)
    if _lookup(state, "Ticket", args["ticket_id"]) is None:
        return _error(NOT_FOUND, "no such ticket")
    return _ok({"escalated": True})


TOOLS["escalate_ticket"] = _escalate
"""

FORGETFUL_CREATE = """
def _create_without_storing(state, args):
    return _ok({"id": "cus_0003"})


TOOLS["create_customer"] = _create_without_storing
"""


def fenced(source: str) -> str:
    return f"Here is the module.\n```python\n{source}```\nDone."


class ScriptedModel:
    """Answers each completion with the next scripted reply (an exception is raised instead)."""

    def __init__(self, *replies):
        self.replies = list(replies)
        self.calls = []

    def __call__(self, **kwargs):
        self.calls.append(kwargs)
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return litellm.completion(**{**kwargs, "mock_response": reply})


@pytest.fixture
def sleeps():
    return []


def synthesizer(model, sleeps, **options):
    return LLMSynthesizer(
        MODEL,
        executor_factory=InProcessExecutor,
        completion_fn=model,
        seed_state_fn=lambda spec: helpdesk_seed_state(),
        sleep=sleeps.append,
        backoff_s=0.5,
        **options,
    )


def test_failing_checks_are_sent_back_and_the_module_repaired(helpdesk, offline_module, seed_state, sleeps):
    buggy = offline_module.source + FORGETFUL_CREATE
    model = ScriptedModel(
        fenced(buggy), fenced(offline_module.source), fenced(offline_module.source + ESCALATE)
    )
    module = synthesizer(model, sleeps).synthesize(helpdesk)

    assert module.rounds == 3 and module.synthesizer == "llm"
    assert module.source.strip() == (offline_module.source + ESCALATE).strip()
    feedback = model.calls[1]["messages"][-1]["content"]
    assert "create_customer / valid[required].effect" in feedback
    assert "escalate_ticket" in feedback
    assert [line.split(": ")[1] for line in module.log if line.startswith("round")] == [
        "8/10 tools verified",
        "9/10 tools verified",
        "10/10 tools verified",
    ]
    before = verify_service(
        helpdesk, module.model_copy(update={"source": buggy}), InProcessExecutor, seed_state, 0
    )
    after = verify_service(helpdesk, module, InProcessExecutor, seed_state, 0)
    assert before.verdict("create_customer").implementation == "world_model"
    assert after.code_tools == sorted(t.name for t in helpdesk.tools)
    assert model.calls[0]["temperature"] == 0.0


def test_the_best_round_is_kept(helpdesk, offline_module, sleeps):
    model = ScriptedModel(fenced(offline_module.source), fenced(offline_module.source + FORGETFUL_CREATE))
    module = synthesizer(model, sleeps, max_rounds=2).synthesize(helpdesk)
    assert module.source.strip() == offline_module.source.strip()
    assert module.rounds == 2


def test_a_reply_without_code_costs_a_round(helpdesk, offline_module, sleeps):
    model = ScriptedModel("I would rather describe the module in words.", fenced(offline_module.source))
    module = synthesizer(model, sleeps, max_rounds=2).synthesize(helpdesk)
    assert module.log[0] == "round 1: the reply had no python code block"
    assert model.calls[1]["messages"][-1]["content"] == prompts.NO_CODE_PROMPT
    assert module.source.strip() == offline_module.source.strip()


def test_code_that_does_not_compile_costs_a_round(helpdesk, offline_module, sleeps):
    model = ScriptedModel(
        fenced("def handle(state, tool, args:\n    return {}\n"), fenced(offline_module.source)
    )
    module = synthesizer(model, sleeps, max_rounds=2).synthesize(helpdesk)
    assert module.log[0].startswith("round 1: the module does not compile: SyntaxError")
    assert module.rounds == 2


def test_transient_errors_are_retried_with_backoff(helpdesk, offline_module, sleeps):
    model = ScriptedModel(
        litellm.RateLimitError("slow down", "openai", MODEL),
        litellm.APIConnectionError("reset", "openai", MODEL),
        fenced(offline_module.source),
    )
    module = synthesizer(model, sleeps, max_rounds=1).synthesize(helpdesk)
    assert sleeps == [0.5, 1.0]
    assert sum("transient error" in line for line in module.log) == 2
    assert module.rounds == 1 and module.source.strip() == offline_module.source.strip()


def test_permanent_errors_propagate(helpdesk, sleeps):
    model = ScriptedModel(litellm.AuthenticationError("bad key", "openai", MODEL))
    with pytest.raises(litellm.AuthenticationError):
        synthesizer(model, sleeps).synthesize(helpdesk)
    assert sleeps == []


def test_no_usable_round_is_an_error(helpdesk, sleeps):
    model = ScriptedModel("no code", "still no code")
    with pytest.raises(SynthesisError, match="no round produced a loadable module"):
        synthesizer(model, sleeps, max_rounds=2).synthesize(helpdesk)


def test_litellm_mock_response_through_completion_kwargs(helpdesk, offline_module, monkeypatch):
    monkeypatch.setenv("CW_TEST_KEY", "sk-test")
    module = LLMSynthesizer(
        MODEL,
        executor_factory=InProcessExecutor,
        api_key_env="CW_TEST_KEY",
        api_base="http://localhost:9/v1",
        completion_kwargs={"mock_response": fenced(offline_module.source)},
        max_rounds=1,
        seed_state_fn=lambda spec: helpdesk_seed_state(),
    ).synthesize(helpdesk)
    assert module.source.strip() == offline_module.source.strip()
    assert module.synthesizer_version.endswith("+" + MODEL)


def test_missing_key_variable_is_reported(helpdesk, monkeypatch):
    monkeypatch.delenv("CW_ABSENT_KEY", raising=False)
    synth = LLMSynthesizer(MODEL, executor_factory=InProcessExecutor, api_key_env="CW_ABSENT_KEY")
    with pytest.raises(SynthesisError, match="CW_ABSENT_KEY"):
        synth.synthesize(helpdesk)


def test_extract_code_prefers_the_block_defining_handle():
    reply = "```python\nimport re\n```\ntext\n```python\ndef handle(state, tool, args):\n    return {}\n```"
    assert prompts.extract_code(reply).startswith("def handle(")
    assert prompts.extract_code("no code here") is None


def test_the_synthesizer_rejects_a_screened_round_and_keeps_a_clean_one(helpdesk, offline_module, sleeps):
    hostile = offline_module.source + "\nimport typing\n_leak = typing.sys.modules\n"
    model = ScriptedModel(fenced(hostile), fenced(offline_module.source))
    module = synthesizer(model, sleeps).synthesize(helpdesk)
    assert module.source.strip() == offline_module.source.strip()
    assert any("rejected before running: 2 forbidden construct(s)" in line for line in module.log)
    feedback = model.calls[1]["messages"][-1]["content"]
    assert "may not" in feedback and ".sys" in feedback and ".modules" in feedback
