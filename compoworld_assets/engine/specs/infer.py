"""Shared-type and entity-reference inference for imported parameters and fields.

The rule is conservative: a wrong type wires services together that should not connect,
while a missing type only loses a connection, so a type is assigned only on evidence.

Evidence, strongest first:

1. JSON-schema ``format`` naming a shared type's format (``email``, ``date-time``, ``uri``...).
2. The name: the whole snake-cased name equals a hint from :attr:`SharedType.name_hints`,
   ends in ``_<hint>`` (``billing_email``, ``start_date``), ends in a suffix hint (``created_at``),
   or ends in ``<hint>_<tail>`` with a tail that keeps the type (``notification_email_address``,
   ``phone_number``, ``date_of_birth``: :data:`TYPE_TAILS`). ``ip_address``-like names are not
   postal addresses. Ambiguous hints (:data:`AMBIGUOUS_HINTS`: ``to``, ``from``, ``time``,
   ``start``...) need corroboration: the description mentions the type, an example value
   matches it, or the tool's context words say so (``to`` is an email only in a mail-ish tool;
   ``amount`` is money only in a payment/order/banking context or when the description says so).

A candidate is always rejected when the JSON type differs from the shared type's, when the
schema has an ``enum``, when the name is an id (``*_id``) or the description calls it an
identifier (``organization id``), or when any example/default value
does not match the type (:func:`value_matches_type`), and a date/datetime is rejected when
its description spells a non-ISO format (``MM/YYYY``, ``YYYY-MM-DD HH:MM:SS``).

Entity references: a parameter ``<entity>_id`` (or ``<entity>Id``) of string type, where the
service has that entity, is typed ``svc.Entity.id``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

from compoworld_assets.engine.types import (
    SHARED_TYPES,
    TYPE_KEY,
    entity_ref,
    is_entity_ref,
    value_matches_type,
)

AMBIGUOUS_HINTS = frozenset(
    {
        "to",
        "from",
        "cc",
        "bcc",
        "recipient",
        "sender",
        "time",
        "start",
        "end",
        "day",
        "due",
        "_on",
        "origin",
        "destination",
        "total",
        "tax",
        "path",
        "folder",
        "directory",
        "link",
        "tel",
        "fee",
        "amount",
        "balance",
        "budget",
        "account_name",
    }
)

TYPE_TAILS: dict[str, tuple[str, ...]] = {
    "email": ("address",),
    "phone": ("number",),
    "country": ("code", "name"),
    "currency": ("code",),
    "city": ("name",),
    "date": ("of_birth",),
    "url": ("string",),
}

NON_POSTAL_ADDRESS_WORDS = frozenset(
    {
        "ip",
        "ipv4",
        "ipv6",
        "mac",
        "web",
        "wallet",
        "email",
        "mail",
        "server",
        "host",
        "network",
        "bitcoin",
        "contract",
        "memory",
        "subnet",
        "gateway",
        "remote",
        "local",
        "public",
        "private",
        "source",
        "sender",
        "recipient",
        "from",
        "to",
        "return",
        "node",
        "peer",
        "proxy",
        "endpoint",
        "socket",
        "bind",
        "broadcast",
    }
)

_IDENTIFIER_WORDS = re.compile(r"\b(id|ids|identifier|uuid|guid)\b", re.IGNORECASE)

DESCRIPTION_WORDS: dict[str, tuple[str, ...]] = {
    "email": ("email", "e-mail"),
    "phone": ("phone", "telephone"),
    "person_name": ("person", "full name", "first name", "last name"),
    "company_name": ("company", "organization", "organisation"),
    "date": ("date", "yyyy-mm-dd"),
    "datetime": ("timestamp", "date-time", "datetime", "iso 8601", "iso-8601"),
    "money": ("price", "cost", "amount of money", "currency", "usd", "dollar", "euro", "fee", "tax"),
    "currency": ("currency", "iso 4217"),
    "url": ("url", "uri", "link", "http"),
    "address": ("address",),
    "city": ("city", "town"),
    "country": ("country",),
    "file_path": ("file", "directory", "folder"),
}

CONTEXT_WORDS: dict[str, tuple[str, ...]] = {
    "email": ("mail", "email", "inbox"),
    "company_name": ("crm", "sales", "lead", "leads", "deal", "deals", "opportunity", "opportunities"),
    "city": ("flight", "travel", "trip", "route", "ride", "weather"),
    "file_path": ("file", "filesystem", "directory", "folder"),
    "datetime": ("calendar", "event", "meeting", "schedule"),
    "money": (
        "payment",
        "payments",
        "invoice",
        "invoices",
        "billing",
        "bank",
        "banking",
        "fund",
        "funds",
        "price",
        "trading",
        "refund",
        "withdraw",
        "deposit",
        "order",
        "orders",
        "purchase",
        "checkout",
    ),
}

_FORMAT_SPEC = re.compile(
    r"\b(?:[ymdh]{2,4}(?:[/\-. :t][ymdhs]{2,4})+|yyyymmdd|ddmmyyyy|mmddyyyy|yyyymm|yymmdd)\b", re.IGNORECASE
)
_ISO_SPECS = {"date": ("yyyy-mm-dd",), "datetime": ("yyyy-mm-ddthh",)}

_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_NON_WORD = re.compile(r"[^A-Za-z0-9]+")


@lru_cache(maxsize=65536)
def snake_name(name: str) -> str:
    """``fanSpeed`` → ``fan_speed``; ``Due-Date`` → ``due_date``; ``{petId}`` → ``pet_id``."""
    spaced = _CAMEL_BOUNDARY.sub("_", name)
    return _NON_WORD.sub("_", spaced).strip("_").lower()


@lru_cache(maxsize=65536)
def _hints_by_type(snake: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """(type name, matching hints) for every shared type whose hints match the name (cached: names repeat)."""
    found = []
    for shared in SHARED_TYPES.values():
        hints = tuple(h for h in shared.name_hints if _name_matches_hint(snake, h, shared.name))
        if hints:
            found.append((shared.name, hints))
    return tuple(found)


def _name_matches_hint(snake: str, hint: str, type_name: str) -> bool:
    if hint.startswith("_"):
        return snake.endswith(hint) and len(snake) > len(hint)
    forms = [hint, *(f"{hint}_{tail}" for tail in TYPE_TAILS.get(type_name, ()))]
    if not any(snake == form or snake.endswith("_" + form) for form in forms):
        return False
    if type_name == "address":
        words = snake.split("_")
        return len(words) < 2 or words[-2] not in NON_POSTAL_ADDRESS_WORDS
    return True


def _example_values(schema: Mapping[str, Any]) -> list[Any]:
    values = [schema[key] for key in ("example", "default") if schema.get(key) is not None]
    examples = schema.get("examples")
    if isinstance(examples, list):
        values.extend(v for v in examples if v is not None)
    return [v for v in values if v not in ("", "None")]


def declared_json_type(schema: Mapping[str, Any]) -> str | None:
    """The first non-null ``type`` a schema declares (None when it declares none)."""
    value = schema.get("type")
    if isinstance(value, list):
        value = next((t for t in value if t != "null"), None)
    return value if isinstance(value, str) else None


def _type_for_format(fmt: str, json_type: str | None) -> str | None:
    for shared in SHARED_TYPES.values():
        if fmt in shared.formats and json_type in (None, shared.json_type):
            return shared.name
    return None


def _contradicted_by_format(type_name: str, description: str) -> bool:
    """A date/datetime whose description spells a non-ISO format (``MM/YYYY``) is not that type."""
    allowed = _ISO_SPECS.get(type_name)
    if allowed is None:
        return False
    specs = [m.group(0).lower() for m in _FORMAT_SPEC.finditer(description)]
    return any(not spec.startswith(allowed) for spec in specs)


def _corroborated(type_name: str, description: str, examples: list[Any], context: frozenset[str]) -> bool:
    text = description.lower()
    if any(word in text for word in DESCRIPTION_WORDS.get(type_name, ())):
        return True
    if examples and SHARED_TYPES[type_name].pattern is not None:
        return True
    return any(word in context for word in CONTEXT_WORDS.get(type_name, ()))


def infer_shared_type(
    name: str,
    schema: Mapping[str, Any],
    *,
    description: str = "",
    context_words: Iterable[str] = (),
) -> str | None:
    """The shared type of a parameter or field, or None when the evidence is not enough.

    ``context_words`` are lower-case words from the tool and service names/descriptions;
    they corroborate ambiguous names (``to`` in ``send_mail``).
    """
    if not isinstance(schema, Mapping) or schema.get("enum"):
        return None
    json_type = declared_json_type(schema)
    examples = _example_values(schema)
    description = description or str(schema.get("description") or "")
    fmt = schema.get("format")
    if isinstance(fmt, str):
        by_format = _type_for_format(fmt, json_type)
        if by_format and all(value_matches_type(by_format, v) for v in examples):
            return by_format
    snake = snake_name(name)
    if not snake or snake == "id" or snake.endswith(("_id", "_ids")) or _IDENTIFIER_WORDS.search(description):
        return None
    context = frozenset(context_words)
    for type_name, hints in _hints_by_type(snake):
        if json_type != SHARED_TYPES[type_name].json_type:
            continue
        if all(h in AMBIGUOUS_HINTS for h in hints) and not _corroborated(
            type_name, description, examples, context
        ):
            continue
        if _contradicted_by_format(type_name, f"{description} {fmt if isinstance(fmt, str) else ''}"):
            continue
        if all(value_matches_type(type_name, v) for v in examples):
            return type_name
    return None


def singular(word: str) -> str:
    """A naive English singular, good enough for resource nouns (``companies`` → ``company``)."""
    if len(word) <= 3 or word.endswith(("ss", "us", "is", "data", "info", "status", "news")):
        return word
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("sses", "xes", "ches", "shes", "zes")):
        return word[:-2]
    if word.endswith("s"):
        return word[:-1]
    return word


def is_plural(word: str) -> bool:
    return singular(word) != word


def entity_name(noun: str) -> str:
    """CamelCase singular entity name for a snake/camel noun: ``credit_cards`` → ``CreditCard``."""
    words = snake_name(noun).split("_")
    if not words or not words[0]:
        return ""
    words[-1] = singular(words[-1])
    name = "".join(w[:1].upper() + w[1:] for w in words if w)
    return name if name[:1].isalpha() else ""


def infer_entity_ref(
    name: str, schema: Mapping[str, Any], service_id: str, entities: Iterable[str]
) -> str | None:
    """``svc.Entity.id`` for a string parameter named ``<entity>_id`` when the service has it."""
    if not isinstance(schema, Mapping) or declared_json_type(schema) not in (None, "string"):
        return None
    snake = snake_name(name)
    if not snake.endswith("_id"):
        return None
    candidate = entity_name(snake[: -len("_id")])
    return entity_ref(service_id, candidate) if candidate in set(entities) else None


# What an API says about the form of its own identifiers; records get the service's ids (``order_0003``).
ID_FORM_KEYWORDS = frozenset({"format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
                              "pattern", "minLength", "maxLength", "enum", "const", "anyOf", "oneOf", "example",
                              "examples", "default"})


def reference_schema(schema: Mapping[str, Any], ref: str) -> dict[str, Any]:
    """``schema`` as a reference ``ref`` (``svc.Entity.id``) to a record: a string that keeps none of the
    API's id form (a 34-character length, an ``^m-[0-9a-f]{32}$`` pattern), which no record's id has."""
    kept = {k: v for k, v in schema.items() if k not in ID_FORM_KEYWORDS}
    return {**kept, "type": "string", TYPE_KEY: ref}


def annotate_schema(
    schema: Any,
    service_id: str,
    entities: Iterable[str],
    context_words: Iterable[str] = (),
    depth: int = 0,
    max_depth: int = 3,
) -> Any:
    """A copy of an object schema whose properties carry inferred ``x-cw-type`` keywords.

    Walks nested objects and array items up to ``max_depth``; existing types are kept.
    """
    if not isinstance(schema, dict) or depth > max_depth:
        return schema
    entity_names = frozenset(entities)
    context = frozenset(context_words)
    out = dict(schema)
    if isinstance(schema.get("items"), dict):
        out["items"] = annotate_schema(
            schema["items"], service_id, entity_names, context, depth + 1, max_depth
        )
    props = schema.get("properties")
    if isinstance(props, dict):
        new_props: dict[str, Any] = {}
        for pname, pschema in props.items():
            if not isinstance(pschema, dict):
                new_props[pname] = pschema
                continue
            annotated = annotate_schema(pschema, service_id, entity_names, context, depth + 1, max_depth)
            if not annotated.get(TYPE_KEY):
                inferred = infer_entity_ref(pname, pschema, service_id, entity_names) or infer_shared_type(
                    pname, pschema, context_words=context
                )
                if inferred and is_entity_ref(inferred):
                    annotated = reference_schema(annotated, inferred)
                elif inferred:
                    annotated = {**annotated, TYPE_KEY: inferred}
            new_props[pname] = annotated
        out["properties"] = new_props
    return out


def context_words(*texts: str) -> frozenset[str]:
    """Lower-case words of names and descriptions, used to corroborate ambiguous hints."""
    words: set[str] = set()
    for text in texts:
        words.update(w for w in snake_name(text or "").split("_") if w)
    return frozenset(words)
