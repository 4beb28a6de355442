"""Action semantics, offline: the state transition a non-CRUD tool performs, from its spec alone.

A tool whose name does not say create/read/update/delete (``cancel_order``, ``approve_expense``,
``mark_message_as_read``, ``book_reservation``) is, for an importer, an ``action`` with no
derivable semantics, served by the world model. :func:`derive_transitions` reads the evidence a
spec holds for each such tool and, when it is enough, turns the tool into one of:

* **status** — the record named by the tool's key parameter gets a status value: the verb's
  past participle (:data:`STATUS_VERBS`), chosen from the status field's ``enum`` when it has one
  (``cancel`` → ``cancelled``/``canceled``; ``mark_x_as_read`` → ``read``). Other parameters
  named after (or added as) fields of the record are stored with it (a cancel ``reason``).
* **update** — a field-update verb (:data:`FIELD_VERBS`: ``modify``, ``change``, ``assign``...)
  with a key parameter writes the other parameters onto the record.
* **query** — a reading verb (:data:`READ_VERBS`: ``describe``, ``search``, ``translate``...), or, in
  an HTTP API, a safe method (:func:`safe_method_transition`: ``GET``, ``HEAD``, ``OPTIONS``) whose name
  has no changing verb: the tool changes nothing, and the world model answers it from the state
  without changing it (a proposed change is refused).
* **create** — a creating verb (:data:`CREATE_VERBS`: ``book``, ``send``, ``schedule``...) with
  no key parameter of the noun's entity stores a new record of that entity, made when the spec
  has none (``send_message`` → a ``Message`` record with the message's parameters as fields).

**Preconditions** the generated code enforces: the record exists; referenced ids of the service
exist; enum values are valid (the argument validator); a status transition does not repeat
(cancelling a cancelled order is a ``conflict``); and the record's status is one the tool allows
when the name or description says so: a name word that is a value of the status enum
(``cancel_pending_order`` needs ``pending``), or status values named in a description sentence
that says ``only`` / ``must`` (``Only open tickets can be closed``).

The record is found through a parameter typed as a reference to one of the service's entities
(``x-cw-type: svc.Order.id``, inferred for ``order_id``), preferring the entity the tool's name
names. No rule names an API: the vocabulary is English verbs and the evidence is the spec's own
names, enums and descriptions. Each derived transition is stored on the tool with its evidence
(:class:`~compoworld_assets.engine.specs.model.Transition`), so the catalog shows why a tool does
what it does, and a spec can declare a tool's transition itself (``x-cw-transition`` on a
function or an OpenAPI operation; ``{"kind": "none"}`` keeps the tool for the world model).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from compoworld_assets.engine.specs.infer import declared_json_type, entity_name, reference_schema, snake_name
from compoworld_assets.engine.specs.model import (
    ENTITY_NAME_RE,
    Effect,
    EntitySpec,
    FieldSpec,
    ServiceSpec,
    ToolSpec,
    Transition,
)
from compoworld_assets.engine.types import TYPE_KEY, entity_ref, is_known_type, parse_entity_ref

STATUS_VERBS: dict[str, tuple[str, ...]] = {
    "cancel": ("cancelled", "canceled"),
    "approve": ("approved",),
    "reject": ("rejected", "declined"),
    "decline": ("declined", "rejected"),
    "deny": ("denied", "rejected"),
    "close": ("closed",),
    "reopen": ("reopened", "open"),
    "resolve": ("resolved", "closed"),
    "ship": ("shipped",),
    "deliver": ("delivered",),
    "dispatch": ("dispatched", "shipped"),
    "fulfill": ("fulfilled",),
    "archive": ("archived",),
    "unarchive": ("unarchived", "active"),
    "restore": ("restored", "active"),
    "enable": ("enabled", "active"),
    "disable": ("disabled", "inactive"),
    "activate": ("active", "activated"),
    "deactivate": ("inactive", "deactivated"),
    "suspend": ("suspended",),
    "resume": ("resumed", "active", "running"),
    "pause": ("paused",),
    "complete": ("completed", "complete", "done"),
    "finish": ("finished", "completed", "done"),
    "confirm": ("confirmed",),
    "publish": ("published",),
    "unpublish": ("unpublished", "draft"),
    "lock": ("locked",),
    "unlock": ("unlocked",),
    "block": ("blocked",),
    "unblock": ("unblocked", "active"),
    "submit": ("submitted",),
    "void": ("voided", "void"),
    "accept": ("accepted",),
    "verify": ("verified",),
    "ban": ("banned",),
    "expire": ("expired",),
    "revoke": ("revoked",),
    "retire": ("retired",),
    "refund": ("refunded",),
    "start": ("started", "running", "in_progress", "active"),
    "stop": ("stopped",),
    "terminate": ("terminated",),
    "hold": ("on_hold", "held"),
    "release": ("released",),
    "escalate": ("escalated",),
    "acknowledge": ("acknowledged",),
    "flag": ("flagged",),
    "pin": ("pinned",),
    "unpin": ("unpinned",),
    "mute": ("muted",),
    "unmute": ("unmuted",),
    "snooze": ("snoozed",),
    "return": ("return_requested", "returned"),
    "exchange": ("exchange_requested", "exchanged"),
}
# Verbs that file a request record when the record's status cannot say it (``ReturnRequest``).
REQUEST_VERBS = frozenset({"return", "exchange", "refund", "request"})
# "mark" takes its value from the name (``mark_message_as_read``, ``mark_invoice_paid``).
MARK_VERBS = frozenset({"mark"})
FIELD_VERBS = frozenset(
    {"modify", "change", "set", "assign", "reassign", "rename", "move", "transfer", "reschedule", "update",
     "edit", "upgrade", "downgrade", "adjust", "replace"}
)
CREATE_VERBS = frozenset(
    {"book", "send", "schedule", "add", "place", "reserve", "register", "invite", "post", "upload", "log",
     "record", "request", "issue", "file", "report", "open", "submit", "create", "draft", "compose", "insert",
     "enroll", "subscribe", "order", "purchase", "buy"}
)
# Verbs of a tool that reads or computes without changing anything (``describe_stream``, ``translate_text``):
# it becomes a ``query``, answered by the world model from the state, which it may not change. Verbs that
# also name a write are left out (``watch_repository`` subscribes, ``check_in`` is phrasal).
READ_VERBS = frozenset(
    {"get", "list", "describe", "search", "find", "lookup", "query", "fetch", "retrieve", "read", "view", "show",
     "count", "check", "validate", "preview", "estimate", "calculate", "compute", "analyze", "analyse", "detect",
     "predict", "classify", "recognize", "extract", "summarize", "translate", "convert", "geocode", "parse",
     "tokenize", "compare", "download", "inspect", "explain", "poll", "browse", "scan"}
)
# HTTP methods that do not change the resource (RFC 9110 section 9.2.1).
SAFE_METHODS = frozenset({"get", "head", "options"})
# A verb followed by one of these is a phrasal verb (``log_out``, ``sign_up``), not verb + noun.
PARTICLES = frozenset({"in", "out", "up", "off", "on", "down", "over", "back", "away"})
# Verbs that say a tool changes something, whatever its HTTP method.
CHANGE_VERBS = frozenset(STATUS_VERBS) | REQUEST_VERBS | MARK_VERBS | FIELD_VERBS | CREATE_VERBS
STATUS_FIELD_NAMES = ("status", "state")
DECLARED_KEY = "x-cw-transition"
_FILLERS = frozenset({"a", "an", "the", "my", "all", "new", "existing", "current", "one", "item", "by", "id"})
_CUT_WORDS = frozenset({"by", "for", "from", "to", "in", "of", "with", "on", "at", "into", "as", "using"})
# Request options of HTTP APIs, never part of a record.
TRANSPORT_PARAMETERS = frozenset(
    {"api_version", "access_token", "oauth_token", "alt", "fields", "callback", "pretty_print", "prettyprint",
     "quota_user", "upload_type", "upload_protocol", "xgafv", "user_ip", "key", "format", "pretty", "expand",
     "include", "select", "locale", "lang", "dry_run", "if_match", "if_none_match", "idempotency_key",
     "client_token", "client_request_token", "x_request_id"}
)
_FIELD_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
_SENTENCE = re.compile(r"[^.!?\n]+")
_LIMIT_WORDS = re.compile(r"\b(only|must|cannot|can't|can not|unless|if)\b", re.IGNORECASE)


@dataclass
class _Draft:
    """A service's entities while transitions add fields and records to them."""

    service_id: str
    entities: dict[str, EntitySpec]

    def own_refs(self, tool: ToolSpec) -> dict[str, str]:
        """Parameter → entity, for parameters typed as a reference to one of this service's entities."""
        found = {}
        for name, schema in sorted(tool.parameter_properties().items()):
            ref = schema.get(TYPE_KEY) if isinstance(schema, dict) else None
            if isinstance(ref, str) and ref.endswith(".id"):
                service, entity = parse_entity_ref(ref)
                if service == self.service_id and entity in self.entities:
                    found[name] = entity
        return found


