"""What verification produces: per-check results, per-tool verdicts, a per-service summary."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

Implementation = Literal["code", "world_model"]


class VerificationCase(BaseModel):
    """One generated call of a tool on the seed state.

    ``valid`` cases must succeed with data matching the tool's returns schema, have the tool's
    effect and be deterministic; ``invalid`` cases must return a non-crash error envelope and
    leave the state unchanged.
    """

    tool: str
    name: str
    kind: Literal["valid", "invalid"]
    args: dict[str, Any]


class CheckResult(BaseModel):
    name: str
    passed: bool
    detail: str = ""


class ToolVerdict(BaseModel):
    """Whether a tool's code passed every check; tools that did not are served by the world model."""

    tool: str
    implementation: Implementation
    passed: bool
    checks: list[CheckResult] = Field(default_factory=list)

    def failures(self) -> list[CheckResult]:
        return [c for c in self.checks if not c.passed]


class ServiceVerification(BaseModel):
    service_id: str
    source_hash: str
    seed: int
    verdicts: list[ToolVerdict]
    violations: list[str] = Field(
        default_factory=list,
        description="Sandbox violations the module committed while loading or being verified; a module "
        "with any is hostile or broken, whatever its verdicts.",
    )

    def verdict(self, tool: str) -> ToolVerdict:
        for v in self.verdicts:
            if v.tool == tool:
                return v
        raise KeyError(f"{self.service_id}: no verdict for tool {tool!r}")

    @property
    def code_tools(self) -> list[str]:
        return sorted(v.tool for v in self.verdicts if v.implementation == "code")

    @property
    def world_model_tools(self) -> list[str]:
        return sorted(v.tool for v in self.verdicts if v.implementation == "world_model")

    @property
    def verified_share(self) -> float:
        """The fraction of the service's tools served by verified code."""
        return len(self.code_tools) / len(self.verdicts) if self.verdicts else 0.0
