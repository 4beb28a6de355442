"""From a workflow draft to a gated-ready task: a seeded world shaped so the decision has one right answer, the
plan a careful colleague would follow, the rubric that checks the right branch and forbids the wrong one, and
the request as that colleague would receive it.

The world is the task's seeded world (:func:`~compoworld_assets.engine.library.seeding.seed_world`) with a few
records set so the pattern's decision is fixed by the data: statuses, amounts and dates of the cases, a policy
record in the rulebook (and, for a latest-wins rule, an older version of it that says otherwise), the project
an approval goes to. Steps are run on the task's runtime as they are added, so a later step reads the earlier
ones' actual results (``items[k]`` is where the chosen record really came back). Values the agent writes in its
own words (a message's subject and body, the time it is sent) are ``free`` bindings: the rubric checks only the
facts they must mention (the record's label) and the gate does not mutate them.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from datetime import date, timedelta
from typing import Any

from compoworld_assets.engine.canonical import content_hash
from compoworld_assets.engine.library.builder import plural_of
from compoworld_assets.engine.library.intents import entity_noun, field_words, intent_for
from compoworld_assets.engine.library.population import Person, Population
from compoworld_assets.engine.library.seeding import BIRTH_WORDS, seed_world
from compoworld_assets.engine.library.wording import a_or_an, words
from compoworld_assets.engine.runtime.state import WorldState
from compoworld_assets.engine.specs.model import ServiceSpec, ToolSpec
from compoworld_assets.engine.tasks.arguments import iso_day, step_values
from compoworld_assets.engine.tasks.goal import report_request
from compoworld_assets.engine.tasks.instantiate import COLLATERAL_RULE, TaskGenerationError, task_id_for
from compoworld_assets.engine.tasks.model import ArgBinding, Criterion, Plan, PlanStep, Split, Task, Trap
from compoworld_assets.engine.tasks.plan_exec import Unresolved, WorldRuntimeLike, resolve
from compoworld_assets.engine.tasks.rubrics import same_value
from compoworld_assets.engine.tasks.workflows import patterns as words_for
from compoworld_assets.engine.tasks.workflows.casting import (
    CaseKind,
    Channel,
    FollowUp,
    Provision,
    Rulebook,
    Slot,
    Witness,
    implicit_value,
    is_live,
    plain_text,
    request_body,
)
from compoworld_assets.engine.tasks.workflows.letter import Letter, write_letter
from compoworld_assets.engine.types import entity_ref

MIN_ROWS = 6
COUNTS = {2: "two", 3: "three", 4: "four", 5: "five"}


class WorkflowError(TaskGenerationError):
    """The draft cannot become a task in its world (too few records, a step the service refused...)."""


@dataclass(frozen=True)
class WorkflowDraft:
    """One pattern over one choice of parts, at one intended level; ``variant`` tells drafts of the same parts
    apart (each gets its own world seed through the task id)."""

    pattern: str
    level: str
    case: CaseKind
    channel: Channel
    rulebook: Rulebook | None
    follow_up: FollowUp | None
    variant: int
    witness: Witness | None = None
    provision: Provision | None = None

    @property
    def services(self) -> list[str]:
        parts = [self.case.service, self.channel.service]
        parts += [part.service for part in (self.rulebook, self.follow_up, self.witness, self.provision)
                  if part is not None]
        return sorted(set(parts))

    def entities(self) -> dict[str, set[str]]:
        """The records each service of the task holds, by entity: those its parts read and write (the rest of a
        service's tables start empty: nothing in the task looks at them, and a large API has a hundred)."""
        found: dict[str, set[str]] = {}
        for part in (self.case, self.channel, self.rulebook, self.follow_up, self.witness, self.provision):
            if part is not None:
                found.setdefault(part.service, set()).add(part.entity)
        if self.follow_up is not None:
            found[self.follow_up.service] |= {s.parent for s in self.follow_up.slots if s.parent}
        if self.provision is not None:
            found[self.provision.service] |= {p.entity for p in self.provision.parents}
        return found

    def plan_hash(self) -> str:
        parts = [asdict(part) if part is not None else None for part in (self.rulebook, self.follow_up)]
        parts += [asdict(self.witness)] if self.witness is not None else []  # drafts without one hash as before
        if self.provision is not None:  # a provision without implicit parameters hashes as before they were read
            made = asdict(self.provision)
            parts.append(made if made["implicit"] else {k: v for k, v in made.items() if k != "implicit"})
        return content_hash(["workflow", self.pattern, self.level, asdict(self.case), asdict(self.channel), *parts,
                             self.variant])


@dataclass
class Built:
    """What a pattern builder hands back besides the steps the scene ran."""

    request: Letter
    report: dict[str, tuple[ArgBinding, str]]  # key → (where its value comes from, what it is in words)
    criteria: list[Criterion]
    traps: list[tuple[Trap, Criterion]] = field(default_factory=list)
    decisions: int = 1
    rules: int = 0
    capabilities: tuple[str, ...] = ()


class Scene:
    """The task's world while it is shaped, then the runtime its steps run on as they are added."""

    def __init__(self, draft: WorkflowDraft, specs: Mapping[str, ServiceSpec], seed: int, rows: int,
                 today: str) -> None:
        self.draft = draft
        self.specs = specs
        self.seed = seed
        self.today = date.fromisoformat(today)
        self.rng = random.Random(f"workflow:{seed}:{draft.plan_hash()}")
        self.population = Population.generate(seed)
        self.people = {p.email.casefold(): p for p in self.population.everyone()}
        world = seed_world([specs[s] for s in draft.services], seed, max(rows, MIN_ROWS), self.population,
                           entities=draft.entities())
        self.world = world.snapshot()
        self.steps: list[PlanStep] = []
        self.results: list[dict[str, Any]] = []
        self.runtime: WorldRuntimeLike | None = None
        # The runtime the steps run on, mounted on the shaped world once it is ready (set by build_task).
        self.runtime_for: Callable[[Scene], WorldRuntimeLike] | None = None

    # -- the world, before the first step -------------------------------------------------------------------
    def rows(self, service: str, entity: str) -> dict[str, dict[str, Any]]:
        return self.world.services[service].tables[entity]

    def insert(self, service: str, entity: str, values: dict[str, Any]) -> str:
        """A new record of ``entity``: a copy of its first row with ``values``, under the next id."""
        state = self.world.services[service]
        table = state.tables[entity]
        if not table:
            raise WorkflowError(f"{service}/{entity} has no record to model a new one on")
        template = table[min(table)]
        prefix = str(template["id"]).rsplit("_", 1)[0]
        number = state.counters.get(entity, len(table)) + 1
        record_id = f"{prefix}_{number:04d}"
        if record_id in table:
            raise WorkflowError(f"{service}/{entity}: id {record_id} is taken")
        table[record_id] = {**template, **values, "id": record_id}
        state.counters[entity] = number
        return record_id

    def person(self, email: str) -> Person | None:
        return self.people.get(str(email).casefold())

    def staff(self, avoid: set[str], count: int) -> list[Person]:
        pool = [p for p in self.population.staff if p.email.casefold() not in avoid]
        if len(pool) < count:
            raise WorkflowError("not enough colleagues outside the records involved")
        return self.rng.sample(pool, count)

    # -- steps -----------------------------------------------------------------------------------------------
    def start(self) -> None:
        """The world is shaped: mount it, and run the steps from here on."""
        assert self.runtime_for is not None
        self.runtime = self.runtime_for(self)
        self.runtime.reset(self.world)

    def call(self, service: str, tool: str, args: dict[str, ArgBinding]) -> int:
        """Add a step and run it; its index."""
        assert self.runtime is not None
        values: dict[str, Any] = {}
        for name, binding in args.items():
            try:
                values[name] = resolve(binding, list(self.results))
            except Unresolved as exc:
                raise WorkflowError(f"{service}.{tool} {name}: {exc}") from exc
        result = self.runtime.call(service, tool, values)
        if not result.get("success"):
            raise WorkflowError(f"{service}.{tool} failed: {result.get('error', {}).get('message', '')}")
        self.steps.append(PlanStep(index=len(self.steps), service_id=service, tool=tool, args=args))
        self.results.append(result)
        return len(self.steps) - 1

    def position(self, step: int, record_id: str) -> int:
        """Where record ``record_id`` came back in the items of step ``step``'s result."""
        items = (self.results[step].get("data") or {}).get("items") or []
        for index, item in enumerate(items):
            if isinstance(item, dict) and item.get("id") == record_id:
                return index
        raise WorkflowError(f"record {record_id} is not in the result of step {step}")


def out(step: int, path: str, type_: str | None = None) -> ArgBinding:
    return ArgBinding(kind="step_output", step=step, path=path, type=type_)


def given(value: Any, type_: str | None = None) -> ArgBinding:
    return ArgBinding(kind="user_known", value=value, type=type_)


def free(value: Any) -> ArgBinding:
    return ArgBinding(kind="constant", value=value, free=True)


def fixed(value: Any, type_: str | None = None) -> ArgBinding:
    return ArgBinding(kind="constant", value=value, type=type_)


# -- words -------------------------------------------------------------------------------------------------------
@dataclass
class Words:
    """How the people in one task name things."""

    noun: str
    nouns: str
    label: str
    amount: str | None
    date: str | None
    state: str
    service: str
    team: str

    @classmethod
    def of(cls, scene: Scene) -> Words:
        case = scene.draft.case
        spec = scene.specs[case.service]
        noun = entity_noun(spec, case.entity)
        return cls(noun=noun, nouns=plural_of(noun), label=field_words(case.label),
                   amount=field_words(case.amount) if case.amount else None,
                   date=words_for.date_phrase(case.date) if case.date else None,
                   state=field_words(case.target), service=spec.name, team=words_for.team_of(spec.domain))


def _money(value: float) -> str:
    return f"{value:,.2f}"


NICE_STEPS = (1.0, 2.0, 2.5, 5.0)


def _line_for(rows: Mapping[str, Mapping[str, Any]], field_name: str, rng: random.Random) -> float:
    """A round line (1, 2, 2.5 or 5 times a power of ten) within a factor of two of the median of the values the
    world seeded for ``field_name``, so a line reads as the field's scale does (a nightly rate over 200.00, a
    contract value over 50,000.00); 500 to 5,000 when the world holds no positive value of it."""
    values = sorted(v for r in rows.values() if isinstance(v := r.get(field_name), (int, float)) and v > 0)
    if not values:
        return float(rng.choice((500, 1000, 2000, 2500, 5000)))
    middle = values[len(values) // 2]
    power = 10.0 ** math.floor(math.log10(middle))
    near = [step * power * scale for scale in (0.1, 1.0, 10.0) for step in NICE_STEPS
            if middle / 2 <= step * power * scale <= middle * 2]
    return round(rng.choice(near), 2)


def _key(text: str) -> str:
    return "_".join(text.split()).replace("-", "_")


# -- shaping the cases ---------------------------------------------------------------------------------------------
def _statuses(scene: Scene, avoid: frozenset[str] = frozenset()) -> tuple[str, list[str]]:
    """The status the cases to work on are in, and the others a case may be in; a call-off avoids a status with
    a word of ``avoid`` where another is ready."""
    case = scene.draft.case
    enum = list(scene.specs[case.service].entity(case.entity).field(case.status).enum or [])
    if words_for.move_kind(case.target) in ("advance", "close"):  # the status just before the one it moves to
        ready = case.ready[-1]
    else:
        ready = scene.rng.choice([r for r in case.ready if not set(words(r)) & avoid] or list(case.ready))
    return ready, [s for s in enum if s != ready]


def _amounts(scene: Scene, count: int) -> list[float]:
    """``count`` distinct amounts, far enough apart that no rounding can tie two, in random order."""
    rng = scene.rng
    low = rng.choice((120, 300, 800, 1500))
    values = sorted({round(low * (1 + 0.35 * i) + rng.uniform(0, low * 0.3), 2) for i in range(count)})
    rng.shuffle(values)
    return values


def _dated(value: Any, day: date) -> str:
    """``day`` in the form of ``value`` (a date, or a datetime whose time of day is kept)."""
    text = str(value)
    return day.isoformat() + (text[10:] if len(text) > 10 and text[10] == "T" else ("T09:00:00Z" if "T" in text else ""))


def _unique_labels(scene: Scene, ids: list[str]) -> None:
    """Make the labels of ``ids`` unique in their table (a person names a record by it)."""
    case = scene.draft.case
    rows = scene.rows(case.service, case.entity)
    for record_id in ids:
        label = str(rows[record_id].get(case.label) or "").strip()
        folded = label.casefold()
        clash = [r for r in rows if r != record_id and (folded in (other := str(rows[r].get(case.label) or "")
                                                                   .strip().casefold()) or other in folded)]
        if not label or clash:
            rows[record_id][case.label] = f"{label or scene.draft.case.entity} {record_id.rsplit('_', 1)[-1]}".strip()
    for record_id in ids:  # no label may hide inside another (a search for it would find both)
        label = str(rows[record_id][case.label]).casefold()
        if any(r != record_id and label in str(rows[r].get(case.label) or "").casefold() for r in rows):
            raise WorkflowError(f"label {rows[record_id][case.label]!r} is part of another record's")


def _contact_of(scene: Scene, record: dict[str, Any]) -> tuple[str, Person | None]:
    case = scene.draft.case
    email = str(record.get(case.contact or "") or "")
    return email, scene.person(email)


def _first_name(person: Person | None, email: str) -> str:
    return person.first_name if person is not None else email.split("@")[0].split(".")[0].title()


# -- the rulebook ---------------------------------------------------------------------------------------------------
def _policy(scene: Scene, title: str, body: str, stamp_days_ago: int) -> str:
    book = scene.draft.rulebook
    assert book is not None
    values: dict[str, Any] = {book.title: title, book.body: body}
    entity = scene.specs[book.service].entity(book.entity)
    if book.stamp:
        template = next(iter(scene.rows(book.service, book.entity).values()))
        values[book.stamp] = _dated(template.get(book.stamp) or "2026-01-01T09:00:00Z",
                                    scene.today - timedelta(days=stamp_days_ago))
    for f in entity.fields:  # a policy people can read: published, not a draft or archived
        if f.enum and f.name not in values:
            published = next((v for v in f.enum if isinstance(v, str) and ("publish" in v or v == "active")), None)
            if published is not None:
                values[f.name] = published
    return scene.insert(book.service, book.entity, values)


def _read_rules(scene: Scene, title: str) -> int:
    book = scene.draft.rulebook
    assert book is not None
    args = {"query": given(title)} if book.by_query else {}
    return scene.call(book.service, book.finder, args)


def _rule_pointer(scene: Scene, title: str) -> str:
    book = scene.draft.rulebook
    assert book is not None
    noun = entity_noun(scene.specs[book.service], book.entity)
    return scene.rng.choice(words_for.RULE_POINTERS).format(
        team=words_for.team_of(scene.specs[scene.draft.case.service].domain), title=title, noun=noun,
        service=scene.specs[book.service].name)


# -- messages ---------------------------------------------------------------------------------------------------------
def _message(scene: Scene, to: ArgBinding, subject: str, body: str, sender: str) -> dict[str, ArgBinding]:
    return _filled(scene, scene.draft.channel.slots, {"recipient": to, "sender": given(sender)}, subject, body)


def _filled(scene: Scene, slots: tuple[Slot, ...], people: dict[str, ArgBinding], title: str, body: str,
            due: str | None = None, parent: str | None = None) -> dict[str, ArgBinding]:
    args: dict[str, ArgBinding] = {}
    for slot in slots:
        if slot.kind in people:
            args[slot.parameter] = people[slot.kind]
        elif slot.kind == "sender":
            args[slot.parameter] = free(people["sender"].value) if "sender" in people else free(None)
        elif slot.kind == "title":
            args[slot.parameter] = free(title)
        elif slot.kind == "body":
            args[slot.parameter] = free(body)
        elif slot.kind == "when":
            args[slot.parameter] = free(scene.today.isoformat() + ("T09:00:00Z" if slot.value == "datetime" else ""))
        elif slot.kind == "due":
            args[slot.parameter] = fixed(due)
        elif slot.kind == "parent":
            args[slot.parameter] = fixed(parent)
        else:
            args[slot.parameter] = free(slot.value)
    return {name: binding for name, binding in args.items() if binding.value is not None or binding.kind == "step_output"}


def _mention_fields(slots: tuple[Slot, ...]) -> list[str]:
    return sorted(s.parameter for s in slots if s.kind in ("title", "body"))


def _sent(scene: Scene, email: str, label: str, what: str) -> Criterion:
    channel = scene.draft.channel
    recipient = next(s.parameter for s in channel.slots if s.kind == "recipient")
    noun = entity_noun(scene.specs[channel.service], channel.entity)
    return Criterion(id=f"notified_{_key(label)}_{_key(email.split('@')[0])}", kind="state",
                     description=f"a new {noun} in {scene.specs[channel.service].name} to {email} that names {label}"
                                 f" ({what})",
                     check={"op": "record_exists", "service": channel.service, "entity": channel.entity,
                            "match": {recipient: email}, "new": True,
                            "mentions": {"fields": _mention_fields(channel.slots), "values": [label]}})


def _moved(scene: Scene, record_id: str, label: str) -> Criterion:
    case = scene.draft.case
    return Criterion(id=f"moved_{record_id}", kind="state",
                     description=f"{Words.of(scene).noun} {label} ({record_id}) is {field_words(case.target)}",
                     check={"op": "field_equals", "service": case.service, "entity": case.entity, "id": record_id,
                            "fields": {case.status: case.target}})


def _untouched(scene: Scene, record_id: str, why: str, value: str | None = None) -> Criterion:
    case = scene.draft.case
    record = scene.world.services[case.service].tables[case.entity][record_id]
    check = {"op": "trap_untouched", "service": case.service, "entity": case.entity, "id": record_id,
             "record_hash": content_hash(record)}
    if value is not None:
        check["value"] = value
    return Criterion(id=f"untouched_{record_id}", kind="negative", description=why, check=check)


def _acted(scene: Scene, lookup: int, index: int) -> dict[str, ArgBinding]:
    case = scene.draft.case
    return {case.key: out(lookup, f"items[{index}].id", entity_ref(case.service, case.entity))}


def _letter(scene: Scene, me: Person, reason: str, ask: str, after: str = "", rules: str = "") -> Letter:
    return Letter(me=me, role=f"{Words.of(scene).team} {scene.rng.choice(words_for.ROLE_TITLES)}",
                  company=scene.population.home_company.name, reason=reason, ask=ask, after=after, rules=rules)


def _summary_ask(scene: Scene, boss: Person) -> str:
    """The sentence asking for the summary to ``boss`` once the work is done, listing the cases by label."""
    rng, w = scene.rng, Words.of(scene)
    what = f"the {plural_of(w.label)}" if " " in w.label else f"the {w.label} of each {w.noun}"
    return rng.choice(words_for.SUMMARY_ASKS).format(then=rng.choice(words_for.THEN_WORDS), boss=boss.full_name,
                                                     email=boss.email, first=boss.first_name, what=what,
                                                     day=rng.choice(words_for.DAYS))


def reconcile(scene: Scene) -> Built:
    """Cases in one status whose record in another service (a witness referring to them by id) says the work is
    done are moved on; one whose witness says otherwise stays; a manager gets the list."""
    draft, rng, case, witness = scene.draft, scene.rng, scene.draft.case, scene.draft.witness
    assert witness is not None
    w = Words.of(scene)
    rows, seen = scene.rows(case.service, case.entity), scene.rows(witness.service, witness.entity)
    ids, seen_ids = sorted(rows), sorted(seen)
    ready, others = _statuses(scene)
    n = {"easy": 2, "medium": 3, "hard": 4}[draft.level]
    if len(ids) < n + 3 or len(seen_ids) < n + 2:
        raise WorkflowError("too few records to reconcile")
    picked = rng.sample(ids, n + 2)
    settled, unsettled = sorted(picked[:n]), picked[n]
    for record_id in ids:
        rows[record_id][case.status] = ready if record_id in picked else rng.choice(others)
    enum = scene.specs[witness.service].entity(witness.entity).field(witness.status).enum or []
    open_states = [v for v in enum if v != witness.done]
    elsewhere = [r for r in ids if r not in picked]
    witnessing = rng.sample(seen_ids, n + 1)
    for seen_id in seen_ids:
        record = seen[seen_id]
        if seen_id in witnessing:
            index = witnessing.index(seen_id)
            record[witness.ref] = (settled + [unsettled])[index]
            record[witness.status] = witness.done if index < n else rng.choice(open_states)
        elif record.get(witness.ref) in picked or record.get(witness.status) == witness.done:
            record[witness.ref] = rng.choice(elsewhere)
    _unique_labels(scene, settled + [unsettled])
    me, boss = scene.staff(set(), 2)
    witness_spec = scene.specs[witness.service]
    witness_noun = entity_noun(witness_spec, witness.entity)
    cases = _open_cases(scene, None, ready)
    scene.call(witness.service, witness.lister, {witness.status: given(witness.done)} if witness.status_filter else {})
    labels = [str(rows[r][case.label]) for r in settled]
    criteria: list[Criterion] = []
    for record_id, label in zip(settled, labels, strict=True):
        scene.call(case.service, case.action, _acted(scene, cases, scene.position(cases, record_id)))
        criteria.append(_moved(scene, record_id, label))
    criteria.append(_summary(scene, boss, me, f"{w.service} reconciled with {witness_spec.name}",
                             f"Hi {boss.first_name}, {w.service} now matches {witness_spec.name}: "
                             f"{', '.join(labels)} are {w.state}. {me.full_name}", labels))
    kind = words_for.move_kind(case.target)
    reason = scene.rng.choice(words_for.REASONS[("reconcile", "advance" if kind == "advance" else "close")]).format(
        witness=witness_spec.name, service=w.service, nouns=w.nouns, period=rng.choice(words_for.PERIODS),
        day=rng.choice(words_for.DAYS))
    ready_words, done = field_words(ready), field_words(witness.done)
    every = f"every {ready_words} {w.noun} in {w.service} whose {witness_noun} in {witness_spec.name} is marked {done}"
    ask = rng.choice((
        f"Could you {_verb(scene, every)}? Leave the others as they are.",
        (f"Please check the {ready_words} {w.nouns} in {w.service} against {witness_spec.name}: where the "
         f"{witness_noun} is marked {done}, {_verb(scene, f'the {w.noun}')}; anything else stays as it is."),
        (f"Go through the {ready_words} {w.nouns} in {w.service}, and for each one whose {witness_noun} in "
         f"{witness_spec.name} is marked {done}, {_verb(scene, 'it')}. The rest stay as they are."),
    ))
    request = _letter(scene, me, reason, ask, _summary_ask(scene, boss))
    report = {"count": (fixed(len(settled)), f"how many {w.nouns} you marked {w.state}")}
    if case.amount:
        report[_key(f"combined {w.amount}")] = (fixed(round(sum(rows[r][case.amount] for r in settled), 2)),
                                               f"their combined {w.amount}")
    built = Built(request, report, criteria, decisions=n + 1, rules=0,
                  capabilities=("cross-env-constraint",))
    criterion = _untouched(scene, unsettled, f"leaves {w.noun} {rows[unsettled][case.label]} as it is: its "
                           f"{witness_noun} is not {field_words(witness.done)}")
    extra = PlanStep(index=len(scene.steps), service_id=case.service, tool=case.action,
                     args=_acted(scene, cases, scene.position(cases, unsettled)))
    built.traps.append((Trap(kind="unmatched", rule=f"its {witness_noun} in {witness_spec.name} is not "
                             f"{field_words(witness.done)}", criterion_id=criterion.id,
                             wrong_plan=Plan(steps=[*scene.steps, extra])), criterion))
    return built


def _reason(scene: Scene, pattern: str, basis: str = "", **values: str) -> str:
    """Why the work is asked for: by the pattern, the kind of move and what decides it (``basis``)."""
    kind = words_for.move_kind(scene.draft.case.target)
    kind = kind if kind != "hold" else "stop"
    w = Words.of(scene)
    choices = words_for.REASONS.get((pattern, kind, basis)) or words_for.REASONS[(pattern, kind)]
    return scene.rng.choice(choices).format(noun=w.noun, nouns=w.nouns, Nouns=w.nouns.capitalize(),
                                            day=scene.rng.choice(words_for.DAYS),
                                            period=scene.rng.choice(words_for.PERIODS), **values)


def _verb(scene: Scene, subject: str) -> str:
    case = scene.draft.case
    spec = scene.specs[case.service]
    return intent_for(spec, spec.tool(case.action)).phrase(subject)


def _notice(scene: Scene, first: str, label: str, why: str, me: Person) -> str:
    w = Words.of(scene)
    return scene.rng.choice(words_for.NOTICES).format(first=first, noun=w.noun, label=label, state=w.state,
                                                      why=why, me=me.full_name)


# -- patterns ---------------------------------------------------------------------------------------------------------
def _house_rules(scene: Scene) -> str:
    return f"{Words.of(scene).team.title().removeprefix('The ')} house rules"


def _freeze(scene: Scene, held: str, title: str) -> str:
    """A policy in the rulebook that freezes everything concerning the person of case ``held``; their email."""
    rows = scene.rows(scene.draft.case.service, scene.draft.case.entity)
    held_email, held_person = _contact_of(scene, rows[held])
    who = held_person.full_name if held_person else held_email
    company = f" of {held_person.company}" if held_person else ""
    _policy(scene, title, f"Frozen accounts: everything concerning {who}{company} ({held_email}) is on hold while "
            f"their dispute is open. Do not change any of their {Words.of(scene).nouns} and do not write to them "
            f"until legal clears it. Everyone else is handled as usual.", scene.rng.randint(3, 30))
    return held_email


def _open_cases(scene: Scene, title: str | None, ready: str) -> int:
    """Start the steps: read the house rules (when the task has them), then list the cases in ``ready``; the
    list's step."""
    scene.start()
    if title is not None:
        _read_rules(scene, title)
    case = scene.draft.case
    return scene.call(case.service, case.lister, {case.status: given(ready)} if case.status_filter else {})


def _summary(scene: Scene, boss: Person, me: Person, subject: str, text: str, labels: list[str]) -> Criterion:
    """Send ``boss`` the summary (a step) and the criterion that it names every one of ``labels``."""
    scene.call(scene.draft.channel.service, scene.draft.channel.tool,
               _message(scene, given(boss.email, "email"), subject, text, me.email))
    check = _sent(scene, boss.email, labels[0], "the summary")
    check.check["mentions"]["values"] = labels
    check.description = f"a summary to {boss.email} that names {', '.join(labels)}"
    return check


def priority_pick(scene: Scene) -> Built:
    """Rank the cases in one status by amount (largest) or date (earliest), skip the one the rules freeze, act on
    the top one left (the top four, at the hard level, with a summary to a manager) and tell each person
    concerned."""
    draft, rng, case = scene.draft, scene.rng, scene.draft.case
    w = Words.of(scene)
    rows = scene.rows(case.service, case.entity)
    ids = sorted(rows)
    ready, others = _statuses(scene)
    bases = words_for.rank_bases(case)
    by_amount = bases == ("amount",) or (len(bases) == 2 and rng.random() < 0.65)
    ruled = draft.rulebook is not None
    top = 4 if draft.level == "hard" else 1
    chosen = sorted(rng.sample(ids, min(len(ids) - 1, {"easy": 3, "medium": 4, "hard": 6}[draft.level])))
    if len(chosen) < top + 2:
        raise WorkflowError("too few cases to rank")
    for record_id in ids:
        rows[record_id][case.status] = ready if record_id in chosen else rng.choice(others)
    if by_amount:
        for record_id, value in zip(ids, _amounts(scene, len(ids)), strict=True):
            rows[record_id][case.amount] = value
        order = sorted(chosen, key=lambda r: -rows[r][case.amount])
        rank = f"largest {w.amount}"
    else:
        start = scene.today - timedelta(days=rng.randint(40, 90))
        for record_id, offset in zip(ids, rng.sample(range(35), len(ids)), strict=True):
            rows[record_id][case.date] = _dated(rows[record_id].get(case.date) or "2026-01-01",
                                                start + timedelta(days=offset))
        order = sorted(chosen, key=lambda r: rows[r][case.date])
        rank = f"earliest {w.date}"
    held = order[rng.randrange(top)] if ruled else None
    winners = [r for r in order if r != held][:top]
    _unique_labels(scene, chosen)
    emails = {r: _contact_of(scene, rows[r])[0] for r in chosen}
    mine = [emails[r].casefold() for r in winners + ([held] if held else [])]
    if not all(mine) or len(set(mine)) != len(mine):
        raise WorkflowError("the cases do not concern distinct people")
    me, boss = scene.staff(set(mine), 2)
    title = _house_rules(scene)
    if ruled and held is not None:
        _freeze(scene, held, title)
    lookup = _open_cases(scene, title if ruled else None, ready)
    contact_words = field_words(case.contact or "").removesuffix("email").strip() or "person it concerns"
    criteria: list[Criterion] = []
    labels = [str(rows[r][case.label]) for r in winners]
    for record_id, label in zip(winners, labels, strict=True):
        k = scene.position(lookup, record_id)
        scene.call(case.service, case.action, _acted(scene, lookup, k))
        first = _first_name(scene.person(emails[record_id]), emails[record_id])
        why = rng.choice(("We are working through our list by priority and yours came first.",
                          "This was the next item on our priority list.", ""))
        message = _message(scene, out(lookup, f"items[{k}].{case.contact}", "email"),
                           f"{w.noun.capitalize()} {label}", _notice(scene, first, label, why, me), me.email)
        scene.call(draft.channel.service, draft.channel.tool, message)
        criteria += [_moved(scene, record_id, label), _sent(scene, emails[record_id], label, f"tells the {contact_words}")]
    rule = _rule_pointer(scene, title) if ruled else ""
    value_key = _key(w.amount if by_amount else w.date or "date")
    value_field = case.amount if by_amount else case.date
    k = scene.position(lookup, winners[0])
    if top == 1:
        ask = rng.choice((
            (f"In {w.service}, look at our {field_words(ready)} {w.nouns} and take the one with the {rank}; "
            f"{_verb(scene, 'it')}, then email the {contact_words} from my address to let them know (mention the "
            f"{w.label}, so they can tell which {w.noun} it is)."),
            (f"Could you find the {field_words(ready)} {w.noun} in {w.service} with the {rank} and "
            f"{_verb(scene, 'it')}? Drop the {contact_words} a line from my address afterwards so they know, with the "
            f"{w.label} so they can tell which one it is."),
            (f"Of the {field_words(ready)} {w.nouns} in {w.service}, please {_verb(scene, 'the one with the ' + rank)} "
             f"and let the {contact_words} know by email from my address; mention the {w.label} so they know which "
             f"one it is."),
        ))
        report = {_key(f"{w.noun} {w.label}"): (out(lookup, f"items[{k}].{case.label}"), f"the {w.label} of the {w.noun}"),
                  value_key: (out(lookup, f"items[{k}].{value_field}"), f"its {w.amount if by_amount else w.date}")}
    else:
        criteria.append(_summary(scene, boss, me, f"Top {w.nouns}", f"Hi {boss.first_name}, the {COUNTS[top]} "
                                 f"{w.nouns} with the {rank} are now {w.state}: {', '.join(labels)}. {me.full_name}",
                                 labels))
        ask = rng.choice((
            (f"In {w.service}, look at our {field_words(ready)} {w.nouns} and take the {COUNTS[top]} with the {rank}; "
            f"{_verb(scene, 'each of them')}, email each {contact_words} from my address so they know (with the "
            f"{w.label}, so they can tell which one it is), and then send {boss.full_name} ({boss.email}) one line listing the "
            f"{COUNTS[top]}."),
            (f"Could you pick out the {COUNTS[top]} {field_words(ready)} {w.nouns} in {w.service} with the {rank} and "
            f"{_verb(scene, 'each of them')}? Let each {contact_words} know by email from my address, mentioning the "
            f"{w.label}, and afterwards send {boss.full_name} ({boss.email}) a one-line list of the "
            f"{COUNTS[top]}."),
        ))
        report = {_key(f"first {w.noun} {w.label}"): (out(lookup, f"items[{k}].{case.label}"),
                                                      f"the {w.label} of the {w.noun} with the {rank} you acted on"),
                  value_key: (out(lookup, f"items[{k}].{value_field}"), f"its {w.amount if by_amount else w.date}")}
    reasons = "priority_pick" if top == 1 else "priority_pick_batch"
    request = _letter(scene, me, _reason(scene, reasons, 'amount' if by_amount else 'date', rank=rank), ask,
                      rules=rule)
    built = Built(request, report, criteria, decisions=top + int(ruled), rules=int(ruled),
                  capabilities=("policy-lookup", "cross-env-constraint", "disambiguation") if ruled else ())
    if ruled and held is not None:
        criterion = _untouched(scene, held, f"leaves the frozen {w.noun} {rows[held][case.label]} alone and never "
                               f"writes to {emails[held]}", emails[held])
        wrong = _swap(scene, lookup, scene.position(lookup, winners[-1]), scene.position(lookup, held))
        built.traps.append((Trap(kind="on_hold", rule="a frozen account in the house rules",
                                 criterion_id=criterion.id, wrong_plan=wrong), criterion))
    return built


def _swap(scene: Scene, lookup: int, old: int, new: int) -> Plan:
    """The plan with every read of item ``old`` of step ``lookup`` reading item ``new`` instead."""
    steps = []
    for step in scene.steps:
        args = {}
        for name, b in step.args.items():
            if b.kind == "step_output" and b.step == lookup and (b.path or "").startswith(f"items[{old}]"):
                b = b.model_copy(update={"path": f"items[{new}]" + (b.path or "")[len(f"items[{old}]"):]})
            args[name] = b
        steps.append(step.model_copy(update={"args": args}))
    return Plan(steps=steps)


def sweep(scene: Scene) -> Built:
    """Act on every case in one status that meets a condition the data decides (its date before a cut-off, or its
    amount over a line), skip the one the rules freeze, send a summary, report how many (and their total)."""
    draft, rng, case = scene.draft, scene.rng, scene.draft.case
    w = Words.of(scene)
    rows = scene.rows(case.service, case.entity)
    ids = sorted(rows)
    # a sweep calls off what is not yet committed: a confirmed booking, an active contract or a packed order is
    # not cancelled for its size or its age while a pending one is there (a move on or a close is unaffected)
    ready, others = _statuses(scene, words_for.COMMITTED_WORDS)
    ruled = draft.rulebook is not None and case.contact is not None
    notify = draft.level == "hard" and case.contact is not None
    n_match = {"easy": 2, "medium": 3, "hard": 4}[draft.level]
    if len(ids) < n_match + 2 + int(ruled):
        raise WorkflowError("too few cases for a sweep")
    picked = rng.sample(ids, n_match + 2 + int(ruled))
    matching, held = sorted(picked[:n_match]), (picked[n_match] if ruled else None)
    meets = set(matching) | ({held} if held else set())
    for record_id in ids:
        rows[record_id][case.status] = ready if record_id in picked else rng.choice(others)
    if words_for.condition_basis(case) == "date":
        ahead = words_for.passed_date_kind(case.date) != "past"  # a due date passed is overdue; a past one, stale
        # a stale record is months old: weeks are no reason to retire or chase anything
        cutoff = scene.today if ahead else scene.today - timedelta(days=rng.choice((60, 90, 120)))
        for record_id in ids:
            before = record_id in meets or (record_id not in picked and rng.random() < 0.5)
            day = cutoff - timedelta(days=rng.randint(1, 30)) if before else \
                min(cutoff + timedelta(days=rng.randint(0, 20)), scene.today + timedelta(days=60) if ahead else
                    scene.today - timedelta(days=1))
            rows[record_id][case.date] = _dated(rows[record_id].get(case.date) or "2026-01-01", day)
        condition, line_words = ((f"whose {w.date} has passed", f"past their {w.date}") if cutoff == scene.today else
                                 (f"with {a_or_an(w.date)} {w.date} before {cutoff.isoformat()}",
                                  f"before {cutoff.isoformat()}"))
        basis = "due" if ahead else "stale"
    else:
        assert case.amount is not None
        line = _line_for(rows, case.amount, rng)
        for record_id in ids:
            over = record_id in meets or (record_id not in picked and rng.random() < 0.5)
            rows[record_id][case.amount] = round(line * (rng.uniform(1.1, 3.0) if over else rng.uniform(0.2, 0.9)), 2)
        condition, line_words = f"with {w.amount} over {_money(line)}", f"over {_money(line)}"
        basis = "amount"
    _unique_labels(scene, sorted(meets))
    emails = {r: _contact_of(scene, rows[r])[0] for r in sorted(meets)}
    if held and any(emails[held].casefold() == emails[r].casefold() for r in matching):
        raise WorkflowError("the frozen account is also one to act on")
    me, boss = scene.staff({e.casefold() for e in emails.values() if e}, 2)
    title = _house_rules(scene)
    if ruled and held:
        _freeze(scene, held, title)
    lookup = _open_cases(scene, title if ruled else None, ready)
    labels = [str(rows[r][case.label]) for r in matching]
    criteria: list[Criterion] = []
    for record_id, label in zip(matching, labels, strict=True):
        k = scene.position(lookup, record_id)
        scene.call(case.service, case.action, _acted(scene, lookup, k))
        criteria.append(_moved(scene, record_id, label))
        if notify:
            first = _first_name(scene.person(emails[record_id]), emails[record_id])
            body = _notice(scene, first, label, "It was part of our periodic review.", me)
            scene.call(draft.channel.service, draft.channel.tool,
                       _message(scene, out(lookup, f"items[{k}].{case.contact}", "email"),
                                f"{w.noun.capitalize()} {label}", body, me.email))
            criteria.append(_sent(scene, emails[record_id], label, "tells the person it concerns"))
    total = round(sum(rows[r][case.amount] for r in matching), 2) if case.amount else None
    together = f", {_money(total)} together" if total is not None else ""
    criteria.append(_summary(scene, boss, me, f"{w.nouns.capitalize()} {line_words}",
                             f"Hi {boss.first_name}, the {field_words(ready)} {w.nouns} {condition} are done: "
                             f"{', '.join(labels)} are now {w.state} ({len(labels)} in all{together}). {me.full_name}",
                             labels))
    rule = _rule_pointer(scene, title) if ruled else ""
    each = (f" Email each {field_words(case.contact or '').removesuffix('email').strip() or 'person concerned'} a "
            f"short note about it, with the {w.label} so they know which {w.noun} it is." if notify else "")
    ready_words = field_words(ready)
    every = f"every {ready_words} {w.noun} in {w.service} {condition}"
    sweep_ask = rng.choice((
        (f"Could you go through the {ready_words} {w.nouns} in {w.service} and "
         f"{_verb(scene, 'the ones ' + condition)}? Leave the rest as they are."),
        f"Please {_verb(scene, every)}; anything else stays as it is.",
        (f"In {w.service}, the {ready_words} {w.nouns} {condition} all need to be {w.state}. Please take care of "
         f"them and leave the rest alone."),
    ))
    request = _letter(scene, me, _reason(scene, 'sweep', basis), sweep_ask + each,
                      _summary_ask(scene, boss), rule)
    report = {"count": (fixed(len(matching)), f"how many {w.nouns} you marked {w.state}")}
    if total is not None:
        report[_key(f"combined {w.amount}")] = (fixed(total), f"their combined {w.amount}")
    built = Built(request, report, criteria, decisions=len(ids) // 2 + int(ruled), rules=int(ruled),
                  capabilities=("policy-lookup", "cross-env-constraint") if ruled else ())
    if ruled and held:
        criterion = _untouched(scene, held, f"leaves the frozen {w.noun} {rows[held][case.label]} alone",
                               emails[held])
        k = scene.position(lookup, held)
        extra = PlanStep(index=len(scene.steps), service_id=case.service, tool=case.action, args=_acted(scene, lookup, k))
        built.traps.append((Trap(kind="on_hold", rule="a frozen account in the house rules", criterion_id=criterion.id,
                                 wrong_plan=Plan(steps=[*scene.steps, extra])), criterion))
    return built


def approval_gate(scene: Scene) -> Built:
    """Requests to act on named cases; a limit in the rulebook (its latest version) routes each: below it the
    case is acted on, at or above it a follow-up goes to the approver instead; each requester is told."""
    draft, rng, case = scene.draft, scene.rng, scene.draft.case
    book, follow = draft.rulebook, draft.follow_up
    assert book is not None and follow is not None and case.amount is not None and case.contact is not None
    w = Words.of(scene)
    rows = scene.rows(case.service, case.entity)
    ids = sorted(rows)
    ready, _ = _statuses(scene)
    count = 3 if draft.level == "hard" else 1
    revised = book.stamp is not None and draft.level != "easy"
    requests = sorted(rng.sample(ids, count))
    limit = _line_for(rows, case.amount, rng)
    routes = [rng.random() < 0.5 for _ in requests] if count == 1 else rng.sample([True, False, rng.random() < 0.5], 3)
    for record_id, needs in zip(requests, routes, strict=True):
        rows[record_id][case.status] = ready
        rows[record_id][case.amount] = round(limit * (rng.uniform(1.05, 1.8) if needs else rng.uniform(0.3, 0.95)), 2)
    _unique_labels(scene, requests)
    emails = {r: _contact_of(scene, rows[r])[0] for r in requests}
    if len({e.casefold() for e in emails.values()}) != count:
        raise WorkflowError("two requests come from one person")
    me, approver, former = scene.staff({e.casefold() for e in emails.values()}, 3)
    days = rng.randint(2, 5)
    due = (scene.today + timedelta(days=days)).isoformat()
    follow_spec = scene.specs[follow.service]
    follow_noun = entity_noun(follow_spec, follow.entity)
    parent_id = parent_label = None
    where = ""
    if follow.parent_lister:
        parent = next(s for s in follow.slots if s.kind == "parent")
        parent_rows = scene.rows(follow.service, parent.parent or "")
        parent_id = rng.choice(sorted(parent_rows))
        parent_label = f"{w.team.title().removeprefix('The ')} approvals"
        parent_rows[parent_id][follow.parent_label or ""] = parent_label
        where = f' in the "{parent_label}" {entity_noun(follow_spec, parent.parent or "")}'
    has_due = any(s.kind == "due" for s in follow.slots)
    due_words = f", due {days} days from the day you open it" if has_due else ""
    title = f"{w.noun.capitalize()} approval limits"
    rule = (f"{w.nouns.capitalize()} with {w.amount} of {_money(limit)} or more may not be {w.state} directly. Open a "
            f"{follow_noun}{where} in {follow_spec.name} assigned to {approver.full_name} ({approver.email}) that names "
            f"the {w.noun} by its {w.label}{due_words}, and tell the requester it is awaiting approval. Below the limit, "
            f"go ahead.")
    if revised:
        _policy(scene, title, f"{w.nouns.capitalize()} with {w.amount} of {_money(limit * 2)} or more need "
                f"{former.full_name} ({former.email}) to approve them; open a {follow_noun} for them. Below that, go "
                f"ahead.", rng.randint(60, 200))
    _policy(scene, title, rule, rng.randint(1, 20))
    scene.start()
    _read_rules(scene, title)
    parents = scene.call(follow.service, follow.parent_lister, {}) if follow.parent_lister else None
    search = next((t.name for t in scene.specs[case.service].tools if t.entity == case.entity
                   and t.effect.value == "search" and t.required_parameters() == ["query"]), None)
    criteria: list[Criterion] = []
    traps: list[tuple[Trap, Criterion]] = []
    told: list[str] = []
    for record_id, needs in zip(requests, routes, strict=True):
        label = str(rows[record_id][case.label])
        lookup = scene.call(case.service, search, {"query": given(label)}) if search else \
            scene.call(case.service, case.lister, {})
        k = scene.position(lookup, record_id)
        direct = PlanStep(index=len(scene.steps), service_id=case.service, tool=case.action,
                          args=_acted(scene, lookup, k))
        people = {"assignee": given(approver.email, "email"), "sender": given(me.email)}
        ask_args = _filled(scene, follow.slots, people, f"Approval needed: {w.noun} {label}",
                           f"{w.noun.capitalize()} {label} ({w.amount} {_money(rows[record_id][case.amount])}) was "
                           f"requested to be {w.state}; it is over the {_money(limit)} limit.", due,
                           out(parents, f"items[{scene.position(parents, parent_id)}].id") if parents is not None and
                           parent_id else None)
        if parents is not None and parent_id:
            slot = next(s for s in follow.slots if s.kind == "parent")
            ask_args[slot.parameter] = out(parents, f"items[{scene.position(parents, parent_id)}].id",
                                           entity_ref(follow.service, slot.parent or ""))
        ask = PlanStep(index=len(scene.steps), service_id=follow.service, tool=follow.tool, args=ask_args)
        if needs:
            scene.call(follow.service, follow.tool, ask_args)
            criteria.append(_asked(scene, approver.email, label, due if has_due else None, parent_id))
            criterion = _untouched(scene, record_id, f"does not make {w.noun} {label} {w.state} itself: it is over the "
                                   f"limit and waits for approval")
            wrong = Plan(steps=[*scene.steps[:-1], direct])
        else:
            scene.call(case.service, case.action, _acted(scene, lookup, k))
            criteria.append(_moved(scene, record_id, label))
            criterion = _no_request(scene, label)
            wrong = Plan(steps=[*scene.steps[:-1], ask])
        traps.append((Trap(kind="threshold", rule=f"the {_money(limit)} approval limit in the policy",
                           criterion_id=criterion.id, wrong_plan=wrong), criterion))
        first = _first_name(scene.person(emails[record_id]), emails[record_id])
        body = (rng.choice(words_for.PENDING).format(first=first, noun=w.noun, label=label, me=me.full_name) if needs
                else _notice(scene, first, label, "That was what you asked for.", me))
        scene.call(draft.channel.service, draft.channel.tool,
                   _message(scene, out(lookup, f"items[{k}].{case.contact}", "email"), f"Your {w.noun} {label}", body,
                            me.email))
        criteria.append(_sent(scene, emails[record_id], label, "tells the requester where it stands"))
        person = scene.person(emails[record_id])
        quoted = f'the {w.noun} "{label}"'
        told.append(f"{person.full_name if person else emails[record_id]} asked us to {_verb(scene, quoted)}")
    asks = "; ".join(told[:-1]) + ("; and " if count > 1 else "") + told[-1]
    revised_words = " (it has been revised over time: the most recent version is the one that counts)" if revised else ""
    policy = (f"the \"{title}\" {entity_noun(scene.specs[book.service], book.entity)} in "
              f"{scene.specs[book.service].name}{revised_words}")
    whom = "each requester" if count > 1 else first
    handle = rng.choice((
        (f"Please handle {'each request' if count > 1 else 'it'} under our approval policy, {policy}, and email {whom} "
        f"from my address to say where their request stands (mention the {w.label} so they know which one it is)."),
        (f"Our approval policy is {policy}, so please deal with {'these' if count > 1 else 'this'} accordingly and "
        f"write to {whom} from my address to tell them where things stand, quoting the {w.label}."),
    ))
    request = _letter(scene, me, _reason(scene, "approval_gate" if count > 1 else "approval_gate_single"),
                      f"{asks[0].upper() + asks[1:]}. {handle}")
    if count == 1:
        record_id = requests[0]
        report = {"needs_approval": (fixed(routes[0]), f"whether the {w.noun} needed approval"),
                  _key(w.amount or "amount"): (fixed(rows[record_id][case.amount]), f"its {w.amount}")}
    else:
        report = {"sent_for_approval": (fixed(sum(routes)), "how many requests went to approval"),
                  _key(f"combined {w.amount} {w.state}"): (
                      fixed(round(sum(rows[r][case.amount] for r, n in zip(requests, routes, strict=True) if not n), 2)),
                      f"the combined {w.amount} of the {w.nouns} you marked {w.state} yourself")}
    built = Built(request, report, criteria, decisions=count + int(revised), rules=1,
                  capabilities=("disambiguation",) if revised else ())
    built.traps = traps
    return built


def _asked(scene: Scene, approver: str, label: str, due: str | None, parent: str | None) -> Criterion:
    follow = scene.draft.follow_up
    assert follow is not None
    match: dict[str, Any] = {next(s.parameter for s in follow.slots if s.kind == "assignee"): approver}
    if due is not None:
        match[next(s.parameter for s in follow.slots if s.kind == "due")] = due
    if parent is not None:
        match[next(s.parameter for s in follow.slots if s.kind == "parent")] = parent
    noun = entity_noun(scene.specs[follow.service], follow.entity)
    return Criterion(id=f"approval_asked_{_key(label)}", kind="state",
                     description=f"a new {noun} in {scene.specs[follow.service].name} for {approver} that names {label}"
                                 + (f", due {due}" if due else ""),
                     check={"op": "record_exists", "service": follow.service, "entity": follow.entity, "match": match,
                            "new": True, "mentions": {"fields": _mention_fields(follow.slots), "values": [label]}})


def _no_request(scene: Scene, label: str) -> Criterion:
    follow = scene.draft.follow_up
    assert follow is not None
    noun = entity_noun(scene.specs[follow.service], follow.entity)
    return Criterion(id=f"no_approval_{_key(label)}", kind="negative",
                     description=f"opens no approval {noun} for {label}: it is under the limit",
                     check={"op": "no_new_record", "service": follow.service, "entity": follow.entity, "match": {},
                            "mentions": {"fields": _mention_fields(follow.slots), "values": [label]}})


# -- requests for a set-up in another system -----------------------------------------------------------------------
def _stated_value(value: Any) -> str:
    """A value as the asker writes it in their request (a switch as yes or no, a text in quotes)."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return f'"{value}"' if isinstance(value, str) and (" " in value or not value) else str(value)


def _details(values: dict[str, Any]) -> list[str]:
    """Each value with the words of its field (``full name "Jonas Weber"``), as the request and its rubric say it."""
    return [f"{field_words(name)} {_stated_value(value)}" for name, value in values.items()]


def _request_text(scene: Scene, noun: str, service: str, values: dict[str, Any], under: str, first: str) -> str:
    """A request for a new ``noun`` in ``service`` as its asker writes it, every value the set-up needs stated
    (``under``: the records it goes under, named as the asker knows them, or empty)."""
    details = _details(values)
    listed = details[0] if len(details) == 1 else ", ".join(details[:-1]) + " and " + details[-1]
    where = f"{service}{under}"
    return scene.rng.choice((
        f"Hi, could you set up a new {noun} in {where} for us? It needs {listed}. Thanks, {first}",
        f"Please create {a_or_an(noun)} {noun} in {where} with {listed}. We need it this week. {first}",
        f"Hello, we need {a_or_an(noun)} {noun} in {where}: {listed}. Let me know when it is there. Best, {first}",
    ))


def _writable_values(scene: Scene, spec: ServiceSpec, tool: ToolSpec, names: list[str], parents: dict[str, str],
                     tries: int = 5) -> dict[str, Any]:
    """Values for ``names`` that a person would write in a request for a new record: its name has a word in it, not
    only the characters a pattern allows (``3TI.4.T.I.O``); a choice is a live status, never one a record ends in;
    no date before today (a birth date aside); a value the record it goes under holds (a ledger account's currency)
    is that record's."""
    made = scene.draft.provision
    assert made is not None
    props = tool.parameter_properties()
    named = made.label or next((n for n in names if plain_text(props.get(n))), None)
    held = [scene.rows(made.service, p.entity)[parents[p.parameter]] for p in made.parents]
    for _ in range(tries):
        drawn = step_values(spec, tool, names, scene.population, scene.today, scene.rng)
        for name in names:
            schema = props.get(name) if isinstance(props.get(name), dict) else {}
            value = drawn[name]
            if schema.get("enum") and not is_live(str(value)):
                drawn[name] = next((v for v in schema["enum"] if is_live(str(v))), value)
            elif isinstance(value, str) and (day := iso_day(value)) is not None and day < scene.today \
                    and not set(words(name)) & BIRTH_WORDS:
                drawn[name] = _dated(value, scene.today)
            drawn[name] = next((r[name] for r in held if r.get(name) is not None), drawn[name])
        if named is None or (isinstance(drawn[named], str) and re.search(r"[a-z]{3}", drawn[named])):
            return drawn
    raise WorkflowError(f"{tool.name}: no name a person would write for its {named}")


def _parents_for(scene: Scene, count: int) -> list[dict[str, str]]:
    """For each of ``count`` set-ups, the record each parent parameter puts it under (parameter → record id), a
    distinct record per set-up where there are enough, each with a name of its own."""
    made = scene.draft.provision
    assert made is not None
    chosen: list[dict[str, str]] = [{} for _ in range(count)]
    for parent in made.parents:
        rows = scene.rows(made.service, parent.entity)
        named = [r for r in sorted(rows) if isinstance(rows[r].get(parent.label), str) and rows[r][parent.label].strip()
                 and sum(str(o.get(parent.label)).casefold() == rows[r][parent.label].casefold()
                         for o in rows.values()) == 1]
        if not named:
            raise WorkflowError(f"no {parent.entity} record with a name of its own to put the set-up under")
        picks = scene.rng.sample(named, min(count, len(named)))
        for index in range(count):
            chosen[index][parent.parameter] = picks[index % len(picks)]
    return chosen


def _under(scene: Scene, parents: dict[str, str]) -> str:
    made = scene.draft.provision
    assert made is not None
    spec = scene.specs[made.service]
    return "".join(f', under the {entity_noun(spec, p.entity)} "{scene.rows(made.service, p.entity)[parents[p.parameter]][p.label]}"'
                   for p in made.parents)


def _kept(scene: Scene, step: int, values: dict[str, Any]) -> dict[str, Any]:
    """The values of a set-up's request that its new record holds as given (what the rubric can check): read from
    the service's state, where a service may keep a record in another shape than its reply shows; a service that
    keeps none of them as given makes nothing checkable."""
    made = scene.draft.provision
    assert made is not None and scene.runtime is not None
    before = scene.world.services[made.service].tables.get(made.entity, {})
    after = scene.runtime.world_state().services[made.service].tables.get(made.entity, {})
    new = [record for record_id, record in sorted(after.items()) if record_id not in before]
    kept = {name: value for name, value in values.items() if new and same_value(value, new[-1].get(name))}
    if not kept:
        raise WorkflowError(f"the new record of {scene.steps[step].tool} keeps none of the values it was given")
    return kept


def _made(scene: Scene, values: dict[str, Any], label: str) -> Criterion:
    made = scene.draft.provision
    assert made is not None
    spec = scene.specs[made.service]
    noun = entity_noun(spec, made.entity)
    shown = ", ".join(_details(values))
    return Criterion(id=f"set_up_{_key(label)}", kind="state",
                     description=f"a new {noun} in {spec.name} with {shown} (what {label} asks for)",
                     check={"op": "record_exists", "service": made.service, "entity": made.entity, "match": values,
                            "new": True})


def _not_made(scene: Scene, values: dict[str, Any], label: str, why: str) -> Criterion:
    made = scene.draft.provision
    assert made is not None
    return Criterion(id=f"not_set_up_{_key(label)}", kind="negative", description=why,
                     check={"op": "no_new_record", "service": made.service, "entity": made.entity, "match": values})


def fulfil(scene: Scene) -> Built:
    """Requests in one status that ask, in their own text, for a new record in another service: each is carried
    out there with the values it states, then moved on (closed) and its asker told; a request in another status
    asking for the same kind of thing is left alone (medium and hard), and a manager gets the list (hard)."""
    draft, rng, case, made = scene.draft, scene.rng, scene.draft.case, scene.draft.provision
    assert made is not None
    w = Words.of(scene)
    target = scene.specs[made.service]
    tool = target.tool(made.tool)
    noun = entity_noun(target, made.entity)
    body = request_body(scene.specs[case.service], case)
    if body is None:
        raise WorkflowError(f"{case.entity} records hold no request text")
    rows = scene.rows(case.service, case.entity)
    ids = sorted(rows)
    ready, others = _statuses(scene)
    waiting = [s for s in others if s != case.target] or others
    count = 3 if draft.level == "hard" else 1
    decoys = 0 if draft.level == "easy" else 1
    if len(ids) < count + decoys + 1:
        raise WorkflowError("too few cases for the queue")
    chosen = rng.sample(ids, count + decoys)
    asks, decoy = sorted(chosen[:count]), chosen[count:]
    for record_id in ids:
        rows[record_id][case.status] = ready if record_id in asks else rng.choice(waiting if record_id in decoy
                                                                                   else others)
    values: dict[str, dict[str, Any]] = {}
    parents = dict(zip(asks + decoy, _parents_for(scene, count + decoys), strict=True))
    for record_id in asks + decoy:
        drawn = _writable_values(scene, target, tool, list(made.parameters), parents[record_id])
        if made.label is not None:
            drawn[made.label] = f"{drawn[made.label]} {record_id.rsplit('_', 1)[-1]}" \
                if any(drawn[made.label] == v.get(made.label) for v in values.values()) else drawn[made.label]
        values[record_id] = drawn
        email, person = _contact_of(scene, rows[record_id])
        name = made.label or next((n for n in made.parameters if isinstance(drawn[n], str)), None)
        rows[record_id][case.label] = f"New {noun}: {drawn[name]}" if name is not None else f"New {noun}"
        rows[record_id][body] = _request_text(scene, noun, target.name, drawn, _under(scene, parents[record_id]),
                                              _first_name(person, email))
    _unique_labels(scene, asks + decoy)
    asks.sort(key=lambda r: str(rows[r][case.label]).casefold())  # the order the report names them in
    emails = {r: _contact_of(scene, rows[r])[0] for r in asks}
    mine = [emails[r].casefold() for r in asks]
    if not all(mine) or len(set(mine)) != len(mine):
        raise WorkflowError("the requests do not come from distinct people")
    me, boss = scene.staff(set(mine), 2)
    lookup = _open_cases(scene, None, ready)
    listed = {p.entity: scene.call(made.service, p.lister, {}) for p in made.parents}
    props = tool.parameter_properties()
    implicit = {name: fixed(implicit_value(props[name])) for name in made.implicit}
    criteria: list[Criterion] = []
    labels = [str(rows[r][case.label]) for r in asks]
    report: dict[str, tuple[ArgBinding, str]] = {}
    reported = rng.randrange(count)  # the one set-up whose id the report asks for, named by who asked for it
    for number, (record_id, label) in enumerate(zip(asks, labels, strict=True)):
        k = scene.position(lookup, record_id)
        under = {p.parameter: out(listed[p.entity], f"items[{scene.position(listed[p.entity], parents[record_id][p.parameter])}].id",
                                  entity_ref(made.service, p.entity)) for p in made.parents}
        step = scene.call(made.service, made.tool, {**{name: fixed(value) for name, value in values[record_id].items()},
                                                    **under, **implicit})
        kept = _kept(scene, step, {**values[record_id], **parents[record_id]})
        scene.call(case.service, case.action, _acted(scene, lookup, k))
        first = _first_name(scene.person(emails[record_id]), emails[record_id])
        message = _message(scene, out(lookup, f"items[{k}].{case.contact}", "email"), label,
                           _notice(scene, first, label, f"Your {noun} is set up in {target.name}.", me), me.email)
        scene.call(draft.channel.service, draft.channel.tool, message)
        criteria += [_made(scene, kept, label), _moved(scene, record_id, label),
                     _sent(scene, emails[record_id], label, "tells whoever asked")]
        if count == 1:
            report[_key(f"{noun} id")] = (out(step, "id"), f"the id of the new {noun}")
        elif number == reported:
            person = scene.person(emails[record_id])
            who = person.full_name if person is not None else emails[record_id]
            report[_key(f"{noun} id for requester")] = (out(step, "id"), f"the id of the {noun} you set up for {who}")
    if count > 1:
        report = {"count": (fixed(count), f"how many {plural_of(noun)} you set up"), **report}
    state = field_words(ready)
    verb = _verb(scene, "it" if count == 1 else "each of them")
    if count == 1:
        ask = rng.choice((
            (f"Somewhere among the {state} {w.nouns} in {w.service} there's a request for {a_or_an(noun)} {noun} in "
             f"{target.name}. Could you set it up just as the request says, {verb}, and drop the person who sent it "
             f"a note from my address? Leave anything that isn't {state} for now."),
            (f"One of the {state} {w.nouns} in {w.service} is someone asking for {a_or_an(noun)} {noun} in "
             f"{target.name}. Please create it with the details they gave, then {verb} and let them know by email "
             f"from my address. Anything that isn't {state} can wait."),
        ))
    else:
        nouns = plural_of(noun)
        ask = rng.choice((
            (f"Some of the {state} {w.nouns} in {w.service} are requests for new {nouns} in {target.name}. Please "
             f"set each one up with the details its requester gave, {verb} and send each requester a quick note "
             f"from my address. Anything that isn't {state} can wait."),
            (f"Could you work through the {state} {w.nouns} in {w.service} that ask for {nouns} in {target.name}? "
             f"Create each as requested, {verb}, and let each requester know by email from my address; leave the "
             f"ones that aren't {state}."),
        ))
    after = ""
    if count > 1:
        after = _summary_ask(scene, boss)
        criteria.append(_summary(scene, boss, me, f"{noun.capitalize()} requests done",
                                 f"Hi {boss.first_name}, done and closed: {', '.join(labels)}. {me.full_name}",
                                 labels))
    reason = scene.rng.choice(words_for.REASONS[("fulfil" if count > 1 else "fulfil_single", "close")]).format(
        target=target.name, team=w.team, nouns=w.nouns, day=rng.choice(words_for.DAYS))
    built = Built(_letter(scene, me, reason, ask, after=after), report, criteria,
                  decisions=count + decoys, capabilities=("disambiguation",) if decoys else ())
    checked = set(kept)  # the fields the service keeps as given: the same for every call of its one tool
    for record_id in decoy:
        label = str(rows[record_id][case.label])
        asked = {**values[record_id], **parents[record_id]}
        state = field_words(str(rows[record_id][case.status]))
        why = f"it is {state}, not {field_words(ready)}"
        untouched = _untouched(scene, record_id, f"leaves {w.noun} {label} as it is: {why}")
        not_made = _not_made(scene, {k: v for k, v in asked.items() if k in checked}, label,
                             f"sets up nothing that {w.noun} {label} asks for: {why}")
        wrong = Plan(steps=[*scene.steps, PlanStep(index=len(scene.steps), service_id=made.service, tool=made.tool,
                                                   args={**{n: fixed(v) for n, v in asked.items()}, **implicit})])
        built.traps.append((Trap(kind="not_ready", rule=f"only {field_words(ready)} {w.nouns} are carried out",
                                 criterion_id=not_made.id, wrong_plan=wrong), not_made))
        built.criteria.append(untouched)
    return built


BUILDERS: dict[str, Callable[[Scene], Built]] = {
    "priority_pick": priority_pick, "sweep": sweep, "approval_gate": approval_gate, "reconcile": reconcile,
    "fulfil": fulfil,
}



def build_task(draft: WorkflowDraft, specs: Mapping[str, ServiceSpec], seed: int, split: Split,
               runtime_for: Callable[[Task], WorldRuntimeLike], rows: int, today: str,
               distractors: list[str]) -> tuple[Task, Built]:
    """The task of ``draft`` (its rubric still without the collateral and answer criteria, which need the gold
    run) and what its builder reported."""
    scene = Scene(draft, specs, seed, rows, today)
    task_id = task_id_for(draft, seed)  # type: ignore[arg-type]  (a draft has a plan hash, as a walk does)

    def mount(s: Scene) -> WorldRuntimeLike:
        shell = Task(task_id=task_id, seed=seed, domain="", services=draft.services, initial_state=s.world,
                     instruction="", plan=Plan(steps=[]), rubric=[])
        return runtime_for(shell)

    scene.runtime_for = mount
    built = BUILDERS[draft.pattern](scene)
    keys = list(built.report)
    instruction = write_letter(built.request, report_request([(key, what) for key, (_, what) in built.report.items()]),
                               scene.rng)
    initial = WorldState(services={sid: s for sid, s in scene.world.services.items()})
    task = Task(task_id=task_id, seed=seed, split=split, domain=specs[draft.case.service].domain,
                services=draft.services, distractor_services=distractors, initial_state=initial,
                instruction=instruction, house_rules=[COLLATERAL_RULE], traps=[t for t, _ in built.traps],
                report_fields=keys, report_sources={k: b for k, (b, _) in built.report.items()},
                plan=Plan(steps=scene.steps), rubric=built.criteria + [c for _, c in built.traps],
                today=today, walk_hash=draft.plan_hash())
    return task, built
