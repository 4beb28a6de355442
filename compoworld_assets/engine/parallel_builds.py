"""Build many services at once, in worker processes, with the same outcomes as one by one.

A service's build (:func:`~compoworld_assets.engine.service_build.try_build_service`) depends only
on its spec, the seed and the backends, so builds are independent: :func:`build_services` runs them
in ``workers`` processes and returns the outcomes in the order of the specs, equal to what one
process gives (the world-model cache is a file the processes share; sqlite does the locking).

Each worker makes its backends once, by calling ``backends`` (a picklable callable such as
:class:`~compoworld_assets.engine.backends.BackendRecipe`: settings, not live clients). The builds run
through :func:`~compoworld_assets.engine.workers.run_isolated`, so when a worker process dies (killed, out
of memory) only the builds in flight are lost: each is tried again alone, and one that kills that process
too is a :class:`~compoworld_assets.engine.service_build.ServiceFailure` at stage ``worker``; the other
services are built.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from compoworld_assets.engine.backends import BuildBackends
from compoworld_assets.engine.service_build import ServiceBuild, ServiceFailure, spec_hash, try_build_service
from compoworld_assets.engine.specs.model import ServiceSpec
from compoworld_assets.engine.workers import WorkerLost, run_isolated, worker_count

Outcome = ServiceBuild | ServiceFailure
Kept = TypeVar("Kept")
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
                   workers: int = 1, keep: Callable[[Outcome], Kept] | None = None) -> list[Kept]:
    """The build outcome of each spec, in order; ``workers`` > 1 builds in that many processes.

    ``keep`` turns each outcome, as soon as it is made, into what the caller keeps of it (a table row, the
    parts a runtime needs), so that a large library's builds (their seed states above all) are never all
    held at once; without it the outcomes themselves are returned.
    """
    kept: Callable[[Outcome], Any] = keep or _itself
    if workers <= 1 or len(specs) <= 1:
        made = backends()
        return [kept(_build(spec, made, settings)) for spec in specs]
    # Largest first, so that a big spec does not start last and leave the other workers idle.
    order = sorted(range(len(specs)), key=lambda i: (-len(specs[i].tools), i))
    outcomes = run_isolated([(spec, settings) for spec in specs], _build_in_worker, workers, _start_worker,
                            (backends,), order, keep=kept)
    return [kept(_worker_failure(spec, outcome)) if isinstance(outcome, WorkerLost) else outcome
            for spec, outcome in zip(specs, outcomes, strict=True)]


def _itself(outcome: Outcome) -> Outcome:
    return outcome


def _worker_failure(spec: ServiceSpec, lost: WorkerLost) -> ServiceFailure:
    return ServiceFailure(service_id=spec.id, spec_hash=spec_hash(spec), stage="worker", error_type=lost.error_type,
                          message=lost.message)


def _build(spec: ServiceSpec, made: BuildBackends, settings: BuildSettings) -> Outcome:
    return try_build_service(spec, made.synthesizer, made.executor_factory, made.world_model, seed=settings.seed,
                             rows_per_entity=settings.rows_per_entity, time_limit_s=settings.time_limit_s)


_WORKER_BACKENDS: BuildBackends | None = None


def _start_worker(backends: Callable[[], BuildBackends]) -> None:
    global _WORKER_BACKENDS  # one set of backends per worker process, made once
    _WORKER_BACKENDS = backends()


def _build_in_worker(job: tuple[ServiceSpec, BuildSettings]) -> Outcome:
    spec, settings = job
    if _WORKER_BACKENDS is None:
        raise RuntimeError("build worker started without backends")
    return _build(spec, _WORKER_BACKENDS, settings)
