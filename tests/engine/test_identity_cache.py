"""IdentityCache: one computation per object, never a value computed for another object."""

import sys
import threading

from compoworld_assets.engine.identity_cache import IdentityCache


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
