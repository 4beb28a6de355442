"""One ``model.generate`` call per request, one request at a time (``--sequential``).

This is how the server generated before batching; it stays as the reference the batched
generator is compared with (tests, ``benchmarks/serving_throughput.py``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from compoworld_assets.serving.sampling import (
    GENERATE_DEFAULT_TOP_K,
    GenerationRequest,
    GenerationResult,
    StopText,
    finish,
)


class SequentialGenerator:
    def __init__(self, model: Any, tokenizer: Any) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self._lock = threading.Lock()

    def generate(self, request: GenerationRequest, abandoned: Callable[[], bool] | None = None) -> GenerationResult:
        """``request``'s result (``abandoned`` is not checked: ``generate`` cannot be stopped halfway)."""
        import torch
        from transformers import StoppingCriteria, StoppingCriteriaList

        params = request.params
        stop = StopText(self.tokenizer, params.stop)
        input_ids = torch.tensor([request.prompt_ids])
        prompt_length = input_ids.shape[1]

        class StopStrings(StoppingCriteria):
            def __call__(self, ids: Any, scores: Any, **kwargs: Any) -> Any:
                done = bool(stop.stop) and stop.cut(stop.decode(ids[0, prompt_length:].tolist())) is not None
                return torch.tensor([done])

        sampling = ({"do_sample": True, "temperature": params.temperature, "top_k": GENERATE_DEFAULT_TOP_K,
                     "top_p": params.top_p} if not params.greedy else {"do_sample": False})
        with self._lock, torch.no_grad():
            torch.manual_seed(params.seed)
            output = self.model.generate(input_ids, attention_mask=torch.ones_like(input_ids),
                                         max_new_tokens=params.max_tokens, eos_token_id=list(request.end_ids),
                                         pad_token_id=request.end_ids[0],
                                         stopping_criteria=StoppingCriteriaList([StopStrings()]), **sampling)
        generated = output[0, prompt_length:].tolist()
        result = finish(generated, params, request.end_ids, stop)
        return result or GenerationResult(generated, stop.decode(generated), "stop")

    def close(self) -> None:
        return
