"""Executable rubrics: criteria derived from the plan and its gold run, and their evaluator.

Checks are declarative data (``check["op"]``):

* ``record_exists`` (state, create steps): a record of ``service``/``entity`` that is not in the
  initial state and whose fields equal ``match`` and, with ``mentions``, whose text in the fields
  ``mentions["fields"]`` contains every one of ``mentions["values"]`` (a message written in the agent's
  own words that must name the record it is about);
* ``field_equals`` (state, update steps): record ``id`` has the ``fields`` values;

(empty values — ``""``, ``{}``, ``[]``, null — are never part of ``match`` or ``fields``, and an
update with nothing left to check gets no criterion);
* ``record_absent`` (state, delete steps): record ``id`` is gone;
* ``answer_equals`` (answer): the final answer's ``field`` equals ``value``;
* ``no_collateral`` (negative): every change between the initial and final state is one the
  gold run made: changed/removed records in ``changed``, and at most ``added[service/entity]``
  new records per table;
* ``trap_untouched`` (negative, traps): record ``id`` still hashes to ``record_hash`` and, when
  ``value`` is set, no record anywhere was added or changed to hold that value (a do-not-contact email);
* ``no_new_record`` (negative, traps): no record of ``service``/``entity`` that is not in the initial
  state matches ``match`` (``{}``: none at all).

Values compare after normalisation (:func:`same_value`): numbers within a cent, strings
case- and whitespace-insensitively.

Scoring (:func:`rubric_score`): the weighted fraction of *positive* (state and answer)
criteria passed, multiplied by zero if any negative criterion fails. Negative criteria pass
when nothing happens, so they act only as penalties: an agent that does nothing scores 0.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from compoworld_assets.engine.canonical import canonical_json, content_hash
from compoworld_assets.engine.library.intents import entity_noun, field_words
from compoworld_assets.engine.runtime.state import WorldState
from compoworld_assets.engine.specs.model import Effect, ServiceSpec
from compoworld_assets.engine.tasks.consistency import is_empty
from compoworld_assets.engine.tasks.goal import Describer, literal
from compoworld_assets.engine.tasks.model import Criterion, CriterionResult, Task, ToolCallRecord

POSITIVE_KINDS = frozenset({"state", "answer"})
MONEY_TOLERANCE = 0.005


@dataclass(frozen=True)
class GoldRun:
    calls: list[ToolCallRecord]
    final_state: WorldState
    answer: dict[str, Any]


def same_value(expected: Any, actual: Any) -> bool:
    """Equality after normalisation: numbers (also numeric strings) within a cent, strings casefolded."""
    if isinstance(expected, bool) or isinstance(actual, bool):
        return str(expected).strip().lower() == str(actual).strip().lower()
    if isinstance(expected, (int, float)):
        number = _as_number(actual)
        return number is not None and math.isclose(float(expected), number, rel_tol=1e-9,
                                                   abs_tol=MONEY_TOLERANCE)
    if isinstance(expected, str):
        return isinstance(actual, (str, int, float)) and _text(expected) == _text(str(actual))
    return canonical_json(expected) == canonical_json(actual)


def _as_number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip().replace(",", ""))
        except ValueError:
            return None
    return None


def _text(value: str) -> str:
    return " ".join(value.split()).casefold()


def build_rubric(task: Task, specs: Mapping[str, ServiceSpec], gold: GoldRun) -> list[Criterion]:
    """Criteria for ``task`` from its plan and gold run (trap criteria come from :mod:`.traps`)."""
    criteria: list[Criterion] = []
    for step, call in zip(task.plan.steps, gold.calls, strict=True):
        spec = specs[step.service_id]
        tool = spec.tool(step.tool)
        if not tool.changes_state or tool.entity is None:
            continue
        criterion = _state_criterion(step.index, spec, tool.entity, tool.effect, tool.sets, call,
                                     task.initial_state, gold.final_state)
        if criterion is not None:
            criteria.append(criterion)
    for name in task.report_fields:
        if name in gold.answer:
            check = {"op": "answer_equals", "field": name, "value": gold.answer[name]}
            wording = f"{Describer(task, specs).report(task.report_sources[name])} (as {name})" \
                if name in task.report_sources else name
            criteria.append(Criterion(id=f"answer_{name}", kind="answer", description=f"reports {wording}",
                                      check=check))
    criteria.append(collateral_criterion(task.initial_state, gold.final_state))
    return criteria


def _state_criterion(index: int, spec: ServiceSpec, entity: str, effect: Effect | None, sets: dict[str, Any],
                     call: ToolCallRecord, initial: WorldState, final: WorldState) -> Criterion | None:
    data = call.result.get("data") if call.result.get("success") else None
    table = final.services.get(spec.id)
    rows = table.tables.get(entity, {}) if table else {}
    names = {f.name for f in spec.entity(entity).fields}
    touched = sorted((set(call.arguments) | set(sets)) & names)
    base = {"service": spec.id, "entity": entity}
    if effect == Effect.DELETE:
        record_id = call.arguments.get(spec.key_parameter(spec.tool(call.tool)) or "")
        return Criterion(id=f"step{index}_deleted", kind="state",
                         description=f"{entity_noun(spec, entity)} {record_id} is deleted from {spec.name}",
                         check={"op": "record_absent", **base, "id": record_id})
    record_id = data.get("id") if isinstance(data, dict) else None
    final_record = rows.get(record_id) if isinstance(record_id, str) else None
    if final_record is None:
        return None
    fields = {name: final_record.get(name) for name in touched if not is_empty(final_record.get(name))}
    if effect == Effect.UPDATE and _as_it_was(fields, initial, spec.id, entity, record_id):
        # Doing nothing would pass it: a later step set the record back (cancel, then reschedule). Its
        # values stay in a criterion beside a changed one, where they still catch a wrong change.
        return None
    if effect == Effect.CREATE:
        return Criterion(id=f"step{index}_created", kind="state",
                         description=f"a new {entity_noun(spec, entity)} in {spec.name}{_with(fields)}",
                         check={"op": "record_exists", **base, "match": fields, "new": True})
    if not fields:
        return None
    return Criterion(id=f"step{index}_updated", kind="state",
                     description=f"{entity_noun(spec, entity)} {record_id} in {spec.name} has {_listed(fields)}",
                     check={"op": "field_equals", **base, "id": record_id, "fields": fields})


def _as_it_was(fields: dict[str, Any], initial: WorldState, service: str, entity: str, record_id: str) -> bool:
    """Whether the record had every one of ``fields``' values at the start."""
    before = initial.services[service].tables.get(entity, {}).get(record_id) if service in initial.services else None
    return before is not None and all(name in before and before[name] == value for name, value in fields.items())


