"""One interface for every synthesizer, offline or LLM-driven."""

from __future__ import annotations

from typing import Protocol

from pydantic import BaseModel, Field

from compoworld_assets.engine.canonical import text_hash
from compoworld_assets.engine.specs.model import ServiceSpec

# Synthesizers whose modules CompoWorld itself writes (from templates, spec data as literals): they may
# run where bubblewrap cannot isolate them. Any other module is untrusted code.
TRUSTED_SYNTHESIZERS = frozenset({"offline"})


class SynthesizedModule(BaseModel):
    """The source of one service's module plus provenance. ``source_hash`` identifies it."""

    service_id: str
    service_version: str
    spec_hash: str
    synthesizer: str
    synthesizer_version: str
    source: str
    implemented_tools: list[str] = Field(description="Tools the module implements in code.")
    unimplemented_tools: list[str] = Field(default_factory=list,
                                           description="Tools left to the world model, with no code.")
    rounds: int = 1
    log: list[str] = Field(default_factory=list, description="What the synthesizer did, round by round.")

    @property
    def source_hash(self) -> str:
        return text_hash(self.source)

    @property
    def trusted(self) -> bool:
        return self.synthesizer in TRUSTED_SYNTHESIZERS


class Synthesizer(Protocol):
    name: str
    version: str

    def synthesize(self, spec: ServiceSpec) -> SynthesizedModule:
        """Write a module implementing ``spec`` (see runtime/executor.py for the module contract)."""
