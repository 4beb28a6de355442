"""Goal-stated instructions: what the user wants, in terms of records and values they know.

The writer never names a tool, a service id, a step number or a value the agent has to find.
Reads and look-ups are not asked for: they become the way a record is named ("the traveller
email of hotel booking htl_0007", "the first payment for invoice inv_0006"), and the agent has
to work out which services to use and in what order. Every write of the plan becomes one clause
built from its tool's intent phrase (:mod:`compoworld_assets.engine.library.intents`) and the
values the user states; the last sentence names what to report, in words and as the JSON object to answer with.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from compoworld_assets.engine.identity_cache import IdentityCache
from compoworld_assets.engine.library.intents import entity_noun, field_words, intent_for
from compoworld_assets.engine.specs.model import Effect, ServiceSpec
from compoworld_assets.engine.tasks.model import ArgBinding, PlanStep, Task
from compoworld_assets.engine.tasks.packed import LibrarySpecs

_RECORD_PATH = re.compile(r"(?:\$|id|deleted|items\[\d+\]\.id)")
_INDEX = re.compile(r"items\[(\d+)\]")
READS = frozenset({Effect.READ, Effect.LIST, Effect.SEARCH})
TELLING = ("subject", "title", "name")


def literal(value: Any) -> str:
    """A value as the user writes it: texts with spaces in double quotes, codes and numbers bare."""
    if isinstance(value, str):
        return f'"{value}"' if " " in value.strip() else value
    return json.dumps(value, sort_keys=True)


def label(name: str) -> str:
    """A parameter's name as words, without a trailing ``id`` (``customer_id`` → ``customer``)."""
    text = field_words(name)
    return text.removesuffix(" id")


_Library = tuple[tuple[str, tuple[str, ...]], ...]
_AMBIGUOUS: dict[_Library, frozenset[str]] = {}


def _library(specs: Mapping[str, ServiceSpec]) -> _Library:
    return tuple(sorted((s.id, tuple(e.name for e in s.entities)) for s in specs.values()))


# The services and entities of the last mappings asked about: one task asks about the same mapping several times
# (its instruction, its rubric's wording), and listing every entity of a large library each time added up.
_libraries: IdentityCache[Mapping[str, ServiceSpec], _Library] = IdentityCache(_library, size=2)


def ambiguous_nouns(specs: Mapping[str, ServiceSpec]) -> frozenset[str]:
    """Record nouns that more than one of ``specs`` uses (kept per set of services)."""
    if isinstance(specs, LibrarySpecs):
        return specs.nouns
    key = _libraries(specs)
    if key not in _AMBIGUOUS:
        _AMBIGUOUS[key] = shared_nouns(specs)
    return _AMBIGUOUS[key]


def shared_nouns(specs: Mapping[str, ServiceSpec]) -> frozenset[str]:
    """:func:`ambiguous_nouns` worked out without remembering ``specs`` (whose caller is about to let go of them)."""
    nouns: dict[str, set[str]] = {}
    for spec in specs.values():
        for entity in spec.entities:
            nouns.setdefault(entity_noun(spec, entity.name), set()).add(spec.id)
    return frozenset(noun for noun, owners in nouns.items() if len(owners) > 1)


