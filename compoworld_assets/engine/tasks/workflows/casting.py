"""Which parts of a service can play which part in a workflow, read from its spec alone.

A workflow pattern (:mod:`.patterns`) is written over four parts, never over a named API:

* a **case kind** (:class:`CaseKind`): records people work through — they carry a name people use (a number,
  a title, a subject), a status, and a tool that moves them on (a status-setting update); most also carry an
  amount, a date and the person they concern;
* a **channel** (:class:`Channel`): a tool that sends a person a written message (a recipient address and a
  body);
* a **rulebook** (:class:`Rulebook`): records that hold prose a person can look up (a title and a body) and a
  tool that finds them, where a house policy can live;
* a **follow-up** (:class:`FollowUp`): a tool that opens a record of work for a colleague (a title and an
  assignee), where an approval is asked for;
* a **witness** (:class:`Witness`): records of another service that refer to a case by its id and say, by a
  status of their own, that the case's work is done (a payment that succeeded for an invoice, a task done for a
  ticket), against which two systems are reconciled;
* a **provision** (:class:`Provision`): a tool of another service that makes a new record from values a person can
  write in a request (names, numbers, choices, switches, addresses, dates), which a request case asks for in its
  own text. Most operations of real APIs (a load balancer, a namespace, a webhook, a vocabulary) can play only this
  part, so it is how an imported API enters a workflow.

Every tool a part names runs as verified code (``implementation == "code"``): a workflow's plan must replay
exactly and its effects be checkable, so the world model never plays a part. Every required parameter of a
create tool must be one :func:`slot_for` knows how to fill, or the tool plays no part.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from compoworld_assets.engine.library.roles import role_of
from compoworld_assets.engine.library.wording import words
from compoworld_assets.engine.specs.model import Effect, EntitySpec, FieldSpec, ServiceSpec, ToolSpec
from compoworld_assets.engine.types import TYPE_KEY, is_entity_ref, parse_entity_ref

# Fields people name a record by, best first; a field holding prose is never one.
LABEL_WORDS = ("number", "reference", "code", "subject", "title", "name", "serial", "handle", "username")
BODY_WORDS = frozenset({"body", "text", "content", "message", "description", "details", "notes"})
TITLE_WORDS = frozenset({"title", "subject", "name", "summary", "headline"})
RECIPIENT_WORDS = frozenset({"to", "recipient", "recipients"})
# A tool that only files or drafts a message sends nobody anything.
NOT_SENT_WORDS = frozenset({"receive", "draft", "import", "log", "record", "file", "save"})
# Records that are work someone is asked to do.
WORK_WORDS = frozenset({"task", "ticket", "issue", "todo", "approval", "request", "case", "card", "incident",
                        "story", "action"})
# Statuses a record ends in, or waits in: a case in one of them is not worked on.
TERMINAL_WORDS = frozenset({"cancelled", "canceled", "void", "voided", "closed", "done", "completed", "archived",
                            "deleted", "rejected", "terminated", "expired", "retired", "deactivated", "refunded",
                            "failed", "returned", "withdrawn", "resolved", "paid", "hired", "won", "lost",
                            "declined", "unsubscribed", "bounced", "trash", "finished", "inactive", "churned",
                            "scrapped", "abandoned", "discarded", "dismissed", "obsolete", "delivered"})
# Terminal statuses a record reaches by being finished, not called off.
FINISHED_WORDS = frozenset({"closed", "done", "completed", "resolved", "paid", "returned", "won", "hired",
                            "refunded", "finished", "delivered"})
# A witness status that says the work its case stands for is done (an approval, a confirmation or a publication says
# only that the witness itself went ahead: an approved time entry or a published document does not finish a project).
DONE_WORDS = frozenset({"succeeded", "completed", "paid", "delivered", "done", "resolved", "closed", "signed",
                        "won", "accepted", "returned", "settled"})
HOLD_WORDS = frozenset({"hold", "paused", "blocked", "suspended", "disputed", "frozen"})
# What a finished status says happened, by its words: money changed hands, goods arrived, work was finished, a
# party agreed, goods came back. A witness can settle a case only where both say the same kind of thing (a payment
# that succeeded says an order is paid, not that it was delivered or that its ticket can close).
OUTCOMES = {"settled": frozenset({"paid", "succeeded", "settled", "refunded"}),
            "arrived": frozenset({"delivered", "received"}),
            "finished": frozenset({"done", "completed", "closed", "resolved", "finished"}),
            "agreed": frozenset({"signed", "accepted", "won"}),
            "returned": frozenset({"returned"})}


def outcome_of(status: str) -> str | None:
    """The kind of outcome a status records (:data:`OUTCOMES`); None for one that records none."""
    parts = set(words(str(status)))
    return next((kind for kind, known in OUTCOMES.items() if parts & known), None)
DATE_TYPES = ("date", "datetime")


@dataclass(frozen=True)
class CaseKind:
    """Records of ``entity`` in ``service`` that ``action`` moves from one of ``ready`` to ``target``."""

    service: str
    entity: str
    label: str
    status: str
    ready: tuple[str, ...]
    target: str
    action: str
    key: str
    lister: str
    status_filter: bool
    amount: str | None
    date: str | None
    contact: str | None
    contact_name: str | None


@dataclass(frozen=True)
class Slot:
    """How a workflow fills one parameter of a create tool (see :func:`slot_for`)."""

    parameter: str
    kind: str  # recipient, sender, assignee, title, body, when, due, flag, choice, parent
    value: object = None
    parent: str | None = None  # the entity a ``parent`` slot names a record of, in the same service


@dataclass(frozen=True)
class Channel:
    service: str
    tool: str
    entity: str
    slots: tuple[Slot, ...]


@dataclass(frozen=True)
class Rulebook:
    service: str
    entity: str
    title: str
    body: str
    finder: str
    by_query: bool
    stamp: str | None  # a datetime field telling which of two versions is the latest


@dataclass(frozen=True)
class FollowUp:
    service: str
    tool: str
    entity: str
    slots: tuple[Slot, ...]
    parent_lister: str | None
    parent_label: str | None


@dataclass(frozen=True)
class Witness:
    """Records of ``entity`` in ``service`` whose ``ref`` names a ``case_entity`` of ``case_service`` and whose
    ``status`` is ``done`` when that case's work is done."""

    service: str
    entity: str
    ref: str
    case_service: str
    case_entity: str
    status: str
    done: str
    lister: str
    status_filter: bool


