"""Build one service end to end: seed its state, synthesize, verify, check the world model.

This is the pure core of the ``services`` asset: given a spec and the backends, it returns
everything the asset stores, and nothing here knows about Dagster. :func:`try_build_service`
is the failure boundary of one service: whatever a stage raises (``DeadlineExceeded`` from the
per-service time limit included) comes back as a :class:`ServiceFailure` naming the stage, so a
bad service is quarantined and the others are built.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Literal

from pydantic import BaseModel

from compoworld_assets.engine.deadline import check_deadline, time_limit
from compoworld_assets.engine.envelope import NOT_FOUND, UNAVAILABLE, is_envelope
from compoworld_assets.engine.library.seeding import Population, seed_service_state
from compoworld_assets.engine.runtime.executor import ToolExecutor
from compoworld_assets.engine.runtime.service_runtime import ServiceMount
from compoworld_assets.engine.runtime.state import ServiceState
from compoworld_assets.engine.specs.model import ServiceSpec, storable_text
from compoworld_assets.engine.synthesis.base import SynthesizedModule, Synthesizer
from compoworld_assets.engine.values import schema_value
from compoworld_assets.engine.verification import ToolVerdict, generate_cases, verify_service
from compoworld_assets.engine.world_model.base import WorldModel
from compoworld_assets.engine.world_model.change import InvalidChange, apply_change
from compoworld_assets.engine.world_model.schema import schema_errors


class WorldModelProbe(BaseModel):
    """One simulated call of a world-model tool: did it return a type-valid envelope?"""

    tool: str
    passed: bool
    detail: str
    unavailable: bool = False
    """The world model said it cannot answer the call (offline: nothing in the state holds the answer)."""


class BuiltService(BaseModel):
    """What a runtime needs to serve a service: its spec, module and per-tool implementation."""

    spec: ServiceSpec
    module: SynthesizedModule
    implementation: dict[str, Literal["code", "world_model"]]
    simulated: list[str] = []
    """World-model tools whose probe returned a type-valid result (the others are unusable)."""

    def mount(self) -> ServiceMount:
        """What a runtime pool mounts to serve this service."""
        return ServiceMount(self.spec, self.module, self.implementation)


class ServiceBuild(BaseModel):
    spec: ServiceSpec
    module: SynthesizedModule
    seed_state: ServiceState
    verdicts: list[ToolVerdict]
    world_model_probes: list[WorldModelProbe]

    @property
    def verified_tools(self) -> list[str]:
        return [v.tool for v in self.verdicts if v.implementation == "code" and v.passed]

    @property
    def world_model_tools(self) -> list[str]:
        return [v.tool for v in self.verdicts if v.implementation == "world_model"]

    def built(self) -> BuiltService:
        return BuiltService(spec=self.spec, module=self.module,
                            implementation={v.tool: v.implementation for v in self.verdicts},
                            simulated=sorted(p.tool for p in self.world_model_probes if p.passed))


# ``worker``: the process building it died (see :mod:`compoworld_assets.engine.parallel_builds`).
Stage = Literal["spec", "seed", "synthesis", "verification", "world_model_probe", "store", "worker"]


class ServiceFailure(BaseModel):
    """Why one service could not be built: the stage that failed and the exception it raised."""

    service_id: str
    spec_hash: str | None
    stage: Stage
    error_type: str
    message: str

    @classmethod
    def from_exception(cls, service_id: str, spec_hash: str | None, stage: Stage,
                       error: BaseException) -> ServiceFailure:
        return cls(service_id=service_id, spec_hash=spec_hash, stage=stage, error_type=type(error).__name__,
                   message=storable_text(str(error) or type(error).__name__)[:2000])


class StageFailed(Exception):
    """An exception raised inside one build stage, with the stage's name."""

    def __init__(self, stage: Stage, error: Exception) -> None:
        super().__init__(f"{stage}: {type(error).__name__}: {error}")
        self.stage = stage
        self.error = error


@contextmanager
def _stage(name: Stage) -> Iterator[None]:
    try:
        check_deadline()
        yield
    except StageFailed:
        raise
    except Exception as error:
        raise StageFailed(name, error) from error


