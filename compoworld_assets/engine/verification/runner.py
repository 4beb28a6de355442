"""Run the generated cases against a module through an executor and decide, per tool, code or world model.

Every case starts from a fresh reset to the seed state. A tool keeps its code only when every
check passes: valid calls succeed with data matching the returns schema, have their effect
(create→read/list/search find the record, delete→read gives not_found, update changes only
the fields it names, reads leave the state unchanged) and repeat identically; invalid
calls return a tool error (not a crash) and change nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from compoworld_assets.engine import envelope
from compoworld_assets.engine.canonical import canonical_json
from compoworld_assets.engine.deadline import check_deadline
from compoworld_assets.engine.runtime.executor import ToolExecutor
from compoworld_assets.engine.runtime.state import ServiceState
from compoworld_assets.engine.specs.model import Effect, ServiceSpec, ToolSpec
from compoworld_assets.engine.synthesis.base import SynthesizedModule
from compoworld_assets.engine.verification.cases import generate_cases
from compoworld_assets.engine.verification.effects import EffectContext, check_effect
from compoworld_assets.engine.verification.models import (
    CheckResult,
    ServiceVerification,
    ToolVerdict,
    VerificationCase,
)
from compoworld_assets.engine.world_model.schema import schema_errors, schema_problem

ExecutorFactory = Callable[[str], ToolExecutor]

COMPANION_USERS = frozenset({Effect.CREATE, Effect.DELETE})

REJECTED_ERROR_CODES = frozenset(
    {
        envelope.INTERNAL_ERROR,
        envelope.TIMEOUT,
        envelope.RESOURCE_LIMIT,
        envelope.SANDBOX_VIOLATION,
        envelope.UNKNOWN_TOOL,
    }
)


def verify_service(
    spec: ServiceSpec,
    module: SynthesizedModule,
    executor_factory: ExecutorFactory,
    seed_state: ServiceState,
    seed: int,
) -> ServiceVerification:
    tools = sorted(spec.tools, key=lambda t: t.name)
    violations: list[str] = []
    try:
        executor = executor_factory(module.source)
    except Exception as exc:  # noqa: BLE001 - a module that cannot load leaves every tool to the world model
        detail = f"{type(exc).__name__}: {exc}"[:500]
        failure = CheckResult(name="load", passed=False, detail=detail)
        verdicts = [_world_model(t.name, [failure]) for t in tools]
        if getattr(exc, "violation", False):
            violations.append(f"load: {detail}")
    else:
        try:
            runner = _ToolRunner(spec, module, executor, seed_state)
            verdicts = runner.verify_all(tools, seed)
            violations = runner.violations
        finally:
            executor.close()
    return ServiceVerification(
        service_id=spec.id, source_hash=module.source_hash, seed=seed, verdicts=verdicts, violations=violations
    )


def _world_model(tool: str, checks: list[CheckResult]) -> ToolVerdict:
    return ToolVerdict(tool=tool, implementation="world_model", passed=False, checks=checks)


class _ToolRunner:
    def __init__(
        self, spec: ServiceSpec, module: SynthesizedModule, executor: ToolExecutor, seed_state: ServiceState
    ) -> None:
        self.spec = spec
        self.module = module
        self.executor = executor
        self.seed_state = seed_state
        self.implemented = set(module.implemented_tools) - set(module.unimplemented_tools)
        self.trusted: set[str] = set()
        self._installed = False  # the executor holds the seed state: later cases only restore it
        self.violations: list[str] = []

    def verify_all(self, tools: list[ToolSpec], seed: int) -> list[ToolVerdict]:
        """Verdicts by tool name. Tools that call companions (create, delete) go last and only call
        companions whose own checks passed, so a broken reader does not fail a correct writer."""
        verdicts: dict[str, ToolVerdict] = {}
        for tool in sorted(tools, key=lambda t: t.effect in COMPANION_USERS):
            verdicts[tool.name] = self.verify(tool, seed)
            if verdicts[tool.name].passed:
                self.trusted.add(tool.name)
        return [verdicts[t.name] for t in tools]

    def verify(self, tool: ToolSpec, seed: int) -> ToolVerdict:
        if tool.name not in self.implemented:
            return _world_model(
                tool.name,
                [
                    CheckResult(
                        name="implemented", passed=False, detail="the module has no code for this tool"
                    )
                ],
            )
        cases = generate_cases(self.spec, tool, self.seed_state, seed)
        checks: list[CheckResult] = []
        if not any(c.kind == "valid" for c in cases):
            checks.append(
                CheckResult(
                    name="valid_call",
                    passed=False,
                    detail="the seed state has no records for a required reference",
                )
            )
        for case in cases:
            check_deadline()
            checks.extend(self._run_valid(tool, case) if case.kind == "valid" else [self._run_invalid(case)])
        if all(c.passed for c in checks):
            return ToolVerdict(tool=tool.name, implementation="code", passed=True, checks=checks)
        return _world_model(tool.name, checks)

    def _run_valid(self, tool: ToolSpec, case: VerificationCase) -> list[CheckResult]:
        before = self._reset()
        result = self._call(case.tool, case.args)
        after = self._state()
        if not result["success"]:
            return [CheckResult(name=f"{case.name}.success", passed=False, detail=_describe(result))]
        if after is None:
            return [
                CheckResult(
                    name=f"{case.name}.success", passed=False, detail="state unreadable after the call"
                )
            ]
        checks = [
            CheckResult(name=f"{case.name}.success", passed=True),
            _check_returns(f"{case.name}.returns", tool.returns, result["data"]),
        ]
        context = EffectContext(
            spec=self.spec,
            tool=tool,
            args=case.args,
            data=result["data"],
            before=before,
            after=after,
            call=self._call,
            trusted=self.trusted,
        )
        problem = check_effect(context)
        checks.append(CheckResult(name=f"{case.name}.effect", passed=problem is None, detail=problem or ""))
        checks.append(self._check_repeat(case, result, after))
        return checks

    def _check_repeat(
        self, case: VerificationCase, result: dict[str, Any], after: ServiceState
    ) -> CheckResult:
        self._reset()
        again = self._call(case.tool, case.args)
        again_state = self._state()
        name = f"{case.name}.determinism"
        if canonical_json(again) != canonical_json(result):
            return CheckResult(
                name=name, passed=False, detail=f"repeat returned {_short(again)} instead of {_short(result)}"
            )
        if again_state is None or not again_state.same_content(after):
            return CheckResult(name=name, passed=False, detail="repeat left a different state")
        return CheckResult(name=name, passed=True)

    def _run_invalid(self, case: VerificationCase) -> CheckResult:
        before = self._reset()
        result = self._call(case.tool, case.args)
        after = self._state()
        if result["success"]:
            return CheckResult(name=case.name, passed=False, detail=f"accepted {case.args!r}"[:500])
        if result["error"]["code"] in REJECTED_ERROR_CODES:
            return CheckResult(name=case.name, passed=False, detail=_describe(result))
        if after is None or not after.same_content(before):
            return CheckResult(name=case.name, passed=False, detail="a rejected call changed the state")
        return CheckResult(name=case.name, passed=True)

    def _reset(self) -> ServiceState:
        if self._installed:
            self.executor.restore()
        else:
            self.executor.reset(self.seed_state)
            self._installed = True
        return self.seed_state

    def _call(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        """The executor's envelope; a raising executor or a malformed result reads as an internal error."""
        try:
            result = self.executor.call(tool, args)
        except Exception as exc:  # noqa: BLE001 - executors should not raise, but a crash is a failed check
            return envelope.error(envelope.INTERNAL_ERROR, f"executor raised {type(exc).__name__}: {exc}")
        if not envelope.is_envelope(result):
            return envelope.error(envelope.INTERNAL_ERROR, f"not an envelope: {_short(result)}")
        if not result["success"] and result["error"].get("code") == envelope.SANDBOX_VIOLATION:
            self.violations.append(f"{tool}: {result['error'].get('message')}"[:500])
        return result

    def _state(self) -> ServiceState | None:
        """The state after a call; the seed state itself when the call changed nothing (no copy is read)."""
        try:
            return self.executor.state() if self.executor.changed else self.seed_state
        except Exception:  # noqa: BLE001 - a module that corrupts its state fails the check that reads it
            return None


def _check_returns(name: str, schema: dict[str, Any], data: Any) -> CheckResult:
    """Validate ``data`` against the returns schema (``x-cw-type`` is an unknown keyword, so ignored)."""
    if not schema:
        return CheckResult(name=name, passed=True)
    problem = schema_problem(schema)
    if problem is not None:
        return CheckResult(name=name, passed=False, detail=f"returns: {problem}"[:500])
    errors = schema_errors(schema, data)
    return CheckResult(name=name, passed=not errors, detail="; ".join(errors)[:500])


def _describe(result: dict[str, Any]) -> str:
    err = result.get("error") or {}
    return f"{err.get('code')}: {err.get('message')}"[:500]


def _short(value: Any) -> str:
    text = canonical_json(value)
    return text if len(text) <= 200 else text[:197] + "..."