@dataclass(frozen=True)
class Parent:
    """A parameter of a set-up naming the record of ``entity`` (same service) it goes under, which the request
    names by its ``label`` and ``lister`` finds."""

    parameter: str
    entity: str
    lister: str
    label: str


@dataclass(frozen=True)
class Provision:
    """A create ``tool`` of ``service`` whose ``parameters`` a request can state (its required ones; for a tool
    that requires none, the name or title it takes); ``label`` names the new record (a ``name`` or ``title``
    parameter) where one does; ``parents``: the records it goes under, named by the request."""

    service: str
    tool: str
    entity: str
    parameters: tuple[str, ...]
    label: str | None
    parents: tuple[Parent, ...] = ()
    implicit: tuple[str, ...] = ()  # required parameters with one possible value (:func:`implicit_value`)


@dataclass(frozen=True)
class Cast:
    """Every part each service of a library can play."""

    cases: tuple[CaseKind, ...]
    channels: tuple[Channel, ...]
    rulebooks: tuple[Rulebook, ...]
    follow_ups: tuple[FollowUp, ...]
    witnesses: tuple[Witness, ...] = ()
    provisions: tuple[Provision, ...] = ()


def cast_library(specs: Mapping[str, ServiceSpec], implementation: Mapping[str, Mapping[str, str]]) -> Cast:
    """The parts of every service in ``specs`` (``implementation``: service → tool → ``code``/``world_model``)."""
    cases: list[CaseKind] = []
    channels: list[Channel] = []
    rulebooks: list[Rulebook] = []
    follow_ups: list[FollowUp] = []
    found: list[Witness] = []
    provisions: list[Provision] = []
    for service_id in sorted(specs):
        spec = specs[service_id]
        code = {t for t, how in implementation.get(service_id, {}).items() if how == "code"}
        tools = [t for t in spec.tools if t.name in code]
        cases += case_kinds(spec, tools)
        channels += [c for t in tools if (c := channel(spec, t)) is not None]
        rulebooks += [r for e in spec.entities if (r := rulebook(spec, e, tools)) is not None]
        follow_ups += [f for t in tools if (f := follow_up(spec, t, tools)) is not None]
        found += witnesses(spec, tools)
        provisions += [p for t in tools if (p := provision(spec, t, tools)) is not None]
    return Cast(tuple(cases), tuple(channels), tuple(rulebooks), tuple(follow_ups), tuple(found), tuple(provisions))


