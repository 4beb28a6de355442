"""What a task pool is like to a reader: the properties issue 47 measures, read from the stored tasks alone.

Each property is worked out from a task's instruction, its seeded world, its gold plan and its rubric, the same
way for a walk and for a workflow (nothing here reads which generator made a task):

* **step chain**: the instruction strings clauses with "Then" or numbers its steps; **internal ids**: record ids
  (``inv_0003``) in the instruction;
* **speaks as a person**: it introduces its writer ("it's Dana Ortiz", "I'm ...") or is signed by them (a line
  that opens with their name and their role or address); **states a reason**: a clause
  of purpose or cause (because, so that, before, asked, need to ...);
* **decision from the data**: a record the rubric requires to change that the instruction names neither by id
  nor by a text value of its own (one no other record of its table shares: the agent has to pick it), or a branch the rubric fixes by a limit (a
  threshold trap);
* **rule in the world**: an email the rubric requires or protects that the instruction never states but a text
  field of the seeded world does (an approver, a frozen account named in a policy record);
* **reference handed across services**: a value the rubric checks in one service (a field or a mention) that is
  a non-email field value of a record of another service;
* **trap target named**: a protected record's id, or a label of its own (not one a look-alike shares), appears in
  the instruction;
* **defects**: a created record dated before today or already in a terminal status, a record sent from a
  person to the same person, a look-up whose answer is the value it was given, a reported value the
  instruction already states, a service from a test fixture.
"""

from __future__ import annotations

import re
import statistics
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from compoworld_assets.engine.runtime.state import WorldState
from compoworld_assets.engine.tasks.model import Task
from compoworld_assets.engine.tasks.workflows.casting import TERMINAL_WORDS

INTERNAL_ID = re.compile(r"\b[a-z][a-z0-9]*_\d{3,}\b")
CHAIN = re.compile(r"(?:^|[.!?]\s+)Then\b|^\s*\d+\.\s", re.MULTILINE)
PERSON = re.compile(r"\b(?i:it's|this is|I'm|I am|here is|my name is)\s+[A-Z][a-z]+\s+[A-Z][a-z]+|"
                    r"\b[A-Z][a-z]+\s+[A-Z][a-z]+\s+here\b")
# A signature: a full name opening a line or after a dash, then the writer's role or address.
SIGNED = re.compile(r"(?:^|—\s*)[A-Z][a-z]+\s+[A-Z][a-z]+(?:,|\s\()", re.MULTILINE)
REASON = re.compile(r"\b(?:because|so that|so|since|before|in order to|asked|audit|review|deadline|is due|"
                    r"has to|have to|need to|needs to|we've been|cut-off|clean-up|covering|over plan|came in|never|"
                    r"should have|wants|told|flagged|stale)\b",
                    re.IGNORECASE)
EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
QUOTED = re.compile(r'"([^"]{4,})"')
SENTENCE = re.compile(r"(?<=[.!?])\s+")
BODY_WORDS = ("body", "text", "message", "content")
FIXTURE_WORDS = ("malformed", "fixture")


@dataclass
class TaskProperties:
    task_id: str
    level: str
    no_chain_few_ids: bool
    person: bool
    reason: bool
    decision: bool
    rule_in_world: bool
    reference_handed: bool
    trap_named: bool | None
    defects: list[str]
    calls: int
    services: int
    decisions: int
    bodies: list[str] = field(default_factory=list)


def properties(task: Task) -> TaskProperties:
    text = task.instruction
    folded = text.casefold()
    return TaskProperties(
        task_id=task.task_id, level=str(task.difficulty.get("level", "?")),
        no_chain_few_ids=not CHAIN.search(text) and len(set(INTERNAL_ID.findall(text))) <= 1,
        person=bool(PERSON.search(text) or SIGNED.search(text)), reason=bool(REASON.search(text)),
        decision=_decision(task, folded), rule_in_world=_rule_in_world(task, folded),
        reference_handed=_reference_handed(task), trap_named=_trap_named(task, folded), defects=task_defects(task),
        calls=len(task.plan.steps), services=len({s.service_id for s in task.plan.steps}),
        decisions=int(task.difficulty.get("decisions", 0)), bodies=_bodies(task))


def _record(world: WorldState, service: str, entity: str, record_id: str) -> dict[str, Any] | None:
    state = world.services.get(service)
    return state.tables.get(entity, {}).get(record_id) if state else None


