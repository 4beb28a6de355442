"""The order to mount a batch of worlds in, so that a pool of live service processes starts as few as it can.

A :class:`~compoworld_assets.engine.runtime.service_runtime.RuntimePool` keeps the most recently mounted
services' processes alive, up to its cap, and starts a process for every other service a world mounts (~30 ms of
CPU each). A round's worlds (its tasks, rollouts and replays) each mount a few of a large library's services.
Sorted by their combination of services, the worlds of one service came together but those of its partners did
not: replaying a pool's eviction over a paper-scale round's 6,975 plans, handed to two task workers 16 at a time
with 32 live services each, they started 1,371 processes; in this order, 634.
"""

from __future__ import annotations

from collections import OrderedDict, defaultdict
from collections.abc import Iterable, Sequence

from compoworld_assets.engine.runtime.sandbox import DEFAULT_LIMITS


def reuse_order(service_sets: Sequence[Iterable[str]], live: int = DEFAULT_LIMITS.max_live_services) -> list[int]:
    """Indices into ``service_sets`` in the order to mount their worlds in, for a pool keeping ``live`` services
    running: each next world is the one needing the fewest services such a pool would not hold running then
    (those it mounted most recently), ties going to the world given first; among the worlds of the services it
    holds, looked for from the most recently mounted service on, stopping at the first that has a world needing
    none. A world sharing no service with the pool comes in the order given. Deterministic, and only an order:
    a world's results do not depend on it."""
    worlds = [sorted(set(services)) for services in service_sets]
    waiting: defaultdict[str, set[int]] = defaultdict(set)
    for index, services in enumerate(worlds):
        for service in services:
            waiting[service].add(index)
    running: OrderedDict[str, None] = OrderedDict()  # least recently mounted first
    taken = [False] * len(worlds)
    order: list[int] = []
    first_left = 0
    while len(order) < len(worlds):
        chosen = _next_world(worlds, waiting, running)
        if chosen is None:
            while taken[first_left]:
                first_left += 1
            chosen = first_left
        order.append(chosen)
        taken[chosen] = True
        for service in worlds[chosen]:
            waiting[service].discard(chosen)
            running[service] = None
            running.move_to_end(service)
        while len(running) > max(live, len(worlds[chosen])):
            running.popitem(last=False)
    return order


def _next_world(worlds: list[list[str]], waiting: defaultdict[str, set[int]],
                running: OrderedDict[str, None]) -> int | None:
    best: tuple[int, int] | None = None
    for service in reversed(running):
        for index in waiting[service]:
            key = (sum(s not in running for s in worlds[index]), index)
            if best is None or key < best:
                best = key
        if best is not None and best[0] == 0:
            break
    return None if best is None else best[1]
