"""The differential run: every ground-truth sequence against BFCL's backend and our synthesized service.

For one backend: the function docs are imported into one service, synthesized by the
:class:`OfflineSynthesizer` and mounted in a :class:`ServiceRuntime` whose tools without code
are served by the :class:`OfflineWorldModel`. For each entry involving the backend, its
sequence is the entry's ground-truth calls (all turns, in order) to that backend's methods;
it runs against a fresh reference instance and against our runtime reset to the adapted
initial state (:mod:`.state_adapter`), call by call (:mod:`.compare`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from compoworld_assets.engine.differential.bfcl import (
    BACKENDS,
    DEFAULT_CATEGORY,
    BfclEntry,
    ReferenceBackend,
    backend_methods,
    import_backend_spec,
    is_long_context,
    load_entries,
)
from compoworld_assets.engine.differential.calls import bind_arguments, json_ready, parse_call
from compoworld_assets.engine.differential.compare import call_agreement
from compoworld_assets.engine.differential.state_adapter import adapt_state, comparable_tables, plan_mapping
from compoworld_assets.engine.runtime.service_runtime import ServiceRuntime
from compoworld_assets.engine.specs.model import Effect, ServiceSpec
from compoworld_assets.engine.synthesis.base import SynthesizedModule
from compoworld_assets.engine.synthesis.offline import OfflineSynthesizer
from compoworld_assets.engine.world_model import OfflineWorldModel


@dataclass(frozen=True)
class CallComparison:
    call: str
    reference_ok: bool
    ours_ok: bool
    outcome_agrees: bool
    result_matches: bool


@dataclass(frozen=True)
class SequenceComparison:
    entry_id: str
    calls: tuple[CallComparison, ...]
    state_comparable: bool
    state_matches: bool

    @property
    def matches(self) -> bool:
        return self.state_matches and all(c.result_matches for c in self.calls)


@dataclass(frozen=True)
class ToolTyping:
    """How our importer and synthesizer treated a backend's tools."""

    crud: int
    action: int
    world_model: int
    entities: tuple[str, ...]


@dataclass
class BackendReport:
    backend: str
    typing: ToolTyping
    sequences: list[SequenceComparison] = field(default_factory=list)
    mapping: dict[str, str] = field(default_factory=dict)
    """Collection attribute → entity, over all entries run (the union of per-entry plans)."""

    @property
    def entries(self) -> int:
        """Entries involving the backend, including those whose ground truth never calls it."""
        return len(self.sequences)

    @property
    def called(self) -> list[SequenceComparison]:
        """The sequences with at least one call; only these count for state and sequence shares
        (an entry that never calls the backend would match vacuously)."""
        return [s for s in self.sequences if s.calls]

    @property
    def calls(self) -> int:
        return sum(len(s.calls) for s in self.sequences)

    def _call_share(self, agreeing: int) -> float:
        return agreeing / self.calls if self.calls else 0.0

    def _sequence_share(self, holding: int) -> float:
        return holding / len(self.called) if self.called else 0.0

    @property
    def outcome_agreement(self) -> float:
        return self._call_share(sum(c.outcome_agrees for s in self.sequences for c in s.calls))

    @property
    def result_match(self) -> float:
        return self._call_share(sum(c.result_matches for s in self.sequences for c in s.calls))

    @property
    def state_comparable(self) -> float:
        return self._sequence_share(sum(s.state_comparable for s in self.called))

    @property
    def state_match(self) -> float:
        return self._sequence_share(sum(s.state_matches for s in self.called))

    @property
    def sequence_match(self) -> float:
        return self._sequence_share(sum(s.matches for s in self.called))

    def summary(self) -> dict[str, object]:
        return {
            "backend": self.backend,
            "entries": self.entries,
            "sequences": len(self.called),
            "calls": self.calls,
            "reference_failures": sum(not c.reference_ok for s in self.sequences for c in s.calls),
            "our_failures": sum(not c.ours_ok for s in self.sequences for c in s.calls),
            "outcome_agreement": round(self.outcome_agreement, 4),
            "result_match": round(self.result_match, 4),
            "state_comparable": round(self.state_comparable, 4),
            "state_match": round(self.state_match, 4),
            "sequence_match": round(self.sequence_match, 4),
            "crud_tools": self.typing.crud,
            "action_tools": self.typing.action,
            "world_model_tools": self.typing.world_model,
            "entities": list(self.typing.entities),
            "mapping": dict(sorted(self.mapping.items())),
        }


