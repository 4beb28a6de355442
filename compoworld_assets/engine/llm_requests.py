"""Bounds on every model request: a timeout per request and exactly one retry layer, ours.

litellm's OpenAI client retries a failed request twice on its own (``max_retries``, default 2), and
litellm can wrap a call in retries of its own (``num_retries``); against a server that accepts and
never answers, one of our attempts would then wait three timeouts, without a trace of the first two.
Every CompoWorld caller (coding agent, world model, instruction writer, LLM policy) passes
:func:`request_bounds` and retries in its own loop, with backoff, recording each error.

A timeout per request does not bound a piece of work: four attempts at a server that accepts and never
answers held one synthesis round for eight minutes, and three rounds for more. :class:`CallDeadline` is a total
limit over every attempt of one piece of work (a call with its retries, a synthesis with its rounds, a world-model
answer with its repairs): each request's timeout is cut to the time left, and no attempt starts once it is spent.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def request_bounds(timeout_s: float) -> dict[str, Any]:
    """litellm keywords: give up on a request after ``timeout_s`` seconds; the client never retries."""
    return {"timeout": timeout_s, "max_retries": 0, "num_retries": 0}


class CallDeadline:
    """A total time limit over the attempts of one piece of model work (``seconds=None``: none)."""

    def __init__(self, seconds: float | None, clock: Callable[[], float] = time.monotonic) -> None:
        self.seconds = seconds
        self.clock = clock
        self.started = clock()

    def left(self) -> float:
        return float("inf") if self.seconds is None else self.seconds - (self.clock() - self.started)

    def passed(self) -> bool:
        return self.left() <= 0

    def timeout(self, per_request: float) -> float:
        """The timeout for the next request: ``per_request``, cut to the time left."""
        return max(min(per_request, self.left()), 0.001)

    def __str__(self) -> str:
        return f"the total deadline of {self.seconds:g} s"


class ModelCallError(RuntimeError):
    """Every attempt of a model call failed; the message names the attempts and the last error."""


def with_retries(completion: Callable[..., Any], *, max_retries: int, backoff_s: float,
                 is_transient: Callable[[BaseException], bool],
                 sleep: Callable[[float], None] = time.sleep, deadline_s: float | None = None,
                 clock: Callable[[], float] = time.monotonic) -> Callable[..., Any]:
    """``completion`` retried ``max_retries`` times on transient errors, waiting ``backoff_s · 2^k``, all of
    it within ``deadline_s`` (:class:`CallDeadline`: each request's ``timeout`` cut to the time left).

    A permanent error propagates at once; when the retries or the time run out, :class:`ModelCallError` says
    how many attempts were made and what the last one raised.
    """

    def call(**kwargs: Any) -> Any:
        deadline = CallDeadline(deadline_s, clock)
        attempt = 0
        while True:
            try:
                return completion(**{**kwargs, "timeout": deadline.timeout(kwargs.get("timeout", float("inf")))})
            except Exception as exc:
                if not is_transient(exc):
                    raise
                wait = backoff_s * 2**attempt
                if attempt == max_retries or deadline.left() <= wait:
                    spent = "" if attempt == max_retries else f" within {deadline}"
                    raise ModelCallError(
                        f"{attempt + 1} attempts failed{spent}; the last: {type(exc).__name__}: {exc}"[:500]
                    ) from exc
            sleep(wait)
            attempt += 1

    return call
