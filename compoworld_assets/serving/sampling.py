"""What one chat request asks the generator for, how its next token is chosen, and when it stops.

Both generators (:mod:`~compoworld_assets.serving.sequential` and
:mod:`~compoworld_assets.serving.batching`) use these, so a request is decoded by the same rules
whichever serves it. Sampling follows ``model.generate``'s own processors in its order
(temperature, top-k 50 — ``generate``'s default —, top-p) and draws from a ``torch.Generator``
owned by the request and seeded with its seed: the draws are the ones ``generate`` makes after
``torch.manual_seed(seed)``, and they do not depend on which other requests share a batch.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

GENERATE_DEFAULT_TOP_K = 50


@dataclass(frozen=True)
class SamplingParams:
    max_tokens: int
    temperature: float = 0.0
    top_p: float = 1.0
    seed: int = 0
    stop: tuple[str, ...] = ()

    @property
    def greedy(self) -> bool:
        return self.temperature <= 0


@dataclass
class GenerationResult:
    """The generated token ids (a final end token included), the text to return, and why it ended."""

    token_ids: list[int]
    text: str
    finish_reason: str  # "stop" (end token or stop string) or "length"


@dataclass
class GenerationRequest:
    """A rendered, tokenized request: what a generator needs."""

    prompt_ids: list[int]
    params: SamplingParams
    end_ids: tuple[int, ...]
    meta: dict[str, Any] = field(default_factory=dict)


class Abandoned(RuntimeError):
    """The client went away before its answer was ready; the request was cancelled."""


class TokenSampler:
    """Chooses one request's next tokens from its own logits rows (float32, shape ``[vocab]``)."""

    def __init__(self, params: SamplingParams) -> None:
        import torch
        from transformers import (
            LogitsProcessorList,
            TemperatureLogitsWarper,
            TopKLogitsWarper,
            TopPLogitsWarper,
        )

        self.params = params
        self.generator: torch.Generator | None = None
        self.warpers = LogitsProcessorList()
        if params.greedy:
            return
        self.generator = torch.Generator().manual_seed(params.seed)
        if params.temperature != 1.0:
            self.warpers.append(TemperatureLogitsWarper(params.temperature))
        self.warpers.append(TopKLogitsWarper(top_k=GENERATE_DEFAULT_TOP_K))
        if params.top_p < 1.0:
            self.warpers.append(TopPLogitsWarper(top_p=params.top_p))

    def next_token(self, logits: Any, ids: Any) -> int:
        """The next token after ``ids`` (a ``[1, n]`` tensor, what the warpers are shown) given ``logits``."""
        import torch

        if self.generator is None:
            return int(torch.argmax(logits))
        scores = self.warpers(ids, logits[None, :])
        probs = torch.nn.functional.softmax(scores, dim=-1)
        return int(torch.multinomial(probs, num_samples=1, generator=self.generator)[0, 0])


class StopText:
    """Finds the first of a request's stop strings in its decoded output."""

    def __init__(self, tokenizer: Any, stop: tuple[str, ...]) -> None:
        self.tokenizer = tokenizer
        self.stop = tuple(s for s in stop if s)

    def decode(self, token_ids: list[int]) -> str:
        return self.tokenizer.decode(token_ids, skip_special_tokens=True)

    def cut(self, text: str) -> str | None:
        """``text`` up to the earliest stop string, or None when none occurs."""
        found = [text.index(s) for s in self.stop if s in text]
        return text[:min(found)] if found else None


def finish(token_ids: list[int], params: SamplingParams, end_ids: tuple[int, ...],
           stop: StopText) -> GenerationResult | None:
    """The result when ``token_ids`` (generated so far) must end here, else None."""
    if token_ids and token_ids[-1] in end_ids:
        return GenerationResult(token_ids, stop.decode(token_ids), "stop")
    if stop.stop:
        cut = stop.cut(stop.decode(token_ids))
        if cut is not None:
            return GenerationResult(token_ids, cut, "stop")
    if len(token_ids) >= params.max_tokens:
        return GenerationResult(token_ids, stop.decode(token_ids), "length")
    return None