def declared_transition(source: Any) -> Transition | None:
    """The transition a tool's spec entry declares under ``x-cw-transition`` (raises when malformed)."""
    declared = source.get(DECLARED_KEY) if isinstance(source, dict) else None
    if declared is None:
        return None
    if declared is False:
        declared = {"kind": "none"}
    if not isinstance(declared, dict):
        raise ValueError(f"{DECLARED_KEY} must be an object (or false)")  # noqa: TRY004 - quarantines the tool
    evidence = declared.get("evidence") if isinstance(declared.get("evidence"), list) else []
    return Transition.model_validate({**declared, "evidence": ["declared in the spec", *evidence]})


def safe_method_transition(name: str, method: str) -> Transition | None:
    """``query`` for an operation of a safe HTTP method, unless its name's verb says it changes something
    (``GET /rides/{id}/cancel`` named ``cancel_ride`` is left to the name rules)."""
    verb = snake_name(name).split("_", 1)[0]
    if method.lower() not in SAFE_METHODS or verb in CHANGE_VERBS:
        return None
    evidence = f"{method.upper()} is a safe HTTP method: it does not change the resource (RFC 9110, 9.2.1)"
    return Transition(kind="query", evidence=[evidence])


def derive_transitions(spec: ServiceSpec) -> ServiceSpec:
    """``spec`` with a transition for every action tool whose spec gives enough evidence (see module doc).

    Declared transitions (``ToolSpec.transition`` set by the importer from ``x-cw-transition``)
    are applied as given. Tools that are not actions, not implementable, or whose evidence is
    not enough are unchanged. The result is validated as a whole; if it is invalid, the spec is
    returned as it came (every tool keeps its imported effect), not tool by tool.
    """
    draft = _Draft(spec.id, {e.name: e.model_copy(deep=True) for e in spec.entities})
    tools: list[ToolSpec] = []
    for tool in spec.tools:
        transition = tool.transition
        if transition is not None:
            transition = _resolved(tool, transition, draft)
        elif tool.implementable and tool.effect in (None, Effect.ACTION):
            transition = _derive(tool, draft)
        tools.append(_apply(tool, transition, draft) if transition is not None else tool)
    if all(new is old for new, old in zip(tools, spec.tools, strict=True)):
        return spec  # no tool changed, so neither did an entity: nothing to validate again
    try:
        return ServiceSpec.model_validate(
            {**spec.model_dump(), "entities": [e.model_dump() for e in draft.entities.values()],
             "tools": [t.model_dump() for t in tools]}
        )
    except ValueError:  # pydantic's ValidationError included
        return spec


