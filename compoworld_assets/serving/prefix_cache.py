"""Keys and values of token prefixes seen before, in blocks, so a prompt's known beginning is not recomputed.

On CPU the prompt dominates: a 135M model reads ~70 prompt tokens/s on one loaded core, and an
agent episode sends the same system prompt and tool list with every task and its whole history
with every turn. Like vLLM's automatic prefix caching, sequences are cut into blocks of
``block_size`` tokens; a block is identified by its tokens and the block before it (exact
comparison, no hashing), so a shared prefix is stored once. Blocks are evicted least recently
used first; a lookup touches a path's deepest block first, so a parent always outlives its children.

Values are stored exactly as computed (float32); a prompt continued from cached blocks sees the
same keys and values up to floating-point differences between computing a suffix and the whole.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

import torch

LayerKV = list[tuple[torch.Tensor, torch.Tensor]]  # per layer, [kv_heads, tokens, head_dim] each


@dataclass
class _Block:
    ident: int
    kv: LayerKV
    nbytes: int


class PrefixCache:
    def __init__(self, budget_bytes: int, block_size: int = 64) -> None:
        self.budget_bytes = budget_bytes
        self.block_size = block_size
        self._blocks: OrderedDict[tuple[int, tuple[int, ...]], _Block] = OrderedDict()
        self._next_ident = 1
        self.bytes = 0

    def __len__(self) -> int:
        return len(self._blocks)

    def _keys(self, token_ids: list[int], limit: int) -> list[tuple[int, tuple[int, ...]]]:
        """The keys of ``token_ids``' leading full blocks, up to ``limit`` tokens, while they are cached."""
        keys, parent, size = [], 0, self.block_size
        for start in range(0, limit - size + 1, size):
            key = (parent, tuple(token_ids[start:start + size]))
            block = self._blocks.get(key)
            if block is None:
                break
            keys.append(key)
            parent = block.ident
        return keys

    def lookup(self, token_ids: list[int], limit: int) -> tuple[int, LayerKV]:
        """How many leading tokens of ``token_ids`` (at most ``limit``) are cached, and their keys and values."""
        keys = self._keys(token_ids, limit)
        if not keys:
            return 0, []
        for key in reversed(keys):
            self._blocks.move_to_end(key)
        blocks = [self._blocks[key].kv for key in keys]
        layers = [(torch.cat([b[i][0] for b in blocks], dim=1), torch.cat([b[i][1] for b in blocks], dim=1))
                  for i in range(len(blocks[0]))]
        return len(keys) * self.block_size, layers

    def missing_from(self, token_ids: list[int]) -> int:
        """The first token of ``token_ids`` not covered by cached full blocks."""
        return len(self._keys(token_ids, len(token_ids))) * self.block_size

    def store(self, token_ids: list[int], start: int, kv: LayerKV) -> None:
        """Add the full blocks of ``token_ids`` from ``start`` (a block boundary, every earlier block cached).

        ``kv`` holds the keys and values of ``token_ids[start:]`` (at least its full blocks).
        """
        if self.budget_bytes <= 0:
            return
        keys = self._keys(token_ids, start)
        if len(keys) * self.block_size < start:
            return  # an earlier block was evicted meanwhile: these blocks would have no parent
        parent = self._blocks[keys[-1]].ident if keys else 0
        size = self.block_size
        for begin in range(start, len(token_ids) - size + 1, size):
            key = (parent, tuple(token_ids[begin:begin + size]))
            block = self._blocks.get(key)
            if block is None:
                offset = begin - start
                block_kv = [(k[:, offset:offset + size].clone(), v[:, offset:offset + size].clone()) for k, v in kv]
                block = _Block(self._next_ident, block_kv, sum(k.nbytes + v.nbytes for k, v in block_kv))
                self._next_ident += 1
                self._blocks[key] = block
                self.bytes += block.nbytes
            keys.append(key)
            parent = block.ident
        for key in reversed(keys):
            self._blocks.move_to_end(key)
        self._evict()

    def _evict(self) -> None:
        while self.bytes > self.budget_bytes and self._blocks:
            _, block = self._blocks.popitem(last=False)
            self.bytes -= block.nbytes
