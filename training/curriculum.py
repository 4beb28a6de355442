"""The order and amount of SFT data: a curriculum from short to long samples, and epochs as optimizer steps.

Kept free of torch and TRL so that the ``sft_checkpoint`` asset can plan a run without importing them.
"""

from __future__ import annotations

import math
from typing import Literal, get_args

Curriculum = Literal["none", "length"]
CURRICULA: tuple[str, ...] = get_args(Curriculum)


def curriculum_order(lengths: list[int], curriculum: str) -> list[int]:
    """Indices of the samples in training order: as given for ``none``, shortest first for ``length`` (ties in
    the order given, so the order is deterministic)."""
    if curriculum not in CURRICULA:
        raise ValueError(f"curriculum must be one of {', '.join(CURRICULA)}, not {curriculum!r}")
    indices = list(range(len(lengths)))
    return sorted(indices, key=lambda i: lengths[i]) if curriculum == "length" else indices


def steps_for_epochs(n_samples: int, epochs: float, batch_size: int, gradient_accumulation_steps: int = 1) -> int:
    """Optimizer steps for ``epochs`` passes over ``n_samples`` (at least one)."""
    if epochs <= 0 or n_samples <= 0 or batch_size <= 0 or gradient_accumulation_steps <= 0:
        raise ValueError("epochs, samples, batch size and accumulation steps must be positive")
    return max(1, math.ceil(epochs * n_samples / (batch_size * gradient_accumulation_steps)))
