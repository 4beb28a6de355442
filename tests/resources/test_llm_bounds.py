"""Against a model server that accepts connections and never answers, every LLM caller gives up.

``LLMResource`` sets the request timeout and our one retry layer; the server counts the
connections it saw, one per attempt: the client's own retries (two more per attempt for litellm's
OpenAI client) are off. No assertion on wall-clock time: the calls must return, under pytest-timeout.
"""

from __future__ import annotations

import asyncio
import socket
import threading

import pytest

from compoworld_assets.engine.library import builtin_specs
from compoworld_assets.engine.llm_requests import ModelCallError
from compoworld_assets.engine.synthesis.llm import SynthesisError
from compoworld_assets.engine.verification import minimal_seed_state
from resources import LLMResource, SandboxResource

pytestmark = pytest.mark.timeout(120)

MAX_RETRIES = 1  # two attempts per call


class SilentServer:
    """A TCP server on 127.0.0.1 that accepts every connection, reads nothing and never replies."""

    def __init__(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._accepted: list[socket.socket] = []
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self._listener.getsockname()[1]}/v1"

    @property
    def connections(self) -> int:
        return len(self._accepted)

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self._listener.accept()
            except OSError:  # shut down by close()
                return
            self._accepted.append(connection)

    def close(self) -> None:
        self._listener.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept()
        self._listener.close()
        self._thread.join(timeout=5)
        for connection in self._accepted:
            connection.close()


@pytest.fixture
def server():
    silent = SilentServer()
    yield silent
    silent.close()


@pytest.fixture
def llm(server, monkeypatch) -> LLMResource:
    monkeypatch.setenv("CW_SILENT_KEY", "none")
    return LLMResource(backend="litellm", model="openai/silent-model", api_base=server.api_base,
                       api_key_env="CW_SILENT_KEY", request_timeout_s=0.5, max_retries=MAX_RETRIES,
                       retry_backoff_s=0.01)


@pytest.fixture(scope="module")
def crm():
    return next(spec for spec in builtin_specs() if spec.id == "crm")


def test_the_coding_agent_gives_up_with_the_timeout_in_its_error(llm, server, crm):
    synthesizer = llm.synthesizer(SandboxResource().executor_factory(trusted=False))
    with pytest.raises(SynthesisError) as raised:
        synthesizer.synthesize(crm)
    message = str(raised.value)
    assert f"giving up after {MAX_RETRIES + 1} attempts: Timeout" in message
    assert message.count("transient error Timeout") == MAX_RETRIES
    assert server.connections == MAX_RETRIES + 1


def test_the_world_model_answers_an_error_envelope_naming_the_timeout(llm, server, crm, tmp_path):
    world_model = llm.world_model(tmp_path / "cache.sqlite")
    result = world_model.simulate(crm, crm.tool("list_contacts"), {}, minimal_seed_state(crm, 0)).result
    assert result["success"] is False and result["error"]["code"] == "internal_error"
    assert f"after {MAX_RETRIES + 1} attempts: Timeout" in result["error"]["message"]
    calls = world_model.inner.calls
    assert [c.outcome for c in calls] == ["error"] * (MAX_RETRIES + 1)
    assert all(c.detail.startswith("Timeout") for c in calls)
    assert server.connections == MAX_RETRIES + 1


def test_the_instruction_writer_raises_after_the_configured_attempts(llm, server):
    writer = llm.instruction_writer()
    with pytest.raises(ModelCallError, match=rf"^{MAX_RETRIES + 1} attempts failed; the last: Timeout"):
        writer.completion(model=writer.model, messages=[{"role": "user", "content": "rewrite"}],
                          **writer.completion_kwargs)
    assert server.connections == MAX_RETRIES + 1


def test_one_policy_request_is_one_connection(llm, server):
    """The rollout engine retries the policy (tests/engine/rollout/test_engine.py); the client must not."""
    with pytest.raises(Exception, match="Timeout") as raised:
        asyncio.run(llm.policy().next_message([{"role": "user", "content": "hello"}], []))
    assert type(raised.value).__name__ == "Timeout"
    assert server.connections == 1


@pytest.fixture
def patient_llm(server, monkeypatch) -> LLMResource:
    """Many retries allowed, but a total deadline of about two request timeouts."""
    monkeypatch.setenv("CW_SILENT_KEY", "none")
    return LLMResource(backend="litellm", model="openai/silent-model", api_base=server.api_base,
                       api_key_env="CW_SILENT_KEY", request_timeout_s=0.5, max_retries=20, retry_backoff_s=0.01,
                       total_deadline_s=1.2, max_rounds=3)


def test_the_total_deadline_ends_a_synthesis_before_its_retries_and_rounds_run_out(patient_llm, server, crm):
    synthesizer = patient_llm.synthesizer(SandboxResource().executor_factory(trusted=False))
    with pytest.raises(SynthesisError) as raised:
        synthesizer.synthesize(crm)
    message = str(raised.value)
    assert "the total deadline of 1.2 s" in message
    assert 2 <= server.connections < 20  # each request cut to the time left; no round after the deadline


def test_the_total_deadline_ends_an_instruction_writers_call(patient_llm, server):
    writer = patient_llm.instruction_writer()
    with pytest.raises(ModelCallError, match="within the total deadline of 1.2 s; the last: Timeout"):
        writer.completion(model=writer.model, messages=[{"role": "user", "content": "rewrite"}],
                          **writer.completion_kwargs)
    assert 2 <= server.connections < 20


def test_the_total_deadline_ends_a_world_model_answer(patient_llm, server, crm, tmp_path):
    world_model = patient_llm.world_model(tmp_path / "cache.sqlite")
    result = world_model.simulate(crm, crm.tool("list_contacts"), {}, minimal_seed_state(crm, 0)).result
    assert result["success"] is False and "the total deadline of 1.2 s" in result["error"]["message"]
    assert 2 <= server.connections < 20
