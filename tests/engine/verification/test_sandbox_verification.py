"""Verification through the real sandboxed executor (child processes)."""

import textwrap

import pytest

from compoworld_assets.engine.library import builtin_specs
from compoworld_assets.engine.library.seeding import Population, seed_service_state
from compoworld_assets.engine.runtime.executor import SandboxLimits
from compoworld_assets.engine.runtime.sandbox import SandboxedExecutor
from compoworld_assets.engine.synthesis.offline import OfflineSynthesizer
from compoworld_assets.engine.verification import verify_service

LIMITS = SandboxLimits(call_timeout_s=2.0)
IMPATIENT = SandboxLimits(call_timeout_s=0.3)


def sandboxed(source: str) -> SandboxedExecutor:
    return SandboxedExecutor(source, LIMITS)


def test_offline_module_verifies_in_the_sandbox(helpdesk, offline_module, seed_state):
    verification = verify_service(helpdesk, offline_module, sandboxed, seed_state, 3)
    assert verification.code_tools == offline_module.implemented_tools
    assert verification.world_model_tools == ["escalate_ticket"]


def test_sandbox_failures_leave_tools_to_the_world_model(helpdesk, offline_module, seed_state):
    override = textwrap.dedent("""
        def _spin(state, args):
            while True:
                pass
        def _explode(state, args):
            raise RuntimeError("boom")
        TOOLS["get_ticket"] = _spin
        TOOLS["get_customer"] = _explode
    """)
    module = offline_module.model_copy(update={"source": offline_module.source + override})
    verification = verify_service(
        helpdesk, module, lambda source: SandboxedExecutor(source, IMPATIENT), seed_state, 3
    )
    assert verification.verdict("get_ticket").implementation == "world_model"
    assert any(c.detail.startswith("timeout") for c in verification.verdict("get_ticket").failures())
    assert verification.verdict("get_customer").implementation == "world_model"
    assert verification.verdict("create_customer").implementation == "code"


def test_unloadable_module_in_the_sandbox(helpdesk, offline_module, seed_state):
    module = offline_module.model_copy(update={"source": "import socket\n" + offline_module.source})
    verification = verify_service(helpdesk, module, sandboxed, seed_state, 3)
    assert verification.code_tools == []


@pytest.mark.slow
def test_every_builtin_crud_tool_verifies_in_the_sandbox():
    population = Population.generate(5)
    total = verified = 0
    for spec in builtin_specs():
        module = OfflineSynthesizer().synthesize(spec)
        state = seed_service_state(spec, population, 5, rows_per_entity=6)
        verification = verify_service(
            spec, module, lambda source: SandboxedExecutor(source, LIMITS), state, 5
        )
        failing = {
            v.tool: [(c.name, c.detail) for c in v.failures()]
            for v in verification.verdicts
            if v.tool in module.implemented_tools and not v.passed
        }
        assert not failing, f"{spec.id}: {failing}"
        total += len(verification.verdicts)
        verified += len(verification.code_tools)
    print(f"verified share of built-in tools: {verified}/{total} = {verified / total:.3f}")
    assert verified / total > 0.9