def _text(field: FieldSpec) -> bool:
    return field.json_type == "string" and field.type is None and not field.enum


def label_field(entity: EntitySpec) -> FieldSpec | None:
    """The field people name a record by: a required plain-text field whose name says so (``number``, ``title``)."""
    for word in LABEL_WORDS:
        for field in entity.fields:
            if field.required and _text(field) and word in words(field.name) and not BODY_WORDS & set(words(field.name)):
                return field
    return None


def move_kind(target: str) -> str:
    """``close`` (the record is finished: paid, done), ``stop`` (it is called off: void, cancel), ``hold`` (it
    waits: pause, block) or ``advance`` (it moves on: send, approve, publish)."""
    parts = set(words(str(target)))
    if parts & FINISHED_WORDS:
        return "close"
    if parts & TERMINAL_WORDS:
        return "stop"
    if parts & HOLD_WORDS:
        return "hold"
    return "advance"


def is_live(value: str) -> bool:
    """Whether a status value is one a record is worked on in (not ended, not waiting)."""
    parts = set(words(str(value)))
    return not parts & TERMINAL_WORDS and not parts & HOLD_WORDS


def case_kinds(spec: ServiceSpec, tools: list[ToolSpec]) -> list[CaseKind]:
    found = []
    for entity in spec.entities:
        label = label_field(entity)
        lister = next((t for t in tools if t.entity == entity.name and t.effect == Effect.LIST), None)
        if label is None or lister is None:
            continue
        for tool in tools:
            move = _status_move(spec, entity, tool)
            if move is None:
                continue
            status, target, allowed = move
            field = entity.field(status)
            enum = list(field.enum or [])
            ready = tuple(v for v in enum if v != target and is_live(v) and (allowed is None or v in allowed))
            if move_kind(target) in ("advance", "close") and target in enum:  # a lifecycle moves on, or ends,
                before = tuple(v for v in ready if enum.index(v) < enum.index(target))  # from before it
                ready = before if move_kind(target) == "advance" else (before or ready)  # never a step back
            key = spec.key_parameter(tool)
            if not ready or key is None or set(tool.required_parameters()) - {key}:
                continue
            contact, contact_name = _contact(entity)
            found.append(CaseKind(
                service=spec.id, entity=entity.name, label=label.name, status=status, ready=ready, target=target,
                action=tool.name, key=key, lister=lister.name,
                status_filter=status in lister.parameter_properties(),
                amount=next((f.name for f in entity.fields if f.type == "money" and f.required), None),
                date=next((f.name for f in entity.fields if f.type in DATE_TYPES and f.required), None),
                contact=contact, contact_name=contact_name))
    return found


def _status_move(spec: ServiceSpec, entity: EntitySpec, tool: ToolSpec) -> tuple[str, str, list | None] | None:
    """(status field, value it sets, statuses it accepts or None) of a tool that moves a record's status."""
    if tool.entity != entity.name or tool.effect != Effect.UPDATE:
        return None
    transition = tool.transition
    if transition is not None and transition.kind == "status" and transition.field:
        status, target, allowed = transition.field, transition.value, transition.allowed_from
    else:
        enums = [(name, value) for name, value in tool.sets.items()
                 if (f := entity.field(name)) is not None and f.enum and value in f.enum]
        if len(enums) != 1:
            return None
        (status, target), allowed = enums[0], None
    field = entity.field(status)
    if field is None or not field.enum or not isinstance(target, str):
        return None
    return status, target, allowed


