"""Values derived from objects that are never changed in place (specs, states), keyed by identity.

Hashing a spec or dumping it to JSON to find its cache entry costs as much as the work being cached, so
these caches key on ``id(obj)``. Each entry keeps its object alive, so the id cannot be reused by another
object while the entry exists; the least recently used entries beyond ``size`` are dropped (with them the
reference). Only for objects treated as values: a spec changed in place after a lookup would be served
what was computed from its old content. Safe to share between threads (rollouts step episodes on several);
two threads asking for a new object at once may both compute its value.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class IdentityCache(Generic[K, V]):
    """``cache(obj)`` is ``compute(obj)``, computed once per object while its entry lives."""

    def __init__(self, compute: Callable[[K], V], size: int | None) -> None:
        self._compute = compute
        self._size = size
        self._entries: OrderedDict[int, tuple[K, V]] = OrderedDict()
        self._lock = threading.Lock()

    def __call__(self, obj: K) -> V:
        key = id(obj)
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:  # the entry holds its object, so no other object has this id now
                self._entries.move_to_end(key)
                return entry[1]
        value = self._compute(obj)
        self.put(obj, value)
        return value

    def put(self, obj: K, value: V) -> None:
        """Record ``value`` for ``obj`` without computing it (known from an equal object met before)."""
        key = id(obj)
        with self._lock:
            self._entries[key] = (obj, value)
            self._entries.move_to_end(key)
            if self._size is not None and len(self._entries) > self._size:
                self._entries.popitem(last=False)

    def __len__(self) -> int:
        return len(self._entries)


class WeakIdentityCache(Generic[K, V]):
    """``cache(obj)`` is ``compute(obj)``, computed once per object for as long as the object lives.

    For values derived from objects their owner holds anyway (a library's specs, mounted again and again):
    unlike :class:`IdentityCache` it keeps no object alive, so it needs no bound, and a library larger than a
    bound is not hashed again and again. An entry goes when its object is collected (a weak reference's
    callback, which runs before the object's id can be given to another one). Safe to share between threads.
    """

    def __init__(self, compute: Callable[[K], V]) -> None:
        self._compute = compute
        self._entries: dict[int, tuple[weakref.ref[K], V]] = {}

    def __call__(self, obj: K) -> V:
        entry = self._entries.get(id(obj))
        if entry is not None and entry[0]() is obj:
            return entry[1]
        value = self._compute(obj)
        self.put(obj, value)
        return value

    def put(self, obj: K, value: V) -> None:
        """Record ``value`` for ``obj`` without computing it (known from an equal object met before)."""
        key = id(obj)

        def forget(ref: weakref.ref[K]) -> None:
            entry = self._entries.get(key)
            if entry is not None and entry[0] is ref:
                self._entries.pop(key, None)

        self._entries[key] = (weakref.ref(obj, forget), value)

    def __len__(self) -> int:
        return len(self._entries)
