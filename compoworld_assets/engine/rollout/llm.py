"""A policy backed by any chat model litellm reaches (a provider, a vLLM server, a local server).

For a vLLM OpenAI server use ``model="hosted_vllm/<name>"`` with ``api_base``. Small models
often write the tool call into the message text instead of ``tool_calls``; the parser also
accepts JSON calls in the content: ``{"name": ..., "arguments": {...}}`` (or a list of them),
optionally inside ``<tool_call>`` tags or a fenced code block.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Awaitable, Callable
from typing import Any

CompletionFn = Callable[..., Awaitable[Any]]

TRANSIENT_ERROR_NAMES = frozenset({
    "RateLimitError", "APIConnectionError", "Timeout", "APITimeoutError", "TimeoutError",
    "ServiceUnavailableError", "InternalServerError", "BadGatewayError", "TransientModelError",
})

_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)
_FENCED = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


class TransientModelError(RuntimeError):
    """A model error worth retrying (for completion functions outside litellm)."""


def is_transient(exc: BaseException) -> bool:
    """Rate limits, connection failures, timeouts and 5xx answers: retrying may succeed."""
    return any(cls.__name__ in TRANSIENT_ERROR_NAMES for cls in type(exc).__mro__)


async def litellm_completion(**kwargs: Any) -> Any:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    return await litellm.acompletion(**kwargs)


class LLMPolicy:
    """Asks a chat model for the next message; the engine retries its transient errors."""

    def __init__(self, model: str, *, api_base: str | None = None, api_key: str | None = None,
                 temperature: float = 0.0, max_tokens: int = 1024, request_timeout_s: float = 120.0,
                 completion_fn: CompletionFn = litellm_completion, extra: dict[str, Any] | None = None) -> None:
        self.name = f"llm:{model}"
        self.model = model
        self.completion_fn = completion_fn
        self.options: dict[str, Any] = {"temperature": temperature, "max_tokens": max_tokens,
                                        "timeout": request_timeout_s, **(extra or {})}
        if api_base is not None:
            self.options["api_base"] = api_base
        if api_key is not None:
            self.options["api_key"] = api_key
        self._turn = 0

    async def next_message(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
        response = await self.completion_fn(model=self.model, messages=messages, tools=tools, **self.options)
        self._turn += 1
        return assistant_message(_field(_field(response, "choices")[0], "message"), self._turn)


def assistant_message(message: Any, turn: int) -> dict[str, Any]:
    """An OpenAI assistant message dict from a model reply, tool calls in the content recovered."""
    content = _field(message, "content") or ""
    calls = []
    for k, call in enumerate(_field(message, "tool_calls") or []):
        function = _field(call, "function")
        arguments = _field(function, "arguments")
        calls.append({"id": _field(call, "id") or f"call_{turn}_{k}", "type": "function",
                      "function": {"name": _field(function, "name"),
                                   "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments)}})
    if not calls:
        calls = [{"id": f"call_{turn}_{k}", "type": "function",
                  "function": {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)}}
                 for k, (name, arguments) in enumerate(parse_content_tool_calls(content))]
    message_dict: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message_dict["tool_calls"] = calls
    return message_dict


def parse_content_tool_calls(content: str) -> list[tuple[str, dict[str, Any]]]:
    """Tool calls written as JSON in the message text; empty when there are none."""
    candidates = _TAGGED.findall(content) or _FENCED.findall(content) or [content]
    calls = []
    for text in candidates:
        try:
            value = json.loads(text.strip())
        except json.JSONDecodeError:
            continue
        for item in value if isinstance(value, list) else [value]:
            call = _as_call(item)
            if call is not None:
                calls.append(call)
    return calls


def _as_call(item: Any) -> tuple[str, dict[str, Any]] | None:
    if not isinstance(item, dict):
        return None
    if isinstance(item.get("function"), dict):
        item = item["function"]
    name = item.get("name")
    arguments = item.get("arguments", item.get("parameters", {}))
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError:
            return None
    if not isinstance(name, str) or not isinstance(arguments, dict):
        return None
    return name, arguments


def _field(value: Any, name: str) -> Any:
    return value.get(name) if isinstance(value, dict) else getattr(value, name, None)
