"""Build many services at once, in worker processes, with the same outcomes as one by one.

A service's build (:func:`~compoworld_assets.engine.service_build.try_build_service`) depends only
on its spec, the seed and the backends, so builds are independent: :func:`build_services` runs them
in ``workers`` processes and returns the outcomes in the order of the specs, equal to what one
process gives (the world-model cache is a file the processes share; sqlite does the locking).

Each worker makes its backends once, by calling ``backends`` (a picklable callable such as
:class:`~compoworld_assets.engine.backends.BackendRecipe`: settings, not live clients). At most ``workers`` builds are in flight,
so when a worker process dies (killed, out of memory) only those builds are lost: each is tried
again alone, in a fresh process, and one that kills that process too is a
:class:`~compoworld_assets.engine.service_build.ServiceFailure` at stage ``worker``; the other
services are built.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass

from compoworld_assets.engine.backends import BuildBackends
from compoworld_assets.engine.service_build import ServiceBuild, ServiceFailure, spec_hash, try_build_service
from compoworld_assets.engine.specs.model import ServiceSpec
from compoworld_assets.engine.workers import worker_count

Outcome = ServiceBuild | ServiceFailure
# A worker pays an interpreter start and the engine's imports (~1 s): worth it from this many builds up.
SERVICES_PER_WORKER = 8


@dataclass(frozen=True)
class BuildSettings:
    seed: int
    rows_per_entity: int = 5
    time_limit_s: float | None = None


def build_workers(n_services: int, cores: int | None = None) -> int:
    """Worker processes for ``n_services`` builds (:func:`~compoworld_assets.engine.workers.worker_count`)."""
    return worker_count(n_services, SERVICES_PER_WORKER, cores)


def build_services(specs: Sequence[ServiceSpec], backends: Callable[[], BuildBackends], settings: BuildSettings,
                   workers: int = 1) -> list[Outcome]:
    """The build outcome of each spec, in order; ``workers`` > 1 builds in that many processes."""
    if workers <= 1 or len(specs) <= 1:
        made = backends()
        return [_build(spec, made, settings) for spec in specs]
    outcomes: dict[int, Outcome] = {}
    # Largest first, so that a big spec does not start last and leave the other workers idle.
    pending = sorted(range(len(specs)), key=lambda i: (-len(specs[i].tools), i))
    while pending:
        lost, pending = _run_pool(specs, pending, backends, settings, workers, outcomes)
        for index in lost:  # alone, so that a spec that kills its process is told apart from its neighbours
            if _run_pool(specs, [index], backends, settings, 1, outcomes)[0]:
                outcomes[index] = _worker_failure(specs[index], "BrokenProcessPool",
                                                  "the build's worker process died (killed or out of memory)")
    return [outcomes[i] for i in range(len(specs))]


def _run_pool(specs: Sequence[ServiceSpec], indices: list[int], backends: Callable[[], BuildBackends],
              settings: BuildSettings, workers: int, outcomes: dict[int, Outcome]) -> tuple[list[int], list[int]]:
    """Build ``indices`` in that order with at most ``workers`` in flight, filling ``outcomes``. When a worker
    dies, returns (the builds in flight then, the builds not started); else two empty lists."""
    queue = list(reversed(indices))  # popped from the end: in the order given
    running: dict[Future[Outcome], int] = {}
    context = multiprocessing.get_context("forkserver")
    with ProcessPoolExecutor(workers, mp_context=context, initializer=_start_worker, initargs=(backends,)) as pool:
        while queue or running:
            while queue and len(running) < workers:
                index = queue.pop()
                running[pool.submit(_build_in_worker, specs[index], settings)] = index
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                index = running.pop(future)
                try:
                    outcomes[index] = future.result()
                except BrokenProcessPool:
                    return sorted([index, *running.values()]), list(reversed(queue))
                except Exception as error:  # noqa: BLE001 - e.g. an outcome that cannot cross processes
                    outcomes[index] = _worker_failure(specs[index], type(error).__name__, str(error))
    return [], []


def _worker_failure(spec: ServiceSpec, error_type: str, message: str) -> ServiceFailure:
    return ServiceFailure(service_id=spec.id, spec_hash=spec_hash(spec), stage="worker", error_type=error_type,
                          message=message[:2000])


def _build(spec: ServiceSpec, made: BuildBackends, settings: BuildSettings) -> Outcome:
    return try_build_service(spec, made.synthesizer, made.executor_factory, made.world_model, seed=settings.seed,
                             rows_per_entity=settings.rows_per_entity, time_limit_s=settings.time_limit_s)


_WORKER_BACKENDS: BuildBackends | None = None


def _start_worker(backends: Callable[[], BuildBackends]) -> None:
    global _WORKER_BACKENDS  # one set of backends per worker process, made once
    _WORKER_BACKENDS = backends()


def _build_in_worker(spec: ServiceSpec, settings: BuildSettings) -> Outcome:
    if _WORKER_BACKENDS is None:
        raise RuntimeError("build worker started without backends")
    return _build(spec, _WORKER_BACKENDS, settings)