def _label_like(value: Any) -> bool:
    """A value a person could name one record by: a number or a title (digits or several words), not a status,
    an address or a date."""
    return isinstance(value, str) and len(value) >= 5 and bool(re.search(r"[\d ]", value.strip())) \
        and not EMAIL.fullmatch(value) and not DATE.match(value)


def _named(world: WorldState, check: dict[str, Any], folded: str) -> bool:
    """Whether the instruction names the record ``check`` points at: by id, or by a label-like value (a number, a
    title) that is its own. A value other records of its table share names a group the agent must choose from,
    not the record."""
    record = _record(world, check["service"], check["entity"], check["id"])
    if record is None:
        return False
    if check["id"].casefold() in folded:
        return True
    others = [r for rid, r in world.services[check["service"]].tables[check["entity"]].items() if rid != check["id"]]
    return any(_label_like(v) and v.casefold() in folded and all(o.get(k) != v for o in others)
               for k, v in record.items() if k != "id")


def _decision(task: Task, folded: str) -> bool:
    if any(t.kind == "threshold" for t in task.traps):
        return True
    return any(criterion.kind == "state" and criterion.check.get("op") == "field_equals"
               and _record(task.initial_state, criterion.check["service"], criterion.check["entity"],
                           criterion.check["id"]) is not None
               and not _named(task.initial_state, criterion.check, folded) for criterion in task.rubric)


def _checked_values(task: Task) -> list[tuple[str, Any]]:
    """(service, value) of every value a criterion requires or protects."""
    found = []
    for criterion in task.rubric:
        check = criterion.check
        service = check.get("service", "")
        found += [(service, v) for v in (check.get("match") or {}).values()]
        found += [(service, v) for v in (check.get("fields") or {}).values()]
        found += [(service, v) for v in (check.get("mentions") or {}).get("values", [])]
        if check.get("value") is not None and check.get("op") == "trap_untouched":
            found.append((service, check["value"]))
    return found


def _world_texts(world: WorldState) -> Iterable[tuple[str, str]]:
    for service, state in world.services.items():
        for table in state.tables.values():
            for record in table.values():
                for value in record.values():
                    if isinstance(value, str) and " " in value:
                        yield service, value


def _rule_in_world(task: Task, folded: str) -> bool:
    """An email the rubric requires or protects that only a text of the world states, or a record of prose (a
    body of 15 words or more) the instruction points at by its quoted title in a task with a trap or a decision."""
    emails = {str(v).casefold() for _, v in _checked_values(task) if isinstance(v, str) and EMAIL.fullmatch(v)}
    hidden = {e for e in emails if e not in folded}
    if any(e in text.casefold() for _, text in _world_texts(task.initial_state) for e in hidden):
        return True
    quoted = {q.casefold() for q in QUOTED.findall(task.instruction)}
    if not quoted or not (task.traps or _decision(task, folded)):
        return False
    for state in task.initial_state.services.values():
        for table in state.tables.values():
            for record in table.values():
                texts = [v for v in record.values() if isinstance(v, str)]
                if any(t.casefold() in quoted for t in texts) and any(len(t.split()) >= 15 for t in texts):
                    return True
    return False


def _reference_handed(task: Task) -> bool:
    values: dict[str, set[str]] = {}
    for service, state in task.initial_state.services.items():
        for table in state.tables.values():
            for record in table.values():
                for key, value in record.items():
                    if isinstance(value, str) and len(value) >= 4 and not EMAIL.fullmatch(value) and key != "id" \
                            and " " not in value.strip()[:0]:
                        values.setdefault(value.casefold(), set()).add(service)
                if isinstance(record.get("id"), str):
                    values.setdefault(record["id"].casefold(), set()).add(service)
    for service, value in _checked_values(task):
        if isinstance(value, str) and not EMAIL.fullmatch(value) and values.get(value.casefold(), set()) - {service}:
            return True
    for step in task.plan.steps:
        for binding in step.args.values():
            if binding.kind == "step_output" and binding.step is not None and binding.type != "email" and \
                    task.plan.steps[binding.step].service_id != step.service_id:
                return True
    return False


