"""Continuous batching on CPU: many requests decoded together, one forward pass per step for all of them.

One scheduler thread owns the model. Requests wait in a queue; when the batch is empty the
scheduler waits ``window_s`` for more to arrive, so the turns of concurrent episodes start
together. Between decoding steps it admits waiting requests (up to ``max_batch_size`` and the
key/value memory budget): each is prefilled alone — its prompt continued from the longest
prefix in the :class:`~compoworld_assets.serving.prefix_cache.PrefixCache` — and joins the batch;
a request leaves the batch the step it ends (end token, stop string or ``max_tokens``), so short
answers do not wait for long ones. Every request keeps its own sampling parameters, seed and
stop strings (:mod:`~compoworld_assets.serving.sampling`).

What holds: prompts are prefilled one at a time, exactly as ``model.generate`` does when no
cached prefix is used; decoding steps run batched matrix products, whose float32 results can
differ from one sequence's in the last bits. So a greedy answer equals the sequential server's
unless two candidate tokens are that close; a seeded sampled answer likewise draws the same
numbers from its own generator and differs only where such a difference moves a draw across a
boundary. A request that fails (a sampling error, say) fails alone; an error in a batched
forward pass fails the requests in that batch. A request whose client gives up (a timed-out
HTTP client closes its connection) is cancelled: it leaves the queue or the batch at the next
step instead of holding a slot.

Why a prefix cache and not only batching: on CPU a prompt token costs about as much as a
generated token in a batch of dozens, and every agent turn resends the whole conversation.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from concurrent.futures import Future, InvalidStateError
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import Any

import torch

from compoworld_assets.serving.prefix_cache import PrefixCache
from compoworld_assets.serving.sampling import (
    Abandoned,
    GenerationRequest,
    GenerationResult,
    StopText,
    TokenSampler,
    finish,
)
from compoworld_assets.serving.settings import DEFAULT_BATCHING, BatchSettings
from compoworld_assets.serving.slot_cache import SlotCache

IDLE_RELEASE_S = 10.0
POLL_S = 0.5


@dataclass
class _Row:
    request: GenerationRequest
    future: Future[GenerationResult]
    sampler: TokenSampler
    stop: StopText
    generated: list[int]

    @property
    def needed_capacity(self) -> int:
        return len(self.request.prompt_ids) + self.request.params.max_tokens


def check_supported(model: Any) -> None:
    """Batching keeps every layer's full key/value history: models with sliding-window layers need ``--sequential``."""
    config = model.config.get_text_config(decoder=True)
    layer_types = getattr(config, "layer_types", None) or ["full_attention"]
    if set(layer_types) != {"full_attention"} or getattr(config, "sliding_window", None):
        raise ValueError(f"batched serving supports full-attention models only (layer types {sorted(set(layer_types))}"
                         f", sliding_window {getattr(config, 'sliding_window', None)}); serve it with --sequential")