def build_service(
    spec: ServiceSpec,
    synthesizer: Synthesizer,
    executor_factory: Callable[[str], ToolExecutor],
    world_model: WorldModel,
    seed: int,
    rows_per_entity: int = 5,
    time_limit_s: float | None = None,
) -> ServiceBuild:
    """Seed, synthesize, verify and probe; an exception comes out as :class:`StageFailed`.

    ``time_limit_s`` bounds the whole build, cooperatively (:mod:`compoworld_assets.engine.deadline`):
    it is checked between stages, tools and verification cases, and every sandboxed call has its own
    timeout; past it the stage running raises ``DeadlineExceeded``.
    """
    with time_limit(time_limit_s, f"building {spec.id}"):
        with _stage("seed"):
            population = Population.generate(seed)
            state = seed_service_state(spec, population, seed, rows_per_entity=rows_per_entity)
        with _stage("synthesis"):
            module = synthesizer.synthesize(spec)
        with _stage("verification"):
            verification = verify_service(spec, module, executor_factory, state, seed)
        with _stage("world_model_probe"):
            probes = [
                probe_world_model(spec, verdict.tool, world_model, state, seed)
                for verdict in verification.verdicts
                if verdict.implementation == "world_model"
            ]
            return ServiceBuild(spec=spec, module=module, seed_state=state, verdicts=verification.verdicts,
                                world_model_probes=probes)


def try_build_service(spec: ServiceSpec, *args: Any, **kwargs: Any) -> ServiceBuild | ServiceFailure:
    """:func:`build_service` (same arguments) that returns a :class:`ServiceFailure` instead of raising."""
    try:
        return build_service(spec, *args, **kwargs)
    except StageFailed as failed:
        return ServiceFailure.from_exception(spec.id, spec_hash(spec), failed.stage, failed.error)


def probe_world_model(spec: ServiceSpec, tool_name: str, world_model: WorldModel, state: ServiceState,
                      seed: int) -> WorldModelProbe:
    """Simulate one valid call (ids point at stored records) and type-check the answer. A look-up that finds
    nothing is asked again for a stored record (:func:`_stored_look_up`), as a task would ask it."""
    check_deadline()
    tool = spec.tool(tool_name)
    valid = [c.args for c in generate_cases(spec, tool, state, seed) if c.kind == "valid"]
    args = valid[0] if valid else schema_value(tool.parameters, random.Random(f"{seed}:{spec.id}:{tool_name}"))
    simulation = world_model.simulate(spec, tool, args, state)
    if not simulation.result.get("success") and simulation.result.get("error", {}).get("code") == NOT_FOUND:
        again = _stored_look_up(spec, args, state)
        if again is not None:
            simulation = world_model.simulate(spec, tool, again, state)
    result = simulation.result
    try:
        apply_change(spec, tool, state, simulation.change)
    except InvalidChange as problem:
        return WorldModelProbe(tool=tool_name, passed=False, detail=f"state change: {str(problem)[:300]}")
    if not is_envelope(result):
        return WorldModelProbe(tool=tool_name, passed=False, detail="world model returned a non-envelope")
    if not result["success"]:
        return WorldModelProbe(tool=tool_name, passed=False, detail=str(result["error"]["message"])[:300],
                               unavailable=result["error"]["code"] == UNAVAILABLE)
    problems = schema_errors(tool.returns or {}, result["data"], limit=1)
    if problems:
        return WorldModelProbe(tool=tool_name, passed=False, detail=f"returns schema: {problems[0][:300]}")
    return WorldModelProbe(tool=tool_name, passed=True, detail="type-valid simulated result")


def _stored_look_up(spec: ServiceSpec, args: dict[str, Any], state: ServiceState) -> dict[str, Any] | None:
    """``args`` with the arguments that name fields of an entity set to the values of its first stored record (the
    entity whose fields they name most), or None when no argument names a field of a stored record."""
    best: tuple[int, str] | None = None
    for entity in spec.entities:
        named = len(set(args) & {f.name for f in entity.fields})
        if named and state.tables.get(entity.name) and (best is None or named > best[0]):
            best = (named, entity.name)
    if best is None:
        return None
    table = state.tables[best[1]]
    record = table[min(table)]
    return {name: record[name] if name in record and record[name] is not None else value
            for name, value in args.items()}


def spec_hash(spec: ServiceSpec) -> str | None:
    """The spec's content hash, or None for a spec that cannot be hashed (its failure is reported without one)."""
    try:
        return spec.content_hash()
    except (TypeError, ValueError):
        return None