def _trap_named(task: Task, folded: str) -> bool | None:
    """Whether a record a trap protects is named in the instruction. A threshold trap protects the record the
    user asks about (over the limit, it must wait for approval): naming it is the request, not a give-away."""
    branch = {t.criterion_id for t in task.traps if t.kind == "threshold"}
    targets = [c.check for c in task.rubric if c.check.get("op") == "trap_untouched" and c.id not in branch]
    if not targets:
        return None
    return any(_named(task.initial_state, check, folded) for check in targets)


def _added(task: Task) -> list[dict[str, Any]]:
    """Records the gold plan's create steps write, as their arguments state them."""
    return [{k: b.value for k, b in step.args.items() if b.kind != "step_output"} | {"_tool": step.tool}
            for step in task.plan.steps if "create" in step.tool or step.tool.startswith(("send", "post", "add",
                                                                                           "open", "draft", "book"))]


def task_defects(task: Task) -> list[str]:
    """What a person would not ask for (see the module docstring); the task factory quarantines a task with any."""
    found = []
    today = task.today
    folded = task.instruction.casefold()
    for record in _added(task):
        for key, value in record.items():
            if isinstance(value, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}(T.*)?", value) and value[:10] < today:
                found.append(f"backdated {key}")
            if isinstance(value, str) and key in ("status", "state", "stage") and \
                    set(re.findall(r"[a-z]+", value.lower())) & TERMINAL_WORDS:
                found.append(f"created {value}")
        emails = [v.casefold() for v in record.values() if isinstance(v, str) and EMAIL.fullmatch(v)]
        if len(emails) != len(set(emails)):
            found.append("self-mail")
    for step in task.plan.steps:
        for binding in step.args.values():
            if binding.kind == "step_output" and binding.step is not None:
                source = task.plan.steps[binding.step]
                field_name = (binding.path or "").rsplit(".", 1)[-1]
                given = source.args.get(field_name)
                if given is not None and given.kind != "step_output" and binding.path != "id":
                    found.append("tautological look-up")
    for criterion in task.rubric:
        value = criterion.check.get("value") if criterion.kind == "answer" else None
        if isinstance(value, str) and len(value) >= 4 and value.casefold() in folded:
            found.append("reports a given value")
    if any(word in s for s in task.services for word in FIXTURE_WORDS):
        found.append("fixture service")
    return sorted(set(found))


def _bodies(task: Task) -> list[str]:
    return [str(b.value) for step in task.plan.steps for name, b in step.args.items()
            if name in BODY_WORDS and isinstance(b.value, str) and b.value.strip()]


def summary(tasks: Iterable[Task]) -> dict[str, Any]:
    """The pool's shares (0–1) and the hard tasks' medians, by the rules in the module docstring."""
    props = [properties(t) for t in tasks]
    n = len(props) or 1

    def share(values: list[bool]) -> float:
        return round(sum(values) / (len(values) or 1), 4)

    trapped = [p.trap_named for p in props if p.trap_named is not None]
    bodies = [b for p in props for b in p.bodies]
    sentences = {s.strip() for b in bodies for s in SENTENCE.split(b) if s.strip()}
    hard = [p for p in props if p.level == "hard"]
    defects = Counter(d for p in props for d in p.defects)
    return {
        "tasks": len(props),
        "no_chain_and_at_most_one_id": share([p.no_chain_few_ids for p in props]),
        "states_a_reason": share([p.reason for p in props]),
        "speaks_as_a_person": share([p.person for p in props]),
        "decision_from_data": share([p.decision for p in props]),
        "rule_in_world": share([p.rule_in_world for p in props]),
        "reference_across_services": share([p.reference_handed for p in props]),
        "trap_targets_named": share(trapped) if trapped else None,
        "tasks_with_traps": len(trapped),
        "free_of_defects": round(sum(not p.defects for p in props) / n, 4),
        "defects": dict(sorted(defects.items())),
        "message_bodies": len(bodies),
        "distinct_sentences_per_100_bodies": round(100 * len(sentences) / len(bodies), 1) if bodies else None,
        "hard_tasks": len(hard),
        "hard_median_calls": statistics.median([p.calls for p in hard]) if hard else None,
        "hard_median_services": statistics.median([p.services for p in hard]) if hard else None,
        "hard_median_decisions": statistics.median([p.decisions for p in hard]) if hard else None,
        "by_level": dict(sorted(Counter(p.level for p in props).items())),
    }
