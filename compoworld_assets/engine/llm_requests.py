"""Bounds on every model request: a timeout per request and exactly one retry layer, ours.

litellm's OpenAI client retries a failed request twice on its own (``max_retries``, default 2), and
litellm can wrap a call in retries of its own (``num_retries``); against a server that accepts and
never answers, one of our attempts would then wait three timeouts, without a trace of the first two.
Every CompoWorld caller (coding agent, world model, instruction writer, LLM policy) passes
:func:`request_bounds` and retries in its own loop, with backoff, recording each error.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def request_bounds(timeout_s: float) -> dict[str, Any]:
    """litellm keywords: give up on a request after ``timeout_s`` seconds; the client never retries."""
    return {"timeout": timeout_s, "max_retries": 0, "num_retries": 0}


class ModelCallError(RuntimeError):
    """Every attempt of a model call failed; the message names the attempts and the last error."""


def with_retries(completion: Callable[..., Any], *, max_retries: int, backoff_s: float,
                 is_transient: Callable[[BaseException], bool],
                 sleep: Callable[[float], None] = time.sleep) -> Callable[..., Any]:
    """``completion`` retried ``max_retries`` times on transient errors, waiting ``backoff_s · 2^k``.

    A permanent error propagates at once; when the retries run out, :class:`ModelCallError` says
    how many attempts were made and what the last one raised.
    """

    def call(**kwargs: Any) -> Any:
        attempt = 0
        while True:
            try:
                return completion(**kwargs)
            except Exception as exc:
                if not is_transient(exc):
                    raise
                if attempt == max_retries:
                    raise ModelCallError(
                        f"{attempt + 1} attempts failed; the last: {type(exc).__name__}: {exc}"[:500]
                    ) from exc
            sleep(backoff_s * 2**attempt)
            attempt += 1

    return call
