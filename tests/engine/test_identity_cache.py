"""IdentityCache and WeakIdentityCache: one computation per object, never a value computed for another object."""

import gc
import sys
import threading

from compoworld_assets.engine.identity_cache import IdentityCache, WeakIdentityCache


def test_computes_once_per_object_and_again_for_an_equal_one() -> None:
    calls: list[object] = []
    cache = IdentityCache(lambda obj: calls.append(obj) or len(obj), size=None)
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
    cache = IdentityCache(lambda obj: obj[0], size=None)
    values = [cache([n]) for n in range(200)]  # each list is dropped by the caller at once
    assert values == list(range(200))


def test_threads_sharing_a_small_cache_get_their_own_values() -> None:
    """Hits and evictions from several threads at once (rollouts step episodes on threads)."""
    cache = IdentityCache(lambda obj: obj[0], size=1)
    wrong: list[tuple[int, int]] = []
    errors: list[BaseException] = []

    def hammer(own: int) -> None:  # hits on its own object while the others' evict it
        obj = [own]
        try:
            for i in range(20000):
                if cache(obj) != own:
                    wrong.append((own, i))
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=hammer, args=(k,)) for k in range(4)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as the interpreter can, to meet the races
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert not errors and not wrong


class _Value:
    """A weakly referenceable object (lists are not)."""

    def __init__(self, n: int) -> None:
        self.n = n


def test_a_weak_cache_computes_once_per_living_object_and_keeps_none_alive() -> None:
    calls: list[int] = []
    cache: WeakIdentityCache[_Value, int] = WeakIdentityCache(lambda obj: calls.append(obj.n) or obj.n)
    held = [_Value(n) for n in range(300)]  # more than any bound: a library's specs
    assert [cache(v) for v in held] == [cache(v) for v in held] == list(range(300))
    assert calls == list(range(300)) and len(cache) == 300
    del held
    gc.collect()
    assert len(cache) == 0, "an entry outlived its object"
    values = [cache(_Value(n)) for n in range(200)]  # each dropped at once: ids are reused, values never
    assert values == list(range(200)) and len(cache) == 0
    known = _Value(7)
    cache.put(known, 70)
    assert cache(known) == 70 and calls.count(7) == 2