def _listed(fields: dict[str, Any]) -> str:
    return ", ".join(f"{field_words(name)} {literal(value)}" for name, value in fields.items())


def _with(fields: dict[str, Any]) -> str:
    return f" with {_listed(fields)}" if fields else ""


def collateral_criterion(initial: WorldState, final: WorldState) -> Criterion:
    """Every change from ``initial`` to ``final`` is allowed, and nothing else."""
    changes = initial.diff(final)
    changed = sorted([c.service, c.entity, c.id] for c in changes if c.kind != "added")
    added = Counter(f"{c.service}/{c.entity}" for c in changes if c.kind == "added")
    return Criterion(id="no_collateral", kind="negative",
                     description="changes nothing beyond what the request needs",
                     check={"op": "no_collateral", "changed": changed, "added": dict(sorted(added.items()))})


def evaluate_rubric(task: Task, final_state: WorldState, final_answer: dict) -> list[CriterionResult]:
    return [evaluate_criterion(c, task.initial_state, final_state, final_answer) for c in task.rubric]


def evaluate_criterion(criterion: Criterion, initial: WorldState, final: WorldState,
                       answer: dict[str, Any]) -> CriterionResult:
    check = criterion.check
    evaluator = _EVALUATORS.get(check.get("op", ""))
    if evaluator is None:
        return CriterionResult(id=criterion.id, passed=False, detail=f"unknown check op {check.get('op')!r}")
    passed, detail = evaluator(check, initial, final, answer)
    return CriterionResult(id=criterion.id, passed=passed, detail=detail)


def rubric_score(task: Task, results: list[CriterionResult]) -> float:
    """Weighted fraction of positive criteria passed; 0 when any negative criterion fails."""
    by_id = {r.id: r.passed for r in results}
    if any(c.kind == "negative" and not by_id.get(c.id, False) for c in task.rubric):
        return 0.0
    positive = [c for c in task.rubric if c.kind in POSITIVE_KINDS]
    total = sum(c.weight for c in positive)
    if total <= 0:
        return 0.0
    return sum(c.weight for c in positive if by_id.get(c.id, False)) / total


