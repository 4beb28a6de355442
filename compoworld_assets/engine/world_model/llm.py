"""A world model backed by an LLM through litellm, with validation, retries and an attempt log."""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from compoworld_assets.engine.canonical import canonical_json
from compoworld_assets.engine.envelope import INTERNAL_ERROR, error, ok
from compoworld_assets.engine.llm_requests import CallDeadline, request_bounds
from compoworld_assets.engine.runtime.state import ServiceState
from compoworld_assets.engine.specs.model import READ_ONLY_EFFECTS, ServiceSpec, ToolSpec
from compoworld_assets.engine.world_model.base import missing_reference, refused_transition, unheld_references
from compoworld_assets.engine.world_model.change import InvalidChange, Simulation, StateChange, apply_change
from compoworld_assets.engine.world_model.schema import schema_errors

SYSTEM_PROMPT = (
    "You simulate one tool of a software service inside a training environment for tool-using agents. "
    "Given the tool's specification, the call's arguments and the service's current state, answer with "
    "the data the real tool would return and the change the call makes to the state, as the real "
    "service would: a call that books, sends, cancels, updates or deletes something changes records; "
    "a call that only looks something up changes nothing. Reuse ids, emails, names and other values "
    "from the state and the arguments wherever they fit, and never contradict the state. Records have "
    "the fields of their entity (listed in the entity schemas) and nothing else. Answer with a single "
    'JSON object of the form {"data": <result>, "changes": {"created": [{"entity": <name>, "record": '
    '{...}}], "updated": [{"entity": <name>, "id": <id>, "fields": {...}}], "deleted": [{"entity": '
    '<name>, "id": <id>}]}} and nothing else; leave out "changes" when nothing changes.'
)
_FENCE_RE = re.compile(r"^```(?:json)?\s*(?P<body>.*?)\s*```$", re.DOTALL)


@dataclass(frozen=True)
class AttemptRecord:
    """One model call: its outcome is ``ok``, ``invalid`` (bad answer) or ``error`` (the call failed)."""

    service: str
    tool: str
    attempt: int
    outcome: str
    detail: str
    seconds: float


def strip_extensions(schema: Any) -> Any:
    """The schema without ``x-...`` keywords, which strict providers reject in response formats."""
    if isinstance(schema, dict):
        return {k: strip_extensions(v) for k, v in schema.items() if not k.startswith("x-")}
    if isinstance(schema, list):
        return [strip_extensions(v) for v in schema]
    return schema


def state_view(state: ServiceState, max_chars: int) -> str:
    """The state as JSON, records in id order, truncated per table to fit ``max_chars``."""
    view: dict[str, Any] = {}
    used = 0
    for entity in sorted(state.tables):
        table = state.tables[entity]
        shown: list[dict[str, Any]] = []
        for record_id in sorted(table):
            text = canonical_json(table[record_id])
            if used + len(text) > max_chars:
                break
            shown.append(table[record_id])
            used += len(text)
        view[entity] = {"records": shown, "omitted": len(table) - len(shown)}
    return canonical_json(view)


def parse_answer(content: str, returns: dict[str, Any]) -> tuple[Any, str | None]:
    """``((data, change), None)`` for an answer whose data fits ``returns``, else ``(None, problem)``.

    The change is checked here only for its shape; :func:`.change.apply_change` checks it against
    the state.
    """
    text = content.strip()
    fenced = _FENCE_RE.match(text)
    if fenced:
        text = fenced["body"]
    try:
        answer = json.loads(text)
    except ValueError as exc:
        return None, f"the answer is not JSON ({exc})"
    if not isinstance(answer, dict) or "data" not in answer:
        return None, 'the answer must be a JSON object with a "data" key'
    problems = schema_errors(returns, answer["data"])
    if problems:
        return None, "data does not match the returns schema: " + "; ".join(problems)
    try:
        change = StateChange.model_validate(answer.get("changes") or {})
    except ValueError as exc:
        return None, f'"changes" is malformed: {str(exc)[:300]}'
    return (answer["data"], change), None