class BatchGenerator:
    def __init__(self, model: Any, tokenizer: Any, settings: BatchSettings = DEFAULT_BATCHING) -> None:
        check_supported(model)
        config = model.config.get_text_config(decoder=True)
        head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
        kv_heads = getattr(config, "num_key_value_heads", None) or config.num_attention_heads
        self.model, self.tokenizer, self.settings = model, tokenizer, settings
        self.cache = SlotCache(config.num_hidden_layers, kv_heads, head_dim, model.dtype)
        self.prefix = PrefixCache(settings.prefix_cache_bytes, settings.block_size)
        self.stats: Counter[str] = Counter()
        self._rows: list[_Row] = []
        self._waiting: deque[tuple[GenerationRequest, Future[GenerationResult]]] = deque()
        self._condition = threading.Condition()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="cw-batcher", daemon=True)
        self._thread.start()

    def submit(self, request: GenerationRequest) -> Future[GenerationResult]:
        future: Future[GenerationResult] = Future()
        with self._condition:
            if self._closed:
                raise RuntimeError("the batch generator is closed")
            self._waiting.append((request, future))
            self._condition.notify()
        return future

    def generate(self, request: GenerationRequest, abandoned: Callable[[], bool] | None = None) -> GenerationResult:
        """Wait for ``request``'s result; when ``abandoned()`` turns true (checked every ``POLL_S``), cancel it."""
        future = self.submit(request)
        while True:
            try:
                return future.result(timeout=POLL_S)
            except FutureTimeout:
                if abandoned is not None and abandoned():
                    future.cancel()
                    raise Abandoned("the client gave up on the request") from None

    def close(self) -> None:
        with self._condition:
            self._closed = True
            self._condition.notify()
        self._thread.join()

    # --- the scheduler thread -------------------------------------------------------------

    def _run(self) -> None:
        torch.set_grad_enabled(False)
        while True:
            admitted = self._next_admissions()
            if admitted is None:
                break
            for request, future in admitted:
                self._admit(request, future)
            if self._rows:
                self._step()
        for future in [row.future for row in self._rows] + [future for _, future in self._waiting]:
            _fail(future, RuntimeError("the batch generator was closed"))

    def _next_admissions(self) -> list[tuple[GenerationRequest, Future[GenerationResult]]] | None:
        """Waiting requests that fit now (None when closed); blocks while there is nothing to do."""
        with self._condition:
            if not self._rows:
                while not self._waiting and not self._closed:
                    if not self._condition.wait(IDLE_RELEASE_S) and not self._waiting:
                        self.cache.release()
                deadline = time.monotonic() + self.settings.window_s
                while (not self._closed and len(self._waiting) < self.settings.max_batch_size
                       and (left := deadline - time.monotonic()) > 0):
                    self._condition.wait(left)
            if self._closed:
                return None
            admitted = []
            capacity = max((row.needed_capacity for row in self._rows), default=0)
            while self._waiting and len(self._rows) + len(admitted) < self.settings.max_batch_size:
                request, future = self._waiting[0]
                if future.cancelled():
                    self._waiting.popleft()
                    self.stats["cancelled"] += 1
                    continue
                wanted = max(capacity, len(request.prompt_ids) + request.params.max_tokens)
                slots = len(self._rows) + len(admitted) + 1
                if slots > 1 and self.cache.bytes_for(slots, wanted) > self.settings.kv_cache_bytes:
                    break
                admitted.append(self._waiting.popleft())
                capacity = wanted
            if admitted:
                self._reserve(len(self._rows) + len(admitted), capacity)
            return admitted

    def _reserve(self, slots: int, capacity: int) -> None:
        """Grow the buffers geometrically (each growth copies them) within the memory budget."""
        if slots <= self.cache.slots and capacity <= self.cache.capacity:
            return
        roomy_slots = min(self.settings.max_batch_size, max(slots, 2 * self.cache.slots))
        roomy_capacity = max(capacity, self.cache.capacity + self.cache.capacity // 4)
        if self.cache.bytes_for(roomy_slots, roomy_capacity) <= self.settings.kv_cache_bytes:
            slots, capacity = roomy_slots, roomy_capacity
        self.cache.reserve(slots, capacity)
        self.stats["buffer_growths"] += 1

    def _forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                 position_ids: torch.Tensor) -> torch.Tensor:
        output = self.model(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids,
                            cache=self.cache, use_cache=True, logits_to_keep=1)
        return output.logits[:, -1, :].to(dtype=torch.float32)

    def _admit(self, request: GenerationRequest, future: Future[GenerationResult]) -> None:
        ids = request.prompt_ids
        slot = self.cache.add_slot()
        try:
            row = _Row(request, future, TokenSampler(request.params), StopText(self.tokenizer, request.params.stop), [])
            cached, kv = self.prefix.lookup(ids, len(ids) - 1)
            if cached:
                self.cache.load(slot, kv, cached)
            self.cache.prefill(slot, cached)
            if cached:
                query = torch.arange(cached, len(ids))[:, None]
                mask = (torch.arange(len(ids))[None, :] <= query)[None, None]
            else:
                mask = torch.ones(1, len(ids), dtype=torch.long)
            logits = self._forward(torch.tensor([ids[cached:]]), mask, torch.arange(cached, len(ids))[None, :])
            self.stats["prompt_tokens"] += len(ids)
            self.stats["prompt_tokens_cached"] += cached
            self.stats["prompt_tokens_computed"] += len(ids) - cached
            self.stats["prefills"] += 1
            self._remember(ids, slot)
            row.generated.append(row.sampler.next_token(logits[0], self._history(row)))
        except Exception as exc:  # noqa: BLE001 - this request fails alone
            self.cache.remove(slot)
            _fail(future, exc)
            self.stats["failed"] += 1
            return
        self._rows.append(row)
        self._retire_finished([slot])

    def _history(self, row: _Row) -> torch.Tensor:
        """What logits processors are shown: the prompt and what was generated (only sampling needs it)."""
        if row.sampler.generator is None:
            return torch.empty(1, 0, dtype=torch.long)
        return torch.tensor([row.request.prompt_ids + row.generated])

    def _step(self) -> None:
        abandoned = [i for i, row in enumerate(self._rows) if row.future.cancelled()]
        if abandoned:
            self.stats["cancelled"] += len(abandoned)
            self._retire_finished([], abandoned)
            if not self._rows:
                return
        lengths = list(self.cache.lengths)
        batch = len(self._rows)
        input_ids = torch.tensor([[row.generated[-1]] for row in self._rows])
        position_ids = torch.tensor(lengths)[:, None]
        if len(set(lengths)) == 1:
            mask = torch.ones(batch, lengths[0] + 1, dtype=torch.long)
        else:
            mask = (torch.arange(max(lengths) + 1)[None, :] <= position_ids)[:, None, None, :]
        self.cache.decode()
        try:
            logits = self._forward(input_ids, mask, position_ids)
        except Exception as exc:  # noqa: BLE001 - a batched pass cannot tell whose input broke it
            for row in self._rows:
                _fail(row.future, exc)
            self.stats["failed"] += batch
            self._rows.clear()
            self.cache.release()
            return
        self.stats["steps"] += 1
        self.stats["decoded_tokens"] += batch
        self.stats["max_batch"] = max(self.stats["max_batch"], batch)
        failed = []
        for i, row in enumerate(self._rows):
            try:
                row.generated.append(row.sampler.next_token(logits[i], self._history(row)))
            except Exception as exc:  # noqa: BLE001 - this request fails alone
                _fail(row.future, exc)
                failed.append(i)
                self.stats["failed"] += 1
        self._retire_finished(range(batch), failed)

    def _retire_finished(self, indices: Any, failed: list[int] | None = None) -> None:
        """Answer the rows at ``indices`` that are done and drop them (and ``failed``) from the batch."""
        leaving = set(failed or [])
        for i in indices:
            if i in leaving:
                continue
            row = self._rows[i]
            try:
                result = finish(row.generated, row.request.params, row.request.end_ids, row.stop)
            except Exception as exc:  # noqa: BLE001 - this request fails alone
                _fail(row.future, exc)
                leaving.add(i)
                continue
            if result is not None:
                self._remember(row.request.prompt_ids + row.generated[:-1], i)
                _settle(row.future, result)
                leaving.add(i)
                self.stats["completions"] += 1
        for i in sorted(leaving, reverse=True):
            self.cache.remove(i)
            self._rows[i] = self._rows[-1]
            self._rows.pop()

    def _remember(self, token_ids: list[int], slot: int) -> None:
        """Put the full blocks of ``slot``'s tokens (``token_ids``) into the prefix cache."""
        if self.prefix.budget_bytes <= 0:
            return
        start = self.prefix.missing_from(token_ids)
        length = min(len(token_ids), self.cache.lengths[slot])
        if length - start >= self.prefix.block_size:
            self.prefix.store(token_ids[:length], start, self.cache.read(slot, start, length))


def _settle(future: Future[Any], result: Any) -> None:
    """Answer ``future`` unless its client gave up (cancelled it)."""
    with contextlib.suppress(InvalidStateError):
        future.set_result(result)


def _fail(future: Future[Any], exc: BaseException) -> None:
    with contextlib.suppress(InvalidStateError):
        future.set_exception(exc)