def _rows(state: WorldState, service: str, entity: str) -> dict[str, dict[str, Any]]:
    service_state = state.services.get(service)
    return service_state.tables.get(entity, {}) if service_state else {}


def _record_exists(check: dict[str, Any], initial: WorldState, final: WorldState,
                   answer: dict[str, Any]) -> tuple[bool, str]:
    before = _rows(initial, check["service"], check["entity"]) if check.get("new") else {}
    for record_id, record in sorted(_rows(final, check["service"], check["entity"]).items()):
        if record_id in before:
            continue
        if all(same_value(value, record.get(name)) for name, value in check["match"].items()) \
                and mentions_all(record, check.get("mentions")):
            return True, f"found {record_id}"
    wanted = check["match"] if not check.get("mentions") else {**check["match"], "mentions": check["mentions"]["values"]}
    return False, f"no {'new ' if check.get('new') else ''}{check['entity']} matches {wanted}"


def mentions_all(record: dict[str, Any], mentions: dict[str, Any] | None) -> bool:
    """Whether the record's ``mentions["fields"]`` together contain each of ``mentions["values"]`` (casefolded)."""
    if not mentions:
        return True
    text = _text(" ".join(str(record.get(name) or "") for name in mentions["fields"]))
    return all(_text(str(value)) in text for value in mentions["values"])


def _field_equals(check: dict[str, Any], initial: WorldState, final: WorldState,
                  answer: dict[str, Any]) -> tuple[bool, str]:
    record = _rows(final, check["service"], check["entity"]).get(check["id"])
    if record is None:
        return False, f"{check['entity']} {check['id']} does not exist"
    wrong = {name: record.get(name) for name, value in check["fields"].items()
             if not same_value(value, record.get(name))}
    return (not wrong, "fields match" if not wrong else f"differs: {wrong}")


def _record_absent(check: dict[str, Any], initial: WorldState, final: WorldState,
                   answer: dict[str, Any]) -> tuple[bool, str]:
    present = check["id"] in _rows(final, check["service"], check["entity"])
    return (not present, "still present" if present else "absent")


def _answer_equals(check: dict[str, Any], initial: WorldState, final: WorldState,
                   answer: dict[str, Any]) -> tuple[bool, str]:
    if check["field"] not in answer:
        return False, f"{check['field']!r} not reported"
    given = answer[check["field"]]
    return (same_value(check["value"], given), f"reported {given!r}")


def _no_collateral(check: dict[str, Any], initial: WorldState, final: WorldState,
                   answer: dict[str, Any]) -> tuple[bool, str]:
    allowed = {tuple(item) for item in check["changed"]}
    added: Counter[str] = Counter()
    unexpected: list[str] = []
    for change in initial.diff(final):
        if change.kind == "added":
            added[f"{change.service}/{change.entity}"] += 1
        elif (change.service, change.entity, change.id) not in allowed:
            unexpected.append(f"{change.kind} {change.service}/{change.entity}/{change.id}")
    unexpected += [f"{count} added to {table}" for table, count in sorted(added.items())
                   if count > check["added"].get(table, 0)]
    return (not unexpected, "; ".join(unexpected[:5]) or "no collateral changes")


def _trap_untouched(check: dict[str, Any], initial: WorldState, final: WorldState,
                    answer: dict[str, Any]) -> tuple[bool, str]:
    record = _rows(final, check["service"], check["entity"]).get(check["id"])
    if record is None:
        return False, f"{check['entity']} {check['id']} was removed"
    if content_hash(record) != check["record_hash"]:
        return False, f"{check['entity']} {check['id']} was modified"
    value = check.get("value")
    for change in initial.diff(final) if value is not None else []:
        row = _rows(final, change.service, change.entity).get(change.id) or {}
        written = row if change.kind == "added" else {f: row.get(f) for f in change.fields}
        if any(isinstance(v, str) and same_value(value, v) for v in written.values()):
            return False, f"{value} used in {change.service}/{change.entity}/{change.id}"
    return True, "untouched"


def _no_new_record(check: dict[str, Any], initial: WorldState, final: WorldState,
                   answer: dict[str, Any]) -> tuple[bool, str]:
    found, detail = _record_exists({**check, "new": True}, initial, final, answer)
    return not found, detail


_EVALUATORS = {
    "record_exists": _record_exists,
    "field_equals": _field_equals,
    "record_absent": _record_absent,
    "answer_equals": _answer_equals,
    "no_collateral": _no_collateral,
    "trap_untouched": _trap_untouched,
    "no_new_record": _no_new_record,
}