def _contact(entity: EntitySpec) -> tuple[str | None, str | None]:
    """The email field of the person a record concerns (an outside person first) and the name field beside it."""
    emails = [f for f in entity.fields if f.type == "email" and f.required]
    outside = [f for f in emails if (r := role_of(f.name, entity.name, f.description)) is None or r.role != "employee"]
    chosen = (outside or emails or [None])[0]
    if chosen is None:
        return None, None
    stem = chosen.name.removesuffix("email").rstrip("_")
    names = [f for f in entity.fields if f.type == "person_name"]
    name = next((f.name for f in names if stem and f.name.startswith(stem)), None) or \
        (names[0].name if len(names) == 1 and not stem else None)
    return chosen.name, name


def slot_for(spec: ServiceSpec, tool: ToolSpec, name: str, schema: dict, purpose: str) -> Slot | None:
    """How to fill parameter ``name`` of create ``tool`` for a ``purpose`` (``message`` or ``follow_up``).

    Addresses go to the person written to (a message's recipient) or asked (a follow-up's assignee), or come
    from the person writing; titles and bodies are the agent's own words around the facts the rubric wants;
    times are today; flags are off; choices take their first value; a reference to another record of the same
    service names one the user calls by its label. Anything else: None (the tool plays no part)."""
    parts = set(words(name))
    kind = schema.get("x-cw-type")
    if kind == "email":
        if purpose == "message" and parts & RECIPIENT_WORDS:
            return Slot(name, "recipient")
        role = role_of(name, tool.entity, str(schema.get("description", "")))
        if purpose == "follow_up" and role is not None and role.role == "employee" and \
                not parts & {"created", "creator", "requester", "author", "submitter", "reporter"}:
            return Slot(name, "assignee")
        return Slot(name, "sender")
    if kind in DATE_TYPES:
        return Slot(name, "due" if purpose == "follow_up" and kind == "date" and "due" in parts else "when",
                    value=kind)
    if isinstance(kind, str) and is_entity_ref(kind):
        service, entity = parse_entity_ref(kind)
        return Slot(name, "parent", parent=entity) if service == spec.id and entity != tool.entity else None
    if schema.get("enum"):
        return Slot(name, "choice", value=schema["enum"][0])
    if schema.get("type") == "boolean":
        return Slot(name, "flag", value=False)
    if schema.get("type") == "string" and kind is None:
        if parts & TITLE_WORDS:
            return Slot(name, "title")
        if parts & BODY_WORDS:
            return Slot(name, "body")
    return None


def _slots(spec: ServiceSpec, tool: ToolSpec, purpose: str) -> tuple[Slot, ...] | None:
    props = tool.parameter_properties()
    required = set(tool.required_parameters())
    slots = []
    for name in sorted(props):
        schema = props[name] if isinstance(props[name], dict) else {}
        slot = slot_for(spec, tool, name, schema, purpose)
        if slot is None:
            if name in required:
                return None
            continue
        if name in required or slot.kind in ("recipient", "assignee", "title", "body", "due"):
            slots.append(slot)
    return tuple(slots)


def channel(spec: ServiceSpec, tool: ToolSpec) -> Channel | None:
    """A create tool that writes to a person: one recipient address and a body."""
    if tool.effect != Effect.CREATE or tool.entity is None or set(words(tool.name)) & NOT_SENT_WORDS:
        return None
    slots = _slots(spec, tool, "message")
    if slots is None or [s.kind for s in slots].count("recipient") != 1 or \
            not any(s.kind == "body" for s in slots) or any(s.kind == "parent" for s in slots):
        return None
    return Channel(spec.id, tool.name, tool.entity, slots)


