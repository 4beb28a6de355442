"""The block prefix cache: exact prefixes only, shared blocks stored once, least recently used evicted first."""

import torch

from compoworld_assets.serving.prefix_cache import PrefixCache

LAYERS, HEADS, DIM, BLOCK = 2, 1, 2, 4


def kv_for(tokens: list[int]) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Keys and values that encode each token's id, so a lookup shows which tokens it returned."""
    column = torch.tensor(tokens, dtype=torch.float32)[None, :, None].expand(HEADS, len(tokens), DIM)
    return [(column + layer, -column - layer) for layer in range(LAYERS)]


def block_bytes() -> int:
    return LAYERS * 2 * HEADS * BLOCK * DIM * 4


def test_lookup_returns_the_longest_cached_block_prefix():
    cache = PrefixCache(budget_bytes=10**6, block_size=BLOCK)
    tokens = list(range(10))
    cache.store(tokens, 0, kv_for(tokens))
    assert len(cache) == 2  # two full blocks; the last two tokens are no block
    length, kv = cache.lookup([*range(9), 99], limit=9)
    assert length == 8 and torch.equal(kv[1][0], kv_for(list(range(8)))[1][0])
    assert cache.lookup([0, 1, 2, 3, 4, 5, 6, 99], limit=8)[0] == 4  # the second block differs
    assert cache.lookup([7, 1, 2, 3], limit=4)[0] == 0
    assert cache.lookup(list(range(8)), limit=7)[0] == 4  # never more than the limit


def test_a_shared_prefix_is_stored_once_and_continued():
    cache = PrefixCache(budget_bytes=10**6, block_size=BLOCK)
    first, second = [1, 2, 3, 4, 5, 6, 7, 8], [1, 2, 3, 4, 9, 9, 9, 9]
    cache.store(first, 0, kv_for(first))
    start = cache.missing_from(second)
    assert start == 4
    cache.store(second, start, kv_for(second[start:]))
    assert len(cache) == 3 and cache.bytes == 3 * block_bytes()
    length, kv = cache.lookup(second + [0], limit=9)
    assert length == 8 and kv[0][0][0, :, 0].tolist() == [float(t) for t in second]


def test_least_recently_used_blocks_go_first_and_parents_outlive_children():
    cache = PrefixCache(budget_bytes=3 * block_bytes(), block_size=BLOCK)
    old, new = list(range(8)), list(range(100, 108))
    cache.store(old, 0, kv_for(old))
    cache.store(new, 0, kv_for(new))  # over budget: old's second block is the least recently used
    assert cache.bytes <= 3 * block_bytes()
    assert cache.lookup(old, limit=8)[0] == 4 and cache.lookup(new, limit=8)[0] == 8
    branch = [*new[:4], 7, 7, 7, 7]
    cache.store(branch, 4, kv_for(branch[4:]))  # evicts old's first block: new's were used since
    assert cache.lookup(old, limit=8)[0] == 0
    assert cache.lookup(new, limit=8)[0] == 8 and cache.lookup(branch, limit=8)[0] == 8