def _resolved(tool: ToolSpec, declared: Transition, draft: _Draft) -> Transition:
    """A declared transition with its entity filled in from the key parameter's type when left out;
    one that cannot apply (no such entity or parameter) becomes ``none``, saying why."""
    if declared.kind in ("none", "query"):
        return declared
    entity = declared.entity or draft.own_refs(tool).get(declared.key or "")
    problem = None
    if declared.kind != "create" and entity not in draft.entities:
        problem = f"no entity {entity!r} in the service"
    elif declared.key is not None and declared.key not in tool.parameter_properties():
        problem = f"no parameter {declared.key!r}"
    if problem is not None:
        return Transition(kind="none", evidence=[*declared.evidence, f"not applied: {problem}"])
    return declared.model_copy(update={"entity": entity})


def _derive(tool: ToolSpec, draft: _Draft) -> Transition | None:
    words = [w for w in snake_name(tool.name).split("_") if w]
    if len(words) < 2 and not draft.own_refs(tool) and not (words and words[0] in READ_VERBS):
        return None
    verb, rest = (words[0], words[1:]) if words else ("", [])
    if rest and rest[0] in PARTICLES:
        return None
    if verb in READ_VERBS:
        return Transition(kind="query", evidence=[f"verb {verb!r} reads or computes: it changes nothing"])
    if verb in STATUS_VERBS or verb in MARK_VERBS:
        keyed = _keyed_record(tool, rest, draft)
        if keyed is not None:
            return _status_transition(tool, verb, rest, keyed, draft) or _request_transition(verb, keyed, draft)
    if verb in FIELD_VERBS:
        keyed = _keyed_record(tool, rest, draft)
        if keyed is not None and set(tool.parameter_properties()) - {keyed[0]}:
            return _update_transition(tool, verb, rest, keyed, draft)
    if verb in CREATE_VERBS:
        return _create_transition(tool, verb, rest, draft)
    return None