def rulebook(spec: ServiceSpec, entity: EntitySpec, tools: list[ToolSpec]) -> Rulebook | None:
    """Records with a title and a prose body, and a tool that finds them (a text search first)."""
    title = next((f for f in entity.fields if f.required and _text(f) and set(words(f.name)) & TITLE_WORDS), None)
    body = next((f for f in entity.fields if _text(f) and set(words(f.name)) & {"body", "content", "text"}), None)
    if title is None or body is None:
        return None
    search = next((t for t in tools if t.entity == entity.name and t.effect == Effect.SEARCH
                   and "query" in t.parameter_properties() and t.required_parameters() == ["query"]), None)
    lister = next((t for t in tools if t.entity == entity.name and t.effect == Effect.LIST
                   and not t.required_parameters()), None)
    finder = search or lister
    if finder is None:
        return None
    stamp = next((f.name for f in entity.fields if f.type == "datetime"), None)
    return Rulebook(spec.id, entity.name, title.name, body.name, finder.name, search is not None, stamp)


def follow_up(spec: ServiceSpec, tool: ToolSpec, tools: list[ToolSpec]) -> FollowUp | None:
    """A create tool that opens work for a colleague: a title and an assignee, its parent (if any) findable."""
    if tool.effect != Effect.CREATE or tool.entity is None or not set(words(tool.entity)) & WORK_WORDS:
        return None
    slots = _slots(spec, tool, "follow_up")
    if slots is None or [s.kind for s in slots].count("assignee") != 1 or not any(s.kind == "title" for s in slots):
        return None
    parents = [s for s in slots if s.kind == "parent"]
    if len(parents) > 1:
        return None
    lister = label = None
    if parents:
        parent = spec.entity(parents[0].parent or "")
        found = label_field(parent)
        lister_tool = next((t for t in tools if t.entity == parent.name and t.effect == Effect.LIST
                            and not t.required_parameters()), None)
        if found is None or lister_tool is None:
            return None
        lister, label = lister_tool.name, found.name
    return FollowUp(spec.id, tool.name, tool.entity, slots, lister, label)


def witnesses(spec: ServiceSpec, tools: list[ToolSpec]) -> list[Witness]:
    """Entities of ``spec`` that refer to another service's records and carry a status saying one is done."""
    found = []
    for entity in spec.entities:
        lister = next((t for t in tools if t.entity == entity.name and t.effect == Effect.LIST
                       and not t.required_parameters()), None)
        status = next((f for f in entity.fields if f.enum and len(f.enum) > 1
                       and any(set(words(str(v))) & DONE_WORDS for v in f.enum)), None)
        if lister is None or status is None:
            continue
        done = next(str(v) for v in status.enum or [] if set(words(str(v))) & DONE_WORDS)
        for f in entity.fields:
            if isinstance(f.type, str) and is_entity_ref(f.type) and parse_entity_ref(f.type)[0] != spec.id:
                service, target = parse_entity_ref(f.type)
                found.append(Witness(spec.id, entity.name, f.name, service, target, status.name, done, lister.name,
                                     status.name in lister.parameter_properties()))
    return found


# Shared types a person writes out in a request as they are (an address, a date); an entity's id is not one.
STATED_TYPES = frozenset({"email", "phone", "person_name", "company_name", "date", "datetime", "url", "address",
                          "city", "country", "currency", "money"})
# At most this many values in one request: more reads as a form, not a note.
MAX_STATED = 5
# Words of a parameter nobody writes in a request: an id, a key, a secret (nor an ``api-version``: the protocol's).
ID_WORDS = frozenset({"id", "ids", "uuid", "key", "token", "password", "secret"})
# First words of an entity name that make it an operation, not a thing a request asks for ("add tag", "describe
# tag", "recognize language": names an importer took from an operation).
ACTION_WORDS = frozenset({"add", "create", "insert", "new", "get", "describe", "fetch", "retrieve", "read", "show",
                          "view", "list", "search", "find", "query", "update", "modify", "patch", "edit", "delete",
                          "remove", "destroy", "send", "start", "stop", "enable", "disable", "recognize", "detect",
                          "analyze", "analyse", "translate", "generate", "validate", "verify", "enrich", "convert",
                          "calculate", "compute"})


