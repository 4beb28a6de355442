"""Row builders: engine objects to the polars tables the pipeline stores.

Every table has a fixed schema, so an empty run still writes well-typed tables.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

import polars as pl

from compoworld_assets.engine.canonical import content_hash
from compoworld_assets.engine.runtime.service_runtime import known_spec_hash
from compoworld_assets.engine.runtime.state import ServiceState
from compoworld_assets.engine.service_build import BuiltService, ServiceBuild, ServiceFailure
from compoworld_assets.engine.specs.model import QuarantinedSpec, ServiceSpec
from compoworld_assets.engine.synthesis.base import SynthesizedModule

SPEC_SCHEMA = {
    "service_id": pl.String, "name": pl.String, "domain": pl.String, "description": pl.String,
    "version": pl.String, "source_kind": pl.String, "source_location": pl.String,
    "n_entities": pl.Int64, "n_tools": pl.Int64, "spec_hash": pl.String, "spec_json": pl.String,
}
QUARANTINE_SCHEMA = {
    "quarantine_id": pl.String, "source_kind": pl.String, "location": pl.String, "reason": pl.String,
    "fragment": pl.String,
}
SERVICE_SCHEMA = {
    "service_id": pl.String, "version": pl.String, "spec_hash": pl.String, "synthesizer": pl.String,
    "synthesizer_version": pl.String, "module_hash": pl.String, "module_source": pl.String,
    "rounds": pl.Int64, "n_tools": pl.Int64, "n_verified": pl.Int64, "n_world_model": pl.Int64,
    "seed_state_hash": pl.String, "seed_state_json": pl.String, "verdicts_json": pl.String,
}
QUARANTINED_SERVICE_SCHEMA = {
    "service_id": pl.String, "spec_hash": pl.String, "synthesizer": pl.String, "stage": pl.String,
    "error_type": pl.String, "message": pl.String,
}
CATALOG_SCHEMA = {
    "qualified_name": pl.String, "service_id": pl.String, "tool_name": pl.String, "domain": pl.String,
    "description": pl.String, "effect": pl.String, "entity": pl.String, "input_types": pl.String,
    "output_types": pl.String, "implementation": pl.String, "verdict": pl.String,
    "failed_checks": pl.String, "module_hash": pl.String, "parameters_json": pl.String,
    "returns_json": pl.String, "transition_json": pl.String,
}


def spec_rows(specs: Iterable[ServiceSpec]) -> pl.DataFrame:
    rows = [
        {
            "service_id": s.id, "name": s.name, "domain": s.domain, "description": s.description,
            "version": s.version, "source_kind": s.source.kind, "source_location": s.source.location,
            "n_entities": len(s.entities), "n_tools": len(s.tools), "spec_hash": s.content_hash(),
            "spec_json": s.model_dump_json(),
        }
        for s in sorted(specs, key=lambda s: s.id)
    ]
    return pl.DataFrame(rows, schema=SPEC_SCHEMA)


def quarantine_rows(entries: Iterable[QuarantinedSpec]) -> pl.DataFrame:
    rows = [{"quarantine_id": content_hash(q.model_dump())[:16], **q.model_dump()} for q in entries]
    return pl.DataFrame(rows, schema=QUARANTINE_SCHEMA).unique("quarantine_id", keep="first",
                                                                maintain_order=True)


def specs_from_rows(frame: pl.DataFrame) -> dict[str, ServiceSpec]:
    """The stored specs by service id. Each spec's content hash is its row's ``spec_hash`` (the blocking
    ``specs_revalidate`` check holds them equal), told to the runtimes (``known_spec_hash``): hashing a paper-scale library's specs
    again took 2.2 s in every stage that mounts services, and in each of its worker processes."""
    specs = {}
    for row in frame.iter_rows(named=True):
        spec = specs[row["service_id"]] = ServiceSpec.model_validate_json(row["spec_json"])
        if row.get("spec_hash"):
            known_spec_hash(spec, row["spec_hash"])
    return specs


def service_rows(builds: Iterable[ServiceBuild]) -> pl.DataFrame:
    rows = []
    for b in builds:
        probes = {p.tool: p for p in b.world_model_probes}
        verdicts = [
            {
                "tool": v.tool,
                "implementation": v.implementation,
                "passed": v.passed,
                "failed_checks": [c.name + ": " + c.detail for c in v.checks if not c.passed],
                "world_model_probe": probes[v.tool].passed if v.tool in probes else None,
                "world_model_unavailable": v.tool in probes and probes[v.tool].unavailable,
            }
            for v in b.verdicts
        ]
        rows.append({
            "service_id": b.spec.id, "version": b.spec.version, "spec_hash": b.spec.content_hash(),
            "synthesizer": b.module.synthesizer, "synthesizer_version": b.module.synthesizer_version,
            "module_hash": b.module.source_hash, "module_source": b.module.source, "rounds": b.module.rounds,
            "n_tools": len(b.spec.tools), "n_verified": len(b.verified_tools),
            "n_world_model": len(b.world_model_tools), "seed_state_hash": b.seed_state.content_hash(),
            "seed_state_json": b.seed_state.model_dump_json(),
            "verdicts_json": json.dumps(verdicts, sort_keys=True),
        })
    return pl.DataFrame(rows, schema=SERVICE_SCHEMA)


def quarantined_service_rows(failures: Iterable[ServiceFailure], synthesizer: str) -> pl.DataFrame:
    rows = [{**f.model_dump(), "synthesizer": synthesizer} for f in sorted(failures, key=lambda f: f.service_id)]
    return pl.DataFrame(rows, schema=QUARANTINED_SERVICE_SCHEMA)


def tool_verdict(implementation: str, passed: bool, probe: bool | None, unavailable: bool = False) -> str:
    """One word per tool: ``verified`` (or ``failed``) code, or a world-model tool ``simulated``, ``unavailable``
    (its probe was told the world model cannot answer it: offline, nothing in the state holds the answer) or
    ``unusable`` (its probe failed otherwise)."""
    if implementation == "code":
        return "verified" if passed else "failed"
    return "simulated" if probe else "unavailable" if unavailable else "unusable"


def catalog_rows(specs: dict[str, ServiceSpec], services: pl.DataFrame) -> pl.DataFrame:
    rows = []
    for service in services.sort("service_id").iter_rows(named=True):
        spec = specs[service["service_id"]]
        verdicts = {v["tool"]: v for v in json.loads(service["verdicts_json"])}
        for tool in spec.tools:
            v = verdicts[tool.name]
            rows.append({
                "qualified_name": spec.qualified_tool_name(tool.name), "service_id": spec.id,
                "tool_name": tool.name, "domain": spec.domain, "description": tool.description,
                "effect": tool.effect.value if tool.effect else None, "entity": tool.entity,
                "input_types": json.dumps(tool.input_types(), sort_keys=True),
                "output_types": json.dumps(tool.output_types(), sort_keys=True),
                "implementation": v["implementation"],
                "verdict": tool_verdict(v["implementation"], v["passed"], v["world_model_probe"],
                                        v.get("world_model_unavailable", False)),
                "failed_checks": json.dumps(v["failed_checks"]),
                "module_hash": service["module_hash"],
                "parameters_json": json.dumps(tool.parameters, sort_keys=True),
                "returns_json": json.dumps(tool.returns, sort_keys=True),
                "transition_json": (
                    json.dumps(tool.transition.model_dump(mode="json"), sort_keys=True) if tool.transition else None
                ),
            })
    return pl.DataFrame(rows, schema=CATALOG_SCHEMA)


def built_services_from_rows(specs: dict[str, ServiceSpec], services: pl.DataFrame) -> dict[str, BuiltService]:
    """Rebuild what runtimes need from the stored ``services`` table."""
    built: dict[str, BuiltService] = {}
    for row in services.iter_rows(named=True):
        spec = specs.get(row["service_id"])
        if spec is None:
            continue
        verdicts = json.loads(row["verdicts_json"])
        implementation = {v["tool"]: v["implementation"] for v in verdicts}
        module = SynthesizedModule(
            service_id=spec.id, service_version=row["version"], spec_hash=row["spec_hash"],
            synthesizer=row["synthesizer"], synthesizer_version=row["synthesizer_version"],
            source=row["module_source"], rounds=row["rounds"],
            implemented_tools=sorted(t for t, impl in implementation.items() if impl == "code"),
            unimplemented_tools=sorted(t for t, impl in implementation.items() if impl != "code"),
        )
        built[spec.id] = BuiltService(spec=spec, module=module, implementation=implementation,
                                      simulated=sorted(v["tool"] for v in verdicts if v["world_model_probe"]))
    return built


def seed_states_from_rows(services: pl.DataFrame) -> dict[str, ServiceState]:
    return {row["service_id"]: ServiceState.model_validate_json(row["seed_state_json"])
            for row in services.iter_rows(named=True)}
