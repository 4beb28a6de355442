"""Jobs run side by side in lanes of consecutive ones, so that whatever runs each lane (a pool of service
processes, a worker process holding one) sees the same services again and again.

A world factory hands a finished episode's pool of service processes to the next episode that asks. Episodes
taken from one shared queue alternated between the pools, so each pool saw every other combination of services
and started about half again as many processes (replayed on a paper-scale round's 6,601 tasks, at 32 live
services per pool: ~1,600 starts, ~1,050 with lanes). Rollouts (:func:`.rollout.engine.run_rollouts`), replays
(:func:`.rollout.verify.verify_trajectories`) and a task round's worker processes (:func:`.workers.run_isolated`)
run their jobs this way.
"""

from __future__ import annotations

from collections import deque
from typing import TypeVar

Job = TypeVar("Job")


def cut_into_lanes(jobs: list[Job], count: int) -> list[deque[Job]]:
    """``jobs`` (in the order that reuses their services) cut into ``count`` runs of consecutive ones."""
    size = -(-len(jobs) // max(count, 1))
    return [deque(jobs[n * size:(n + 1) * size]) for n in range(max(count, 1))]


def next_job(lanes: list[deque[Job]], own: deque[Job]) -> Job | None:
    """The next job of ``own`` lane; once it is empty, the last job of the longest other lane (so no lane idles
    while another still has a tail to run, and both keep running consecutive jobs). Lanes run by threads
    call this under one lock."""
    if own:
        return own.popleft()
    longest = max(lanes, key=len)
    return longest.pop() if longest else None