def _noun_words(rest: list[str]) -> list[str]:
    noun = [w for w in rest if w not in _FILLERS]
    cut = next((i for i, w in enumerate(noun) if w in _CUT_WORDS), len(noun))
    return noun[:cut]


def _named_entities(rest: list[str], entities: dict[str, EntitySpec]) -> list[str]:
    """Entities the name's words name, longest first (``pending_order_address`` → Order)."""
    words = _noun_words(rest)
    found = []
    for size in range(len(words), 0, -1):
        for start in range(len(words) - size + 1):
            name = entity_name("_".join(words[start:start + size]))
            if name in entities and name not in found:
                found.append(name)
    return found


def _keyed_record(tool: ToolSpec, rest: list[str], draft: _Draft) -> tuple[str, str, str] | None:
    """(key parameter, entity, evidence) for the record a status/update tool acts on."""
    refs = draft.own_refs(tool)
    if not refs:
        return None
    named = _named_entities(rest, draft.entities)
    required = set(tool.required_parameters())
    for entity in named:
        for param, ref_entity in refs.items():
            if ref_entity == entity and param in required:
                return param, entity, f"the record is the {entity} named by parameter {param!r} (the name says {entity})"
    keys = [param for param in refs if param in required]
    if len(keys) == 1 and not named:
        param = keys[0]
        return param, refs[param], f"the record is the {refs[param]} named by its only required reference {param!r}"
    return None


def status_field(entity: EntitySpec) -> FieldSpec | None:
    """The field holding a record's status: ``status``/``state``, or one ending ``_status``/``_state``."""
    for f in entity.fields:
        if f.json_type == "string" and f.name.lower() in STATUS_FIELD_NAMES:
            return f
    for f in entity.fields:
        if f.json_type == "string" and snake_name(f.name).endswith(tuple(f"_{n}" for n in STATUS_FIELD_NAMES)):
            return f
    return None


def _normal(value: Any) -> str:
    return snake_name(str(value))


def _status_transition(
    tool: ToolSpec, verb: str, rest: list[str], keyed: tuple[str, str, str], draft: _Draft
) -> Transition | None:
    key, entity_name_, evidence = keyed
    entity = draft.entities[entity_name_]
    field = status_field(entity)
    enum = list(field.enum) if field is not None and field.enum else None
    if verb in MARK_VERBS:
        wanted = _mark_value(rest, entity_name_)
        candidates: tuple[str, ...] = (wanted,) if wanted else ()
        reason = f"verb 'mark' with value {wanted!r} from the name"
    else:
        candidates = STATUS_VERBS[verb]
        reason = f"verb {verb!r} sets a status ({', '.join(candidates)})"
    if not candidates:
        return None
    if enum is not None:
        value = next((v for c in candidates for v in enum if _normal(v) == c), None)
        if value is None:
            return None
        reason += f"; {value!r} is a value of {entity_name_}.{field.name}"
    else:
        value = candidates[0]
        reason += f"; {entity_name_} has no status enum, so {value!r}"
    field_name = field.name if field is not None else "status"
    notes = [reason, evidence]
    if field is None:
        notes.append(f"{entity_name_} gets a 'status' field (no status field in the spec)")
    allowed = _allowed_from(tool, rest, enum, value)
    if allowed:
        notes.append(f"precondition: {field_name} in {allowed[0]!r} ({allowed[1]})")
    return Transition(kind="status", entity=entity_name_, key=key, field=field_name, value=value,
                      allowed_from=allowed[0] if allowed else None, evidence=notes)