def plain_text(schema: object) -> bool:
    """Whether a parameter's schema takes free text: a string, neither a choice nor a shared type."""
    return isinstance(schema, dict) and schema.get("type") == "string" and not schema.get("enum") \
        and schema.get(TYPE_KEY) is None


def _stated(schema: dict) -> bool:
    """Whether a person can write a value of ``schema`` in a sentence: a choice, a switch, a number, or a string
    that is plain text or a shared type people write (never an id, an object or a list)."""
    kind = schema.get(TYPE_KEY)
    if kind is not None:
        return kind in STATED_TYPES
    if schema.get("enum"):
        return all(isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in schema["enum"])
    return schema.get("type") in ("string", "integer", "number", "boolean") and schema.get("format") != "binary"


def provision(spec: ServiceSpec, tool: ToolSpec, tools: list[ToolSpec]) -> Provision | None:
    """A create tool a request can ask for: each required parameter one a person states (:func:`_stated`), never an
    id, or the record of the same service it goes under (:func:`_parent`); one to :data:`MAX_STATED` stated values
    (a tool that requires none: the name or title it takes)."""
    if tool.effect != Effect.CREATE or tool.entity is None:
        return None
    props = tool.parameter_properties()
    if words(tool.entity)[:1] and words(tool.entity)[0] in ACTION_WORDS:  # "add tag": an operation, not a thing
        return None
    parents, stated, implicit = [], [], []
    for name in tool.required_parameters():
        schema = props.get(name) if isinstance(props.get(name), dict) else {}
        kind = schema.get(TYPE_KEY)
        if isinstance(kind, str) and is_entity_ref(kind) and (found := _parent(spec, tool, name, kind, tools)):
            parents.append(found)
        elif implicit_value(schema) is not None:
            implicit.append(name)
        elif _stated(schema) and name != "id" and not set(words(name)) & ID_WORDS and words(name) != ["api", "version"]:
            stated.append(name)
        else:
            return None
    named = [name for name in props if (name in stated or not tool.required_parameters()) and plain_text(props[name])]
    label = next((name for word in ("name", "title") for name in named if word in words(name)), None)
    if not tool.required_parameters() and label is not None:
        stated = [label]
    fields = {f.name for e in spec.entities if e.name == tool.entity for f in e.fields}
    if not stated or len(stated) > MAX_STATED or not fields & set(stated):  # the new record must show the request
        return None
    return Provision(spec.id, tool.name, tool.entity, tuple(stated), label, tuple(parents), tuple(implicit))


def implicit_value(schema: dict) -> object | None:
    """The value a required parameter takes without anyone saying it: its only choice (an API's ``Action`` or
    ``Version``) or its default (an ``api-version``); None when a person has to give one."""
    if isinstance(schema.get("enum"), list) and len(schema["enum"]) == 1:
        return schema["enum"][0]
    return schema.get("default")


def _parent(spec: ServiceSpec, tool: ToolSpec, name: str, kind: str, tools: list[ToolSpec]) -> Parent | None:
    """The record of another entity of ``spec`` that parameter ``name`` (an id of it) puts the new one under, where a
    person can name it (a name or title field) and a tool lists them all."""
    service, entity = parse_entity_ref(kind)
    found = next((e for e in spec.entities if e.name == entity), None)
    if service != spec.id or entity == tool.entity or found is None:
        return None
    label = next((f.name for word in ("name", "title") for f in found.fields if _text(f) and word in words(f.name)),
                 None)
    lister = next((t.name for t in tools if t.entity == entity and t.effect == Effect.LIST
                   and not t.required_parameters()), None)
    return Parent(name, entity, lister, label) if label and lister else None


def request_body(spec: ServiceSpec, case: CaseKind) -> str | None:
    """The field of ``case``'s records that holds a request in its asker's words (a ticket's description), where
    its records are work someone asks for (:data:`WORK_WORDS`)."""
    entity = spec.entity(case.entity)
    if not set(words(case.entity)) & WORK_WORDS:
        return None
    return next((f.name for f in entity.fields if _text(f) and set(words(f.name)) & BODY_WORDS and f.name != case.label),
                None)
