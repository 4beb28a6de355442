"""Worker processes for batches of independent jobs: how many are worth it, and running jobs in them so that
one job that kills its process costs only that job.

Service builds (:mod:`compoworld_assets.engine.parallel_builds`) and the task factory's plans
(:func:`compoworld_assets.engine.tasks.pipeline.generate_tasks`) both run through :func:`run_isolated`.
"""

from __future__ import annotations

import multiprocessing
import os
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any, TypeVar

from compoworld_assets.engine.lanes import cut_into_lanes, next_job

MAX_WORKERS = 8

Job = TypeVar("Job")
Result = TypeVar("Result")


def available_cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def worker_count(n_jobs: int, jobs_per_worker: int, cores: int | None = None) -> int:
    """One worker per core, at most :data:`MAX_WORKERS`, and at most one per ``jobs_per_worker`` jobs:
    a worker pays an interpreter start and the engine's imports, worth it only for that many jobs."""
    return max(1, min(available_cores() if cores is None else cores, MAX_WORKERS, n_jobs // jobs_per_worker))


@dataclass(frozen=True)
class WorkerLost:
    """A job that has no result: its worker process died (killed, out of memory) also when the job ran
    alone, or the job raised where the caller's own error handling could not catch it (its result could
    not cross back, for example)."""

    error_type: str
    message: str


def run_isolated(jobs: Sequence[Job], run: Callable[[Job], Result], workers: int,
                 initializer: Callable[..., None], initargs: tuple[Any, ...] = (),
                 order: Sequence[int] | None = None,
                 keep: Callable[[Result], Any] | None = None, batch: int = 1) -> list[Any]:
    """``run(job)`` for every job, in ``workers`` forkserver processes (each set up once by
    ``initializer(*initargs)``); the results in the order of ``jobs``. With ``keep``, each result is
    replaced by ``keep(result)`` as soon as it arrives, so large results are not all held at once.

    Jobs start in ``order`` (indices; default: as given), ``batch`` consecutive ones at a time to one worker
    (jobs that reuse what their neighbours in ``order`` set up in the worker: running services), one batch in
    flight per worker, each worker running a lane of consecutive batches (:mod:`compoworld_assets.engine.lanes`:
    handed out in turn, neighbouring batches went to both workers, which both started their services). When a
    worker dies only the jobs in flight are lost: each is run again alone, in a fresh process, and one that
    kills that process too comes back as :class:`WorkerLost`; the other jobs run. A job that raises is a
    :class:`WorkerLost` saying why, and costs only itself. ``run`` and ``initializer`` must be importable by
    name (module-level functions), and jobs and results picklable.
    """
    results: dict[int, Any] = {}
    pending = list(range(len(jobs)) if order is None else order)
    while pending:
        lost, pending = _run_pool(jobs, pending, run, workers, initializer, initargs, results, keep, batch)
        for index in lost:  # alone, so that a job that kills its process is told apart from its neighbours
            if _run_pool(jobs, [index], run, 1, initializer, initargs, results, keep, 1)[0]:
                results[index] = WorkerLost("BrokenProcessPool", "the worker process died (killed or out of memory)")
    return [results[i] for i in range(len(jobs))]


def _run_batch(run: Callable[[Job], Result], jobs: list[Job]) -> list[Result | WorkerLost]:
    """In a worker: each job's result, or why it raised (the batch's other jobs still run)."""
    outcomes: list[Result | WorkerLost] = []
    for job in jobs:
        try:
            outcomes.append(run(job))
        except Exception as error:  # noqa: BLE001 - one job's defect is its own result
            outcomes.append(WorkerLost(type(error).__name__, str(error)[:2000]))
    return outcomes


def _run_pool(jobs: Sequence[Job], indices: list[int], run: Callable[[Job], Result], workers: int,
              initializer: Callable[..., None], initargs: tuple[Any, ...],
              results: dict[int, Any], keep: Callable[[Result], Any] | None,
              batch: int) -> tuple[list[int], list[int]]:
    """Run ``indices`` in that order, ``batch`` at a time, in ``workers`` lanes, filling ``results``. When a
    worker dies, returns (the jobs in flight then, by index; the jobs not started, in ``indices`` order); else
    two empty lists. A batch whose results cannot come back (one that cannot be pickled) is run again a job at
    a time.

    A lane's next batch is handed out as soon as its last one's results are back, before they are kept: with one
    batch in flight per worker, the worker that just finished is then usually the only one waiting for work, so
    it runs the lane on (two workers finishing at once may swap lanes: that costs process starts, not results)."""
    lanes = cut_into_lanes([indices[i:i + batch] for i in range(0, len(indices), batch)], workers)
    running: dict[Future[list[Any]], tuple[list[int], deque[list[int]]]] = {}
    context = multiprocessing.get_context("forkserver")
    with ProcessPoolExecutor(workers, mp_context=context, initializer=initializer, initargs=initargs) as pool:

        def start_next(lane: deque[list[int]]) -> bool:
            """Hand out the lane's next batch; False when the pool is broken (the batch counts as not started)."""
            chunk = next_job(lanes, lane)
            if chunk is not None:
                try:
                    running[pool.submit(_run_batch, run, [jobs[i] for i in chunk])] = (chunk, lane)
                except BrokenProcessPool:
                    return False
            return True

        def broken(lost: list[list[int]]) -> tuple[list[int], list[int]]:
            _kill_workers(pool)
            in_flight = sorted(i for chunk in [*lost, *(c for c, _ in running.values())] for i in chunk)
            settled = set(in_flight) | results.keys()
            return in_flight, [i for i in indices if i not in settled]

        if not all(start_next(lane) for lane in lanes):
            return broken([])
        while running:
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                chunk, lane = running.pop(future)
                try:
                    outcomes = future.result()
                except BrokenProcessPool:
                    return broken([chunk])
                except Exception as error:  # noqa: BLE001 - e.g. a result that cannot cross processes
                    if len(chunk) > 1:
                        lane.extendleft([i] for i in reversed(chunk))
                        chunk, outcomes = [], []
                    else:
                        outcomes = [WorkerLost(type(error).__name__, str(error)[:2000])]
                alive = start_next(lane)
                for index, outcome in zip(chunk, outcomes, strict=True):
                    kept = keep is not None and not isinstance(outcome, WorkerLost)
                    results[index] = keep(outcome) if kept else outcome
                if not alive:
                    return broken([])
    return [], []


def _kill_workers(pool: ProcessPoolExecutor) -> None:
    """SIGKILL the workers of a broken pool before leaving it. The pool's own teardown sends SIGTERM and then
    waits for every worker without a time limit; a worker that outlives SIGTERM (one in a long build whose
    result nobody reads any more) kept that wait, and the whole run, hanging once in a CI rehearsal. Their
    jobs are run again anyway. Python 3.14 has ``ProcessPoolExecutor.kill_workers``; before it the processes
    are only in ``_processes``."""
    try:
        processes = list((getattr(pool, "_processes", None) or {}).values())
    except RuntimeError:  # the pool's manager thread changed the dict while it was read
        processes = []
    for process in processes:
        process.kill()