def _request_transition(verb: str, keyed: tuple[str, str, str], draft: _Draft) -> Transition | None:
    """A request record about the keyed one (``return_order_items`` → a ``ReturnRequest``), for the
    verbs that ask for something (:data:`REQUEST_VERBS`) when the status enum has no value for it."""
    if verb not in REQUEST_VERBS:
        return None
    key, entity, evidence = keyed
    name = entity_name(f"{verb}_request")
    existing = draft.entities.get(name)
    if existing is not None and existing.field(key) is None:
        return None
    return Transition(kind="create", entity=name, evidence=[
        (f"verb {verb!r} asks for something and {entity}'s status enum has no value for it, so it files a "
        f"{name} record"), evidence.replace("the record is", "the request is about")])


def _mark_value(rest: list[str], entity: str) -> str | None:
    """``mark_message_as_read`` → ``read``; ``mark_invoice_paid`` → ``paid``."""
    if "as" in rest:
        after = rest[rest.index("as") + 1:]
        return "_".join(after) or None
    entity_words = snake_name(entity).split("_")
    tail = [w for w in rest if w not in entity_words and w not in _FILLERS]
    return tail[-1] if tail else None


def _allowed_from(tool: ToolSpec, rest: list[str], enum: list[Any] | None, target: Any):
    """(allowed statuses, evidence) from the name's qualifiers or a limiting description sentence."""
    if not enum:
        return None
    by_normal = {_normal(v): v for v in enum if v != target}
    qualifiers = [by_normal[w] for w in _noun_words(rest) if w in by_normal]
    if qualifiers:
        return sorted(set(qualifiers), key=str), f"the name says {', '.join(map(str, qualifiers))}"
    for sentence in _SENTENCE.findall(tool.description or ""):
        if not _LIMIT_WORDS.search(sentence):
            continue
        said = snake_name(sentence)
        named = [v for n, v in by_normal.items() if re.search(rf"(^|_){re.escape(n)}(_|$)", said)]
        if named:
            return sorted(set(named), key=str), f"the description says {sentence.strip()[:120]!r}"
    return None


def _update_transition(
    tool: ToolSpec, verb: str, rest: list[str], keyed: tuple[str, str, str], draft: _Draft
) -> Transition:
    key, entity_name_, evidence = keyed
    entity = draft.entities[entity_name_]
    field = status_field(entity)
    enum = list(field.enum) if field is not None and field.enum else None
    notes = [f"verb {verb!r} writes the given fields onto the record", evidence]
    allowed = _allowed_from(tool, rest, enum, None)
    if allowed:
        notes.append(f"precondition: {field.name} in {allowed[0]!r} ({allowed[1]})")
    return Transition(kind="update", entity=entity_name_, key=key, field=field.name if allowed else None,
                      allowed_from=allowed[0] if allowed else None, evidence=notes)


def _create_transition(tool: ToolSpec, verb: str, rest: list[str], draft: _Draft) -> Transition | None:
    named = _named_entities(rest, draft.entities)
    refs = draft.own_refs(tool)
    if named:
        entity = named[0]
        if any(ref == entity for ref in refs.values()):
            return None  # it names an existing record of its own entity: not a creation
        return Transition(kind="create", entity=entity, evidence=[
            f"verb {verb!r} makes a new record; the name says {entity}"])
    words = _noun_words(rest)[-2:]
    name = entity_name("_".join(words)) if words else ""
    if (not name or not ENTITY_NAME_RE.match(name) or not all(w.isalpha() for w in words)
            or len(words[-1]) < 3):
        return None
    if not tool.parameter_properties():
        return None
    return Transition(kind="create", entity=name, evidence=[
        (f"verb {verb!r} makes a new record; the name says {name}, which the spec has no entity for, "
        "so the entity is made from the tool's parameters")])


