"""The OpenAI-compatible server: message rendering, tool-call parsing, and litellm talking to it."""

import json
import os
import threading
import urllib.request
from http.server import ThreadingHTTPServer

import pytest

from compoworld_assets.serving.openai_server import (
    completion_message,
    local_server,
    make_handler,
    prompt_messages,
)

WEATHER_TOOL = {"type": "function", "function": {
    "name": "get_weather", "description": "Weather in a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}


def test_tool_call_text_becomes_openai_tool_calls():
    text = 'Checking. <tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
    message, finish = completion_message(text, with_tools=True, call_prefix="call_7")
    assert finish == "tool_calls"
    assert message["content"] == "Checking."
    assert message["tool_calls"] == [{"id": "call_7_0", "type": "function",
                                      "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]


def test_text_stays_text_without_tools_or_calls():
    call = '<tool_call>{"name": "get_weather", "arguments": {}}</tool_call>'
    assert completion_message(call, with_tools=False, call_prefix="c") == ({"role": "assistant", "content": call},
                                                                           "stop")
    assert completion_message("Hello!", with_tools=True, call_prefix="c")[1] == "stop"


def test_prompt_messages_flatten_parts_and_keep_call_arguments():
    messages = [{"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
                {"role": "assistant", "content": None, "tool_calls": [
                    {"id": "x", "type": "function", "function": {"name": "f", "arguments": '{"k": 1}'}}]}]
    assert prompt_messages(messages) == [
        {"role": "user", "content": "ab"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"type": "function", "function": {"name": "f", "arguments": '{"k": 1}'}}]}]


def test_tiny_model_renders_tools_and_is_reproducible(tiny_chat_model):
    model = tiny_chat_model
    request = {"messages": [{"role": "user", "content": "Weather in Paris?"}], "tools": [WEATHER_TOOL],
               "max_tokens": 8, "temperature": 0.9, "seed": 3}
    prompt = model.tokenizer.apply_chat_template(prompt_messages(request["messages"]), tools=request["tools"],
                                                 add_generation_prompt=True, tokenize=False)
    assert "- get_weather: Weather in a city.\n  city: string\n" in prompt and "<tool_call>" in prompt
    first, again = model.complete(request), model.complete(request)
    assert first["choices"][0]["message"] == again["choices"][0]["message"]
    assert first["usage"]["completion_tokens"] <= 8
    with pytest.raises(ValueError, match="context length"):
        model.complete({**request, "max_tokens": 600})


def _check_litellm_round_trip(api_base: str) -> None:
    import litellm

    with urllib.request.urlopen(f"{api_base}/models") as response:
        assert [m["id"] for m in json.load(response)["data"]] == ["tiny"]
    reply = litellm.completion(model="openai/tiny", api_base=api_base, api_key="local",
                               messages=[{"role": "user", "content": "Hi"}], max_tokens=5, seed=1, temperature=0.7)
    assert reply.choices[0].message.role == "assistant"
    assert reply.usage.completion_tokens <= 5
    with pytest.raises(litellm.BadRequestError):
        litellm.completion(model="openai/tiny", api_base=api_base, api_key="local",
                           messages=[{"role": "user", "content": "Hi"}], max_tokens=1000)


def test_litellm_reaches_the_server(tiny_chat_model):
    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(tiny_chat_model))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        _check_litellm_round_trip(f"http://127.0.0.1:{server.server_address[1]}/v1")
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.mark.slow
def test_local_server_subprocess_starts_answers_and_stops(tiny_model_dir):
    with local_server(tiny_model_dir, name="tiny") as server:
        _check_litellm_round_trip(server.api_base)
    with pytest.raises(OSError):
        urllib.request.urlopen(f"{server.api_base}/models", timeout=2)


@pytest.mark.slow
def test_bundled_model_answers_a_tool_call_through_litellm(tmp_path):
    """The real SmolLM2-135M, primed with one example call, answers with an OpenAI tool call."""
    import litellm

    from training.base_model import prepare_base_model

    base = prepare_base_model(os.environ.get("COMPOWORLD_BASE_MODEL_DIR", tmp_path / "base"))
    example = {"role": "assistant", "content": "", "tool_calls": [
        {"id": "c0", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Rome"}'}}]}
    messages = [{"role": "user", "content": "Weather in Rome?"}, example,
                {"role": "tool", "tool_call_id": "c0", "content": '{"temp_c": 21}'},
                {"role": "user", "content": "And the weather in Paris?"}]
    with local_server(base, name="base") as server:
        reply = litellm.completion(model=server.litellm_model, api_base=server.api_base, api_key="local",
                                   messages=messages, tools=[WEATHER_TOOL], max_tokens=40, temperature=0)
    calls = reply.choices[0].message.tool_calls
    assert calls and calls[0].function.name == "get_weather"
    assert json.loads(calls[0].function.arguments) == {"city": "Paris"}
