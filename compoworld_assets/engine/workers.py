"""How many worker processes a batch of independent jobs is worth, on the cores this process may use."""

from __future__ import annotations

import os

MAX_WORKERS = 8


def available_cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def worker_count(n_jobs: int, jobs_per_worker: int, cores: int | None = None) -> int:
    """One worker per core, at most :data:`MAX_WORKERS`, and at most one per ``jobs_per_worker`` jobs:
    a worker pays an interpreter start and the engine's imports, worth it only for that many jobs."""
    return max(1, min(available_cores() if cores is None else cores, MAX_WORKERS, n_jobs // jobs_per_worker))
