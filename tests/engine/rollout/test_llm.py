"""Parsing model replies into assistant messages, and classifying model errors."""

import asyncio
import json

import pytest

from compoworld_assets.engine.rollout.llm import (
    LLMPolicy,
    TransientModelError,
    assistant_message,
    is_transient,
    parse_content_tool_calls,
)


@pytest.mark.parametrize("content,expected", [
    ('{"name": "list_services", "arguments": {}}', [("list_services", {})]),
    (('<tool_call>\n{"name": "call_tool", "arguments": {"tool_name": "crm_get_contact", '
      '"arguments": {"contact_id": "c1"}}}\n</tool_call>'),
     [("call_tool", {"tool_name": "crm_get_contact", "arguments": {"contact_id": "c1"}})]),
    ('Sure:\n```json\n{"name": "crm_get_contact", "parameters": {"contact_id": "c1"}}\n```',
     [("crm_get_contact", {"contact_id": "c1"})]),
    ('[{"name": "a", "arguments": "{\\"x\\": 1}"}, {"function": {"name": "b", "arguments": {}}}]',
     [("a", {"x": 1}), ("b", {})]),
    ("The answer is 42.", []),
    ('{"answer": 42}', []),
    ('{"name": "a", "arguments": "not json"}', []),
])
def test_parse_content_tool_calls(content, expected):
    assert parse_content_tool_calls(content) == expected


def test_assistant_message_prefers_native_tool_calls_and_numbers_recovered_ones():
    native = {"content": None, "tool_calls": [{"id": "x1", "function": {"name": "a", "arguments": {"k": 1}}}]}
    assert assistant_message(native, 3) == {"role": "assistant", "content": "", "tool_calls": [
        {"id": "x1", "type": "function", "function": {"name": "a", "arguments": '{"k": 1}'}}]}
    recovered = assistant_message({"content": '{"name": "b", "arguments": {}}'}, 4)
    assert recovered["tool_calls"][0]["id"] == "call_4_0"
    assert json.loads(recovered["tool_calls"][0]["function"]["arguments"]) == {}


def test_transient_errors_are_classified_by_class_name():
    class RateLimitError(Exception):
        pass

    assert is_transient(TransientModelError("x")) and is_transient(TimeoutError())
    assert is_transient(RateLimitError("slow down"))
    assert not is_transient(ValueError("x"))


@pytest.mark.slow
def test_litellm_errors_and_mock_response_through_the_real_client():
    """Imports litellm (about ten seconds)."""
    import litellm

    assert is_transient(litellm.RateLimitError("slow down", llm_provider="openai", model="m"))
    assert is_transient(litellm.APIConnectionError("down", llm_provider="openai", model="m"))
    assert not is_transient(litellm.BadRequestError("bad", llm_provider="openai", model="m"))
    policy = LLMPolicy("openai/gpt-4o-mini", extra={"mock_response": '{"name": "list_services", "arguments": {}}'})
    message = asyncio.run(policy.next_message([{"role": "user", "content": "hi"}], []))
    assert message["tool_calls"][0]["function"]["name"] == "list_services"