def tool_typing(spec: ServiceSpec, module: SynthesizedModule) -> ToolTyping:
    crud = sum(1 for t in spec.tools if t.effect not in (None, Effect.ACTION, Effect.QUERY))
    return ToolTyping(
        crud=crud,
        action=len(spec.tools) - crud,
        world_model=len(module.unimplemented_tools),
        entities=tuple(e.name for e in spec.entities),
    )


def backend_calls(entry: BfclEntry, methods: frozenset[str]) -> list[str]:
    """The entry's ground-truth calls (all turns, in order) to the given methods."""
    return [call for call in entry.calls() if parse_call(call).name in methods]


def compare_sequence(
    backend: str,
    spec: ServiceSpec,
    runtime: ServiceRuntime,
    entry: BfclEntry,
    calls: Sequence[str],
    long_context: bool = False,
) -> tuple[SequenceComparison, dict[str, str]]:
    """Run ``calls`` on a fresh reference instance and on ``runtime``; also the state mapping used."""
    config = entry.initial_config.get(backend, {})
    reference = ReferenceBackend(backend, config, long_context)
    start_state = reference.state()
    comparisons: list[CallComparison] = []
    results = []
    for text in calls:
        parsed = parse_call(text)
        args = bind_arguments(parsed, reference.parameter_names(parsed.name))
        results.append((text, parsed.name, args, reference.call(parsed.name, args)))
    end_state = reference.state()
    mapping = plan_mapping(spec, [config, start_state, end_state])
    runtime.reset(adapt_state(spec, start_state, mapping))
    for text, name, args, outcome in results:
        envelope = runtime.call(name, json_ready(args))
        agrees, matches = call_agreement(outcome.ok, outcome.value, envelope)
        ours_ok = envelope.get("success") is True
        comparisons.append(CallComparison(text, outcome.ok, ours_ok, agrees, matches))
    expected = comparable_tables(adapt_state(spec, end_state, mapping).tables, mapping)
    ours = comparable_tables(runtime.state().tables, mapping)
    comparable = bool(mapping)
    sequence = SequenceComparison(
        entry_id=entry.id,
        calls=tuple(comparisons),
        state_comparable=comparable,
        state_matches=comparable and expected == ours,
    )
    return sequence, mapping


def run_backend(
    backend: str, entries: Iterable[BfclEntry], limit: int | None = None, long_context: bool = False
) -> BackendReport:
    """Compare every entry involving ``backend`` (the first ``limit`` of them when given)."""
    spec = import_backend_spec(backend)
    module = OfflineSynthesizer().synthesize(spec)
    report = BackendReport(backend=backend, typing=tool_typing(spec, module))
    involved = [e for e in entries if backend in e.involved_classes]
    methods = backend_methods(backend)
    with ServiceRuntime(spec, module, world_model=OfflineWorldModel()) as runtime:
        for entry in involved[:limit] if limit is not None else involved:
            calls = backend_calls(entry, methods)
            sequence, mapping = compare_sequence(backend, spec, runtime, entry, calls, long_context)
            report.sequences.append(sequence)
            report.mapping.update(mapping)
    return report


def run_differential(
    backends: Sequence[str] = BACKENDS, limit: int | None = None, category: str = DEFAULT_CATEGORY
) -> list[BackendReport]:
    entries = load_entries(category)
    return [run_backend(backend, entries, limit, is_long_context(category)) for backend in backends]
