"""Generated verification tests: decide per tool whether synthesized code or the world model serves it."""

from compoworld_assets.engine.verification.cases import generate_cases
from compoworld_assets.engine.verification.models import (
    CheckResult,
    ServiceVerification,
    ToolVerdict,
    VerificationCase,
)
from compoworld_assets.engine.verification.runner import ExecutorFactory, verify_service
from compoworld_assets.engine.verification.seed import minimal_seed_state

__all__ = [
    "CheckResult",
    "ExecutorFactory",
    "ServiceVerification",
    "ToolVerdict",
    "VerificationCase",
    "generate_cases",
    "minimal_seed_state",
    "verify_service",
]