class LLMWorldModel:
    """Simulates tools with an LLM; every attempt is appended to ``calls``; never raises.

    Each request gives up after ``request_timeout_s``; the client never retries on its own, so a
    tool call costs at most ``max_retries + 1`` requests (the backoff doubles from ``backoff_s``).

    ``completion_kwargs`` are passed to ``litellm.completion`` (e.g. ``mock_response`` in tests);
    a callable receives the attempt number (0 first) and returns the kwargs for that attempt.
    """

    def __init__(
        self,
        model: str,
        api_base: str | None = None,
        api_key_env: str | None = None,
        max_retries: int = 2,
        temperature: float = 0.0,
        *,
        backoff_s: float = 1.0,
        request_timeout_s: float = 120.0,
        total_deadline_s: float | None = None,
        max_state_chars: int = 6000,
        completion_kwargs: dict[str, Any] | Callable[[int], dict[str, Any]] | None = None,
    ) -> None:
        self.model = model
        self.api_base = api_base
        self.api_key_env = api_key_env
        self.max_retries = max_retries
        self.temperature = temperature
        self.backoff_s = backoff_s
        self.request_timeout_s = request_timeout_s
        self.total_deadline_s = total_deadline_s
        self.max_state_chars = max_state_chars
        self.completion_kwargs = completion_kwargs
        self.calls: list[AttemptRecord] = []

    @property
    def model_id(self) -> str:
        return f"llm/{self.model}/t={self.temperature:g}/p3"  # p2: answers carry state changes; p3: queries told they only read

    def simulate(
        self, spec: ServiceSpec, tool: ToolSpec, args: dict[str, Any], state: ServiceState
    ) -> Simulation:
        refused = missing_reference(spec, tool, args, state) or refused_transition(spec, tool, args, state)
        if refused is not None:
            return Simulation(result=refused)
        messages = self.messages(spec, tool, args, state)
        problem = "no attempt was made"
        deadline = CallDeadline(self.total_deadline_s)  # every attempt and repair of this answer together
        made = 0
        for attempt in range(self.max_retries + 1):
            if attempt:
                wait = self.backoff_s * 2 ** (attempt - 1)
                if deadline.left() <= wait:
                    problem = f"{problem} ({deadline} leaves no time for another attempt)"
                    break
                time.sleep(wait)
            started = time.perf_counter()
            made += 1
            try:
                content = self._complete(messages, tool, attempt, deadline.timeout(self.request_timeout_s))
            except Exception as exc:  # noqa: BLE001 - any provider failure is retried, then reported
                problem = f"{type(exc).__name__}: {exc}"
                self._record(spec, tool, attempt, "error", problem, started)
                continue
            parsed, problem_or_none = parse_answer(content, tool.returns)
            if problem_or_none is None:
                data, change = parsed
                try:
                    after = apply_change(spec, tool, state, change)
                except InvalidChange as invalid:
                    problem_or_none = f"the state change is invalid: {invalid}"
                else:
                    unheld = unheld_references(spec, tool, data, state, after)
                    if not unheld:
                        self._record(spec, tool, attempt, "ok", "", started)
                        return Simulation(result=ok(data), change=change)
                    problem_or_none = "the answer names records the state does not hold: " + "; ".join(unheld[:3])
            problem = problem_or_none
            self._record(spec, tool, attempt, "invalid", problem, started)
            messages = messages + [
                {"role": "assistant", "content": content},
                {
                    "role": "user",
                    "content": f'Invalid answer: {problem}. Answer again with only {{"data": ..., "changes": ...}}.',
                },
            ]
        return Simulation(result=error(
            INTERNAL_ERROR,
            f"world model {self.model} gave no valid result for {tool.name!r} after "
            f"{made} attempts: {problem}",
        ))

    def messages(
        self, spec: ServiceSpec, tool: ToolSpec, args: dict[str, Any], state: ServiceState
    ) -> list[dict[str, str]]:
        prompt = "\n".join(
            [
                f"Service: {spec.name} (id {spec.id}, version {spec.version}): {spec.description}",
                f"Tool: {tool.name}: {tool.description}",
                f"Parameters schema: {canonical_json(tool.parameters)}",
                f'Returns schema (the value of "data"): {canonical_json(tool.returns)}',
                f"Entity schemas: {canonical_json({e.name: e.record_schema(spec.id) for e in spec.entities})}",
                f"Arguments: {canonical_json(args)}",
                f"Current state: {state_view(state, self.max_state_chars)}",
                *([f'This tool only reads ({tool.effect}): leave out "changes".']
                  if tool.effect in READ_ONLY_EFFECTS else []),
            ]
        )
        return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": prompt}]

    def _complete(self, messages: list[dict[str, str]], tool: ToolSpec, attempt: int, timeout_s: float) -> str:
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        import litellm

        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": self.temperature,
            "drop_params": True,
            **request_bounds(timeout_s),
        }
        if self.api_base:
            kwargs["api_base"] = self.api_base
        if self.api_key_env:
            kwargs["api_key"] = os.environ.get(self.api_key_env)
        if self._supports_schema(litellm):
            answer_schema = {
                "type": "object",
                "properties": {"data": strip_extensions(tool.returns)},
                "required": ["data"],
            }
            kwargs["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "tool_result", "schema": answer_schema},
            }
        extra = (
            self.completion_kwargs(attempt) if callable(self.completion_kwargs) else self.completion_kwargs
        )
        kwargs.update(extra or {})
        response = litellm.completion(**kwargs)
        return response.choices[0].message.content or ""

    def _supports_schema(self, litellm: Any) -> bool:
        try:
            return bool(litellm.supports_response_schema(model=self.model))
        except Exception:  # noqa: BLE001 - unknown models simply get no response_format
            return False

    def _record(
        self, spec: ServiceSpec, tool: ToolSpec, attempt: int, outcome: str, detail: str, started: float
    ) -> None:
        self.calls.append(
            AttemptRecord(
                spec.id, tool.name, attempt, outcome, detail, round(time.perf_counter() - started, 4)
            )
        )
