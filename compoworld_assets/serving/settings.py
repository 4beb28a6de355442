"""How the batching server groups requests (no torch import, so callers can build it cheaply)."""

from __future__ import annotations

from dataclasses import dataclass

GIB = 1 << 30


@dataclass(frozen=True)
class BatchSettings:
    """``window_s``: how long an idle server waits for more requests before starting a batch;
    ``kv_cache_bytes``: the keys and values of the running batch (float32; SmolLM2-135M needs
    46 KiB per token, so 4 GiB hold 32 sequences of 2.8k tokens); ``prefix_cache_bytes``: blocks of
    earlier prompts kept for reuse (0 turns the prefix cache off)."""

    max_batch_size: int = 32
    window_s: float = 0.05
    kv_cache_bytes: int = 4 * GIB
    prefix_cache_bytes: int = 2 * GIB
    block_size: int = 64

    def cli_args(self) -> list[str]:
        """The server's command-line flags for these settings."""
        return ["--max-batch-size", str(self.max_batch_size), "--batch-window-ms", f"{self.window_s * 1000:g}",
                "--kv-cache-gib", f"{self.kv_cache_bytes / GIB:g}", "--prefix-cache-gib",
                f"{self.prefix_cache_bytes / GIB:g}", "--block-size", str(self.block_size)]


DEFAULT_BATCHING = BatchSettings()