def _apply(tool: ToolSpec, transition: Transition, draft: _Draft) -> ToolSpec:
    """The tool rewritten to the effect its transition has, its entity gaining the fields it writes."""
    if transition.kind == "none" or (transition.kind == "query" and tool.effect not in (None, Effect.ACTION)):
        return tool.model_copy(update={"transition": transition})
    if transition.kind == "query":
        return tool.model_copy(update={"effect": Effect.QUERY, "entity": None, "transition": transition})
    entity = draft.entities.get(transition.entity or "")
    made = entity is None
    if made:
        if transition.kind != "create" or not ENTITY_NAME_RE.match(transition.entity or ""):
            return tool
        entity = EntitySpec(name=transition.entity, id_prefix=snake_name(transition.entity)[:16], fields=[],
                            description=f"{transition.entity} records made by {tool.name}.")
    parameters = tool.parameters
    if transition.key is not None:
        props = dict(tool.parameter_properties())
        schema = props.get(transition.key)
        if not isinstance(schema, dict):
            return tool
        props[transition.key] = reference_schema(schema, entity_ref(draft.service_id, entity.name))
        parameters = {**tool.parameters, "properties": props}
    written = {name: schema for name, schema in sorted(tool.parameter_properties().items())
               if name != transition.key}
    new_entity = not entity.fields and transition.kind == "create"
    entity.fields.extend(parameter_fields(entity, written, set(tool.required_parameters()) if new_entity else set()))
    if made:
        if not entity.fields:
            return tool  # none of its parameters is a field: a record of nothing, so the tool stays an action
        draft.entities[entity.name] = entity
    sets: dict[str, Any] = dict(tool.sets)
    if transition.kind == "status":
        if entity.field(transition.field or "") is None:
            entity.fields.append(FieldSpec(name=transition.field or "status", json_type="string", required=False,
                                           description="Status, as the service's tools set it."))
        sets[transition.field or "status"] = transition.value
    effect = Effect.CREATE if transition.kind == "create" else Effect.UPDATE
    return tool.model_copy(update={"effect": effect, "entity": entity.name, "parameters": parameters,
                                   "sets": sets, "transition": transition})


def parameter_fields(entity: EntitySpec, written: dict[str, Any], required_names: set[str]) -> list[FieldSpec]:
    """Fields for the written parameters the entity lacks, typed from the parameter's schema.

    Only a new entity's fields can be required (an existing entity's other tools do not pass them);
    names that are not identifiers and HTTP transport options (``api-version``, ``fields``) are not
    fields of a record.
    """
    fields = []
    for name, schema in written.items():
        if (entity.field(name) is not None or name == "id" or not isinstance(schema, dict)
                or not _FIELD_NAME.fullmatch(name) or snake_name(name) in TRANSPORT_PARAMETERS):
            continue
        json_type = declared_json_type(schema) or "string"
        if json_type not in ("string", "integer", "number", "boolean", "array", "object"):
            continue
        shared = schema.get(TYPE_KEY)
        fields.append(FieldSpec(
            name=name,
            json_type=json_type,
            type=shared if isinstance(shared, str) and is_known_type(shared) else None,
            description=str(schema.get("description") or "")[:500],
            required=name in required_names,
            enum=list(schema["enum"]) if isinstance(schema.get("enum"), list) and json_type != "array" else None,
            items=dict(schema["items"]) if json_type == "array" and isinstance(schema.get("items"), dict) else None,
        ))
    return fields


def ready_statuses(spec: ServiceSpec) -> dict[str, list[tuple[str, Any]]]:
    """Per entity, (field, value) pairs, one per distinct precondition on its records, that satisfy it.

    The first seed rows take these values, so every tool with a precondition has a record it may
    act on; the later rows keep random values, so a refused record is likely there too. One pass over the
    spec's tools for all its entities (a seeder asks about every entity of every service it seeds).
    """
    by_entity: dict[str, list[tuple[str, Any]]] = {}
    for tool in sorted(spec.tools, key=lambda t: t.name):
        transition = tool.transition
        if tool.entity is None or transition is None or not transition.field:
            continue
        field = spec.entity(tool.entity).field(transition.field)
        options = list(transition.allowed_from or (field.enum if field is not None and field.enum else []))
        value = next((o for o in options if transition.refuses({transition.field: o}) is None), None)
        if value is None and transition.allowed_from is None:
            value = f"not_{transition.value}"  # a free-text status: anything but the target
        pairs = by_entity.setdefault(tool.entity, [])
        if value is not None and (transition.field, value) not in pairs:
            pairs.append((transition.field, value))
    return by_entity
