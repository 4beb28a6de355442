"""IdentityCache: one computation per object, never a value computed for another object."""

from compoworld_assets.engine.identity_cache import IdentityCache


def test_computes_once_per_object_and_again_for_an_equal_one() -> None:
    calls: list[object] = []
    cache = IdentityCache(lambda obj: calls.append(obj) or len(obj))
    first, twin = [1, 2], [1, 2]
    assert cache(first) == cache(first) == 2
    assert cache(twin) == 2
    assert len(calls) == 2 and calls[0] is first and calls[1] is twin


def test_drops_the_least_recently_used_beyond_its_size() -> None:
    calls: list[int] = []
    cache = IdentityCache(lambda obj: calls.append(obj[0]) or obj[0], size=2)
    a, b, c = [1], [2], [3]
    cache(a), cache(b), cache(a), cache(c)  # b is the least recently used when c arrives
    assert len(cache) == 2
    cache(a)
    cache(b)
    assert calls == [1, 2, 3, 2]


def test_an_entry_keeps_its_object_so_its_id_is_never_reused() -> None:
    cache = IdentityCache(lambda obj: obj[0])
    values = [cache([n]) for n in range(200)]  # each list is dropped by the caller at once
    assert values == list(range(200))
