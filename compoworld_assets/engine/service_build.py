"""Build one service end to end: seed its state, synthesize, verify, check the world model.

This is the pure core of the ``services`` asset: given a spec and the backends, it returns
everything the asset stores, and nothing here knows about Dagster.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel

from compoworld_assets.engine.envelope import is_envelope
from compoworld_assets.engine.library.seeding import Population, seed_service_state
from compoworld_assets.engine.runtime.executor import ToolExecutor
from compoworld_assets.engine.runtime.state import ServiceState
from compoworld_assets.engine.specs.model import ServiceSpec
from compoworld_assets.engine.synthesis.base import SynthesizedModule, Synthesizer
from compoworld_assets.engine.values import schema_value
from compoworld_assets.engine.verification import ToolVerdict, generate_cases, verify_service
from compoworld_assets.engine.world_model.base import WorldModel


class WorldModelProbe(BaseModel):
    """One simulated call of a world-model tool: did it return a type-valid envelope?"""

    tool: str
    passed: bool
    detail: str


class BuiltService(BaseModel):
    """What a runtime needs to serve a service: its spec, module and per-tool implementation."""

    spec: ServiceSpec
    module: SynthesizedModule
    implementation: dict[str, Literal["code", "world_model"]]


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
                            implementation={v.tool: v.implementation for v in self.verdicts})


def build_service(
    spec: ServiceSpec,
    synthesizer: Synthesizer,
    executor_factory: Callable[[str], ToolExecutor],
    world_model: WorldModel,
    seed: int,
    rows_per_entity: int = 5,
) -> ServiceBuild:
    population = Population.generate(seed)
    state = seed_service_state(spec, population, seed, rows_per_entity=rows_per_entity)
    module = synthesizer.synthesize(spec)
    verification = verify_service(spec, module, executor_factory, state, seed)
    probes = [
        probe_world_model(spec, verdict.tool, world_model, state, seed)
        for verdict in verification.verdicts
        if verdict.implementation == "world_model"
    ]
    return ServiceBuild(spec=spec, module=module, seed_state=state, verdicts=verification.verdicts,
                        world_model_probes=probes)


def probe_world_model(spec: ServiceSpec, tool_name: str, world_model: WorldModel, state: ServiceState,
                      seed: int) -> WorldModelProbe:
    """Simulate one valid call (ids point at stored records) and type-check the answer."""
    import jsonschema

    tool = spec.tool(tool_name)
    valid = [c.args for c in generate_cases(spec, tool, state, seed) if c.kind == "valid"]
    args = valid[0] if valid else schema_value(tool.parameters, random.Random(f"{seed}:{spec.id}:{tool_name}"))
    result = world_model.simulate(spec, tool, args, state)
    if not is_envelope(result):
        return WorldModelProbe(tool=tool_name, passed=False, detail="world model returned a non-envelope")
    if not result["success"]:
        return WorldModelProbe(tool=tool_name, passed=False, detail=result["error"]["message"][:300])
    try:
        jsonschema.validate(result["data"], tool.returns or {})
    except jsonschema.ValidationError as exc:
        return WorldModelProbe(tool=tool_name, passed=False, detail=f"returns schema: {exc.message[:300]}")
    return WorldModelProbe(tool=tool_name, passed=True, detail="type-valid simulated result")
