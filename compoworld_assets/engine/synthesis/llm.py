"""The LLM synthesizer: a coding agent that writes a service module and repairs it against the tests.

Each round asks the model (through litellm) for a complete module, runs the generated
verification tests on it through the executor factory and, when tools fail, sends the failing
checks back. The best round (most verified tools) wins; tools still failing are served by the
world model according to the verification verdicts.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from compoworld_assets.engine.llm_requests import CallDeadline, request_bounds
from compoworld_assets.engine.runtime.sandbox import ALLOWED_IMPORTS
from compoworld_assets.engine.runtime.state import ServiceState
from compoworld_assets.engine.specs.model import ServiceSpec
from compoworld_assets.engine.synthesis import prompts
from compoworld_assets.engine.synthesis.base import SynthesizedModule
from compoworld_assets.engine.synthesis.offline import OfflineSynthesizer
from compoworld_assets.engine.synthesis.screen import screen_module
from compoworld_assets.engine.verification import (
    ExecutorFactory,
    ServiceVerification,
    minimal_seed_state,
    verify_service,
)

LLM_SYNTHESIZER_VERSION = f"1.0.0-p{prompts.PROMPT_VERSION}"

CompletionFn = Callable[..., Any]


class SynthesisError(RuntimeError):
    """No round produced a module (the model was unreachable or never replied with loadable code)."""


class LLMSynthesizer:
    name = "llm"

    def __init__(
        self,
        model: str,
        *,
        executor_factory: ExecutorFactory,
        api_base: str | None = None,
        api_key_env: str | None = None,
        max_rounds: int = 3,
        completion_kwargs: dict[str, Any] | None = None,
        completion_fn: CompletionFn | None = None,
        temperature: float | None = 0.0,
        seed: int = 0,
        seed_state_fn: Callable[[ServiceSpec], ServiceState] | None = None,
        include_reference: bool = True,
        max_retries: int = 3,
        backoff_s: float = 2.0,
        request_timeout_s: float = 120.0,
        total_deadline_s: float | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if max_rounds < 1:
            raise ValueError("max_rounds must be at least 1")
        self.model = model
        self.version = f"{LLM_SYNTHESIZER_VERSION}+{model}"
        self.executor_factory = executor_factory
        self.api_base = api_base
        self.api_key_env = api_key_env
        self.max_rounds = max_rounds
        self.completion_kwargs = dict(completion_kwargs or {})
        self.completion_fn = completion_fn
        self.temperature = temperature
        self.seed = seed
        self.seed_state_fn = seed_state_fn or (lambda spec: minimal_seed_state(spec, seed))
        self.include_reference = include_reference
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.request_timeout_s = request_timeout_s
        self.total_deadline_s = total_deadline_s
        self.sleep = sleep

    def synthesize(self, spec: ServiceSpec) -> SynthesizedModule:
        seed_state = self.seed_state_fn(spec)
        reference = OfflineSynthesizer().synthesize(spec).source if self.include_reference else None
        messages = [
            {"role": "system", "content": prompts.SYSTEM_PROMPT},
            {"role": "user", "content": prompts.initial_prompt(spec, reference)},
        ]
        log: list[str] = []
        best: tuple[int, SynthesizedModule] | None = None
        rounds = 0
        deadline = CallDeadline(self.total_deadline_s)  # every round's every attempt together
        for number in range(1, self.max_rounds + 1):
            rounds = number
            reply = self._complete(messages, log, number, deadline)
            if reply is None:
                break
            messages.append({"role": "assistant", "content": reply})
            code = prompts.extract_code(reply)
            if code is None:
                log.append(f"round {number}: the reply had no python code block")
                messages.append({"role": "user", "content": prompts.NO_CODE_PROMPT})
                continue
            problem = _load_problem(code)
            if problem is not None:
                log.append(f"round {number}: the module does not compile: {problem}")
                messages.append({"role": "user", "content": prompts.syntax_error_prompt(problem)})
                continue
            screened = screen_module(code, ALLOWED_IMPORTS)
            if screened:
                log.append(f"round {number}: rejected before running: {len(screened)} forbidden construct(s); "
                           f"first: {screened[0]}")
                messages.append({"role": "user", "content": prompts.violation_prompt(screened)})
                continue
            module = self._module(spec, code)
            verification = verify_service(spec, module, self.executor_factory, seed_state, self.seed)
            passed = len(verification.code_tools)
            log.append(f"round {number}: {passed}/{len(module.implemented_tools)} tools verified")
            if _did_not_load(verification):
                log.append(
                    f"round {number}: the module failed to load: {verification.verdicts[0].checks[0].detail}"
                )
                messages.append(
                    {
                        "role": "user",
                        "content": prompts.syntax_error_prompt(verification.verdicts[0].checks[0].detail),
                    }
                )
                continue
            if verification.violations:
                log.append(f"round {number}: rejected: the module broke the sandbox "
                           f"({len(verification.violations)}x; first: {verification.violations[0]})")
                messages.append({"role": "user", "content": prompts.violation_prompt(verification.violations)})
                continue
            # A module none of whose implementable tools verified serves nothing: it is never kept.
            if (passed or not module.implemented_tools) and (best is None or passed > best[0]):
                best = (passed, module)
            if passed == len(module.implemented_tools):
                break
            messages.append(
                {"role": "user", "content": prompts.repair_prompt(_failures(verification, module))}
            )
        if best is None:
            raise SynthesisError(f"{spec.id}: no round produced a loadable module with a verified tool; log: {log}")
        log.append(f"kept the module with {best[0]} verified tools")
        return best[1].model_copy(update={"rounds": rounds, "log": log})

    def _module(self, spec: ServiceSpec, code: str) -> SynthesizedModule:
        return SynthesizedModule(
            service_id=spec.id,
            service_version=spec.version,
            spec_hash=spec.content_hash(),
            synthesizer=self.name,
            synthesizer_version=self.version,
            source=code,
            implemented_tools=sorted(t.name for t in spec.tools if t.implementable),
            unimplemented_tools=sorted(t.name for t in spec.tools if not t.implementable),
        )

    def _complete(self, messages: list[dict[str, str]], log: list[str], number: int,
                  deadline: CallDeadline) -> str | None:
        """The model's reply text; transient errors are retried with exponential backoff while ``deadline`` leaves
        time (None: gave up)."""
        completion = self.completion_fn or _litellm().completion
        kwargs = self._request_kwargs()
        if deadline.passed():
            log.append(f"round {number}: not asked: {deadline} has passed")
            return None
        for attempt in range(self.max_retries + 1):
            try:
                response = completion(model=self.model, messages=list(messages),
                                      **{**kwargs, "timeout": deadline.timeout(kwargs["timeout"])})
                return _reply_text(response)
            except Exception as exc:  # classified below: permanent errors propagate
                if not _is_transient(exc):
                    raise
                delay = self.backoff_s * 2**attempt
                if attempt == self.max_retries or deadline.left() <= delay:
                    within = "" if attempt == self.max_retries else f" ({deadline} leaves no time for another)"
                    log.append(f"round {number}: giving up after {attempt + 1} attempts{within}: {_brief(exc)}")
                    return None
                log.append(
                    f"round {number}: transient error {_brief(exc)}; retry {attempt + 1} in {delay:g}s"
                )
                self.sleep(delay)
        return None

    def _request_kwargs(self) -> dict[str, Any]:
        """Each request times out after ``request_timeout_s`` and the client never retries (``_complete`` does)."""
        kwargs: dict[str, Any] = request_bounds(self.request_timeout_s)
        if self.temperature is not None:
            kwargs["temperature"] = self.temperature
        if self.api_base:
            kwargs["api_base"] = self.api_base
        if self.api_key_env:
            key = os.environ.get(self.api_key_env)
            if not key:
                raise SynthesisError(f"environment variable {self.api_key_env} is not set")
            kwargs["api_key"] = key
        kwargs.update(self.completion_kwargs)
        return kwargs


def _litellm() -> Any:
    """Import litellm lazily, with its bundled model cost map (no download at import)."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    return litellm


