"""The registry of shared interface types.

A parameter or entity field that carries a shared type (``email``, ``money``...) or an
entity reference (``crm.Contact.id``) can receive values produced by any tool of any
service that outputs the same type: this is what lets services connect into tasks.
In JSON schemas the type travels in the ``x-cw-type`` extension keyword.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

TYPE_KEY = "x-cw-type"

_REF_RE = re.compile(r"^(?P<service>[a-z][a-z0-9_]*)\.(?P<entity>[A-Z][A-Za-z0-9]*)\.id$")


@dataclass(frozen=True)
class SharedType:
    """One shared interface type: its JSON shape and how to recognise its values."""

    name: str
    json_type: str
    description: str
    formats: tuple[str, ...] = ()
    pattern: str | None = None
    name_hints: tuple[str, ...] = field(default_factory=tuple)

    def matches_value(self, value: Any) -> bool:
        if self.json_type == "string":
            if not isinstance(value, str):
                return False
            return self.pattern is None or re.fullmatch(self.pattern, value) is not None
        if self.json_type == "number":
            return isinstance(value, (int, float)) and not isinstance(value, bool)
        return True

    def json_schema(self) -> dict[str, Any]:
        schema: dict[str, Any] = {"type": self.json_type, TYPE_KEY: self.name}
        if self.formats:
            schema["format"] = self.formats[0]
        return schema


def _is_date(value: str) -> bool:
    try:
        date.fromisoformat(value)
    except ValueError:
        return False
    return len(value) == 10


def _is_datetime(value: str) -> bool:
    try:
        datetime.fromisoformat(value)
    except ValueError:
        return False
    return "T" in value


SHARED_TYPES: dict[str, SharedType] = {
    t.name: t
    for t in [
        SharedType("email", "string", "An email address.", ("email", "idn-email"),
                   r"[^@\s]+@[^@\s]+\.[A-Za-z]{2,}", ("email", "e_mail", "recipient", "sender", "to", "from",
                                                         "cc", "bcc")),
        SharedType("phone", "string", "A phone number in E.164 or national format.", ("phone",),
                   r"\+?[0-9][0-9 ()\-.]{5,}", ("phone", "mobile", "telephone", "tel", "fax")),
        SharedType("person_name", "string", "A person's full name.", (), None,
                   ("full_name", "person_name", "contact_name", "customer_name", "employee_name",
                    "first_name", "last_name", "given_name", "family_name", "surname", "forename", "name_of",
                    "assignee_name", "author_name")),
        SharedType("company_name", "string", "An organisation's name.", (), None,
                   ("company", "company_name", "organization", "organisation", "vendor_name",
                    "account_name", "employer")),
        SharedType("date", "string", "A calendar date, ISO 8601 (YYYY-MM-DD).", ("date",),
                   r"\d{4}-\d{2}-\d{2}", ("date", "_on", "birthday", "due", "deadline", "day")),
        SharedType("datetime", "string", "A point in time, ISO 8601 with time.", ("date-time",),
                   r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})?",
                   ("datetime", "timestamp", "_at", "time", "start", "end")),
        SharedType("money", "number", "An amount of money in the currency given beside it.", (), None,
                   ("amount", "price", "cost", "total", "balance", "salary", "fee", "budget", "subtotal",
                    "tax", "refund")),
        SharedType("currency", "string", "An ISO 4217 currency code.", (), r"[A-Z]{3}",
                   ("currency", "currency_code")),
        SharedType("url", "string", "A URL.", ("uri", "url", "iri", "uri-reference"),
                   r"https?://\S+", ("url", "link", "website", "homepage", "href", "uri")),
        SharedType("address", "string", "A postal street address.", (), None,
                   ("address", "street", "shipping_address", "billing_address")),
        SharedType("city", "string", "A city name.", (), None, ("city", "town", "origin", "destination")),
        SharedType("country", "string", "A country, ISO 3166 alpha-2 code or name.", (), None,
                   ("country", "country_code", "nationality")),
        SharedType("file_path", "string", "A path to a file or folder.", (), r"/?[^\0]+",
                   ("path", "file_path", "filepath", "filename", "file_name", "folder", "directory")),
    ]
}


def is_entity_ref(type_name: str | None) -> bool:
    return bool(type_name) and _REF_RE.match(type_name) is not None


def entity_ref(service_id: str, entity: str) -> str:
    """The type name of an entity reference, e.g. ``entity_ref("crm", "Contact") == "crm.Contact.id"``."""
    ref = f"{service_id}.{entity}.id"
    if not _REF_RE.match(ref):
        raise ValueError(f"not a valid entity reference: {ref!r}")
    return ref


def parse_entity_ref(type_name: str) -> tuple[str, str]:
    match = _REF_RE.match(type_name)
    if match is None:
        raise ValueError(f"not an entity reference: {type_name!r}")
    return match["service"], match["entity"]


def is_known_type(type_name: str | None) -> bool:
    """A type is known when it is in the registry or is a well-formed entity reference."""
    return type_name in SHARED_TYPES or is_entity_ref(type_name)


def value_matches_type(type_name: str, value: Any) -> bool:
    """Whether ``value`` is a plausible value of ``type_name`` (entity ids: a non-empty string)."""
    if is_entity_ref(type_name):
        return isinstance(value, str) and bool(value)
    shared = SHARED_TYPES.get(type_name)
    if shared is None:
        return False
    if type_name == "date":
        return isinstance(value, str) and _is_date(value)
    if type_name == "datetime":
        return isinstance(value, str) and _is_datetime(value)
    return shared.matches_value(value)