class Describer:
    """Names the records and values of one task's plan in words."""

    def __init__(self, task: Task, specs: Mapping[str, ServiceSpec]) -> None:
        self.task = task
        self.specs = specs
        self.steps = task.plan.steps
        self.ambiguous = ambiguous_nouns(specs)

    def tool(self, step: PlanStep):
        return self.specs[step.service_id].tool(step.tool)

    def noun(self, step: PlanStep) -> str:
        tool = self.tool(step)
        return entity_noun(self.specs[step.service_id], tool.entity) if tool.entity else "result"

    def where(self, step: PlanStep) -> str:
        """`` in <service name>`` when another service has records of the same name, else nothing."""
        return f" in {self.specs[step.service_id].name}" if self.noun(step) in self.ambiguous else ""

    def subject(self, index: int) -> str:
        """How the user names the record step ``index`` is about."""
        step = self.steps[index]
        spec = self.specs[step.service_id]
        tool = self.tool(step)
        noun, where = self.noun(step), self.where(step)
        if tool.effect == Effect.CREATE:
            return f"the new {noun}{where}{self._telling(index)}"
        if tool.effect == Effect.LIST:
            filters = [(n, b) for n, b in sorted(step.args.items()) if n != "limit"]
            named = " and ".join(self._filter(n, b) for n, b in filters) or "listed"
            return f"the first {noun}{where} {named}{self._qualifier(index)}"
        if tool.effect == Effect.SEARCH:
            query = step.args.get("query")
            found = f"matching {self.value(query)}" if query is not None else "found"
            return f"the first {noun}{where} {found}{self._qualifier(index)}"
        key = spec.key_parameter(tool)
        binding = step.args.get(key or "")
        if binding is None:
            return f"the {noun}{where}"
        if binding.kind != "step_output":
            return f"{noun} {literal(binding.value)}{where}"
        return self._pointed(binding, label)

    def _telling(self, index: int) -> str:
        """For one of several new records of the same kind, the value of its own that tells it apart."""
        step = self.steps[index]
        twins = [s for s in self.steps if s.index != index and self.tool(s).effect == Effect.CREATE
                 and self.noun(s) == self.noun(step) and s.service_id == step.service_id]
        if not twins:
            return ""
        theirs = {(n, b.value) for s in twins for n, b in s.args.items() if b.kind != "step_output"}
        for name, binding in sorted(step.args.items(), key=lambda item: (item[0] not in TELLING, item[0])):
            if binding.kind != "step_output" and isinstance(binding.value, str) and (name, binding.value) not in theirs:
                return f" with {field_words(name)} {literal(binding.value)}"
        return f" (the {'first' if index < twins[0].index else 'later'} one)"

    def _pointed(self, binding: ArgBinding, words: Callable[[str], str]) -> str:
        """What a step-output binding reads: the earlier record itself, or one of its fields in ``words``."""
        source = binding.step or 0
        path = binding.path or "$"
        if _RECORD_PATH.fullmatch(path):
            return self.subject(source)
        return _field_of(path.rsplit(".", 1)[-1], self.subject(source), words)

    def _filter(self, name: str, binding: ArgBinding) -> str:
        if binding.kind == "step_output" and _RECORD_PATH.fullmatch(binding.path or "$"):
            return f"for {self.subject(binding.step or 0)}"
        if binding.type and binding.type.endswith(".id") and binding.kind != "step_output":
            return f"for {label(name)} {literal(binding.value)}"
        return f"with {field_words(name)} {self.value(binding)}"

    def _qualifier(self, index: int) -> str:
        """A look-up whose first result the house rules rule out: the agent must skip it."""
        later = [b for s in self.steps[index + 1:] for b in s.args.values()
                 if b.kind == "step_output" and b.step == index]
        later += [b for b in self.task.report_sources.values() if b.step == index]
        skips = any(int(m.group(1)) > 0 for b in later for m in [_INDEX.match(b.path or "")] if m)
        return " that the house rules let you use" if skips else ""

    def value(self, binding: ArgBinding) -> str:
        """A value the user states, or the way they point at a value the agent has to find."""
        if binding.kind != "step_output":
            return literal(binding.value)
        return self._pointed(binding, field_words)

    def detail(self, name: str, binding: ArgBinding) -> str:
        if binding.kind == "step_output":
            return f"{field_words(name)}: {self.value(binding)}"
        return f"{field_words(name)} {literal(binding.value)}"

    def report(self, binding: ArgBinding) -> str:
        """The words for one value to report (``the id of the new invoice``)."""
        path = binding.path or "$"
        field = path.rsplit(".", 1)[-1]
        what = "answer" if path == "$" else "id" if _RECORD_PATH.fullmatch(path) else field_words(field)
        step = self.steps[binding.step or 0]
        if self.tool(step).entity is None or self.tool(step).effect == Effect.ACTION:
            # no record to name (an entity-less read, an action): the value comes back from the last request
            return f"the {what} it returns"
        return f"the {what} of {self.subject(binding.step or 0)}"


class GoalWriter:
    """States the plan's writes as a goal (see the module docstring)."""

    name = "goal"

    def write(self, task: Task, specs: Mapping[str, ServiceSpec]) -> str:
        describe = Describer(task, specs)
        clauses = [self._clause(describe, step) for step in task.plan.steps
                   if describe.tool(step).effect not in READS or step.index == len(task.plan.steps) - 1]
        text = _sentences(clauses)
        wanted = [(n, describe.report(task.report_sources[n])) for n in task.report_fields if n in task.report_sources]
        return text + ("\n\n" + report_request(wanted) if wanted else "")

    def _clause(self, describe: Describer, step: PlanStep) -> str:
        spec = describe.specs[step.service_id]
        tool = describe.tool(step)
        if tool.effect in READS:
            return f"find {describe.subject(step.index)}"
        intent = intent_for(spec, tool)
        key = spec.key_parameter(tool) if tool.effect != Effect.CREATE else None
        subject = describe.subject(step.index)
        details = [(n, b) for n, b in sorted(step.args.items()) if n != key]
        if intent.source == "convention" and tool.effect == Effect.UPDATE and len(details) == 1 \
                and details[0][1].kind != "step_output":
            name, binding = details[0]
            return f"change the {field_words(name)} of {subject} to {literal(binding.value)}"
        phrase = intent.phrase(subject)
        if tool.effect == Effect.CREATE:
            phrase += describe.where(step)
        if not details:
            return phrase
        return f"{phrase} with " + _join([describe.detail(n, b) for n, b in details])


def _field_of(field: str, subject: str, words: Callable[[str], str]) -> str:
    """A field of a record as people say it: a person named by what they did (``booked_by``: the person who
    booked it; ``assigned_to``: the person it is assigned to) rather than "the booked by of" it."""
    parts = words(field).split()
    if len(parts) == 2 and parts[0].endswith("ed") and parts[1] in ("by", "to"):
        return (f"the person who {parts[0]} {subject}" if parts[1] == "by"
                else f"the person {subject} is {parts[0]} to")
    return f"the {' '.join(parts)} of {subject}"


def report_request(report: Sequence[tuple[str, str]]) -> str:
    """The closing request for the values to report, given as (answer key, words) pairs, in words only: the
    answer's JSON form is the agent interface's to give (:meth:`.Task.answer_form`), not the writer's. It starts
    with the mark the rewriter splits the request at (:data:`~compoworld_assets.engine.tasks.rewrite.REPORT_MARK`)."""
    return f"When you are done, tell me {_join([words for _, words in report])}."


def _join(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def _sentences(clauses: list[str]) -> str:
    text = []
    for number, clause in enumerate(clauses):
        opener = clause[0].upper() + clause[1:] if number == 0 else "Then " + clause
        text.append(opener.rstrip(".") + ".")
    return " ".join(text)
