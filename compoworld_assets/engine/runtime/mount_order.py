"""The order to mount a batch of worlds in, so that a pool of live service processes starts as few as it can.

A :class:`~compoworld_assets.engine.runtime.service_runtime.RuntimePool` keeps the most recently mounted
services' processes alive, up to its cap, and starts a process for every other service a world mounts (~30 ms of
CPU each). A round's worlds (its tasks, rollouts and replays) each mount a few of a large library's services.
Sorted by their combination of services, the worlds of one service came together but those of its partners did
not: replaying a pool's eviction over a paper-scale round's 6,975 plans, handed to two task workers 16 at a time
with 32 live services each, they started 1,371 processes; in this order, 618 (360 when each worker runs a lane of
consecutive plans, :mod:`compoworld_assets.engine.lanes`).
"""

from __future__ import annotations

import heapq
from collections import OrderedDict, defaultdict
from collections.abc import Iterable, Sequence

from compoworld_assets.engine.runtime.sandbox import DEFAULT_LIMITS


def reuse_order(service_sets: Sequence[Iterable[str]], live: int = DEFAULT_LIMITS.max_live_services) -> list[int]:
    """Indices into ``service_sets`` in the order to mount their worlds in, for a pool keeping ``live`` services
    running: each next world is, of those sharing a service with such a pool then (the ``live`` services it
    mounted most recently), the one needing the fewest services it would not hold running; ties go to the world
    given first. A world sharing no service with the pool comes in the order given. Deterministic, and only an
    order: a world's results do not depend on it.

    Each waiting world's count of services not running is kept as services start and are evicted (a heap of
    counts, stale entries skipped), so the work grows with the worlds of the services that start, not with
    every waiting world of every running service at every step: 10,000 worlds all sharing one service took
    ~3 s when each step looked at them all."""
    worlds = [sorted(set(services)) for services in service_sets]
    worlds_of: defaultdict[str, list[int]] = defaultdict(list)
    for index, services in enumerate(worlds):
        for service in services:
            worlds_of[service].append(index)
    missing = [len(services) for services in worlds]  # services of each world not running
    waiting = [True] * len(worlds)
    sharing: list[tuple[int, int]] = []  # (missing, index) of waiting worlds sharing a running service; some stale
    running: OrderedDict[str, None] = OrderedDict()  # least recently mounted first

    def count(service: str, change: int) -> None:
        for index in worlds_of[service]:
            if waiting[index]:
                missing[index] += change
                if missing[index] < len(worlds[index]):
                    heapq.heappush(sharing, (missing[index], index))

    order: list[int] = []
    first_left = 0
    while len(order) < len(worlds):
        chosen = None
        while sharing:
            held, index = heapq.heappop(sharing)
            if waiting[index] and held == missing[index] < len(worlds[index]):
                chosen = index
                break
        if chosen is None:
            while not waiting[first_left]:
                first_left += 1
            chosen = first_left
        order.append(chosen)
        waiting[chosen] = False
        for service in worlds[chosen]:
            if service not in running:
                count(service, -1)
            running[service] = None
            running.move_to_end(service)
        while len(running) > max(live, len(worlds[chosen])):
            count(running.popitem(last=False)[0], +1)
    return order