def _is_transient(exc: Exception) -> bool:
    """Rate limits, timeouts, server and connection errors are worth retrying; bad requests, auth are not."""
    litellm = _litellm()
    permanent = (
        litellm.AuthenticationError,
        litellm.BadRequestError,
        litellm.NotFoundError,
        litellm.PermissionDeniedError,
        SynthesisError,
        TypeError,
    )
    return not isinstance(exc, permanent)


def _reply_text(response: Any) -> str:
    choice = response["choices"][0] if isinstance(response, dict) else response.choices[0]
    message = choice["message"] if isinstance(choice, dict) else choice.message
    content = message["content"] if isinstance(message, dict) else message.content
    return content or ""


def _load_problem(code: str) -> str | None:
    try:
        compile(code, "<synthesized module>", "exec")
    except SyntaxError as exc:
        return f"SyntaxError: {exc.msg} (line {exc.lineno})"
    return None


def _did_not_load(verification: ServiceVerification) -> bool:
    return all(any(c.name == "load" for c in v.checks) for v in verification.verdicts)


def _failures(verification: ServiceVerification, module: SynthesizedModule) -> list[tuple[str, str, str]]:
    implemented = set(module.implemented_tools)
    return [
        (v.tool, c.name, c.detail)
        for v in verification.verdicts
        if v.tool in implemented
        for c in v.failures()
    ]


def _brief(exc: Exception) -> str:
    return f"{type(exc).__name__}: {exc}"[:300]
