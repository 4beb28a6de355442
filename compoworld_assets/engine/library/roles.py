"""Whose a person field is: the roles people play in the seeded world, and the evidence for each.

The world's population has four pools (:class:`~compoworld_assets.engine.library.population.Population`):
employees of the home company, customers, vendors and candidates. A field that names a person
(``payer_email``, ``employee_email``, ``owner_email``) says which pool it draws from by its words;
a field without a role word (``email``, ``contact_email``) belongs to its record's kind of person
(a ``Candidate``'s email is a candidate's, a ``Vendor``'s contact a vendor's). Fields that name
nobody in particular (``to``, ``recipient_email``, ``shared_with``, an ``Attendee``'s email) have
no role and go with anyone: that is what lets a new record be announced to whoever it concerns.

The built-in library declares roles through these words in its field names; imported specs get
them inferred the same way from names, then from descriptions ("Email of the customer"), and each
inference carries its evidence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from compoworld_assets.engine.library.wording import words
from compoworld_assets.engine.specs.model import ServiceSpec, ToolSpec

ROLE_WORDS: dict[str, frozenset[str]] = {
    "employee": frozenset({"owner", "assignee", "assigned", "author", "organizer", "employee", "interviewer",
                           "hiring", "manager", "approver", "requester", "submitter", "created", "creator", "booked",
                           "head", "agent", "member", "traveller", "traveler", "staff", "reviewer"}),
    "customer": frozenset({"customer", "payer", "buyer", "client", "renter", "guest", "reader", "respondent",
                           "subscriber", "counterparty", "patient", "tenant", "shopper"}),
    "vendor": frozenset({"vendor", "supplier", "seller", "merchant", "contractor"}),
    "candidate": frozenset({"candidate", "applicant"}),
}
ENTITY_ROLE_WORDS: dict[str, frozenset[str]] = {
    "employee": frozenset({"employee", "user", "staff", "agent", "member", "payslip"}),
    "customer": frozenset({"contact", "customer", "client", "subscriber", "lead"}),
    "vendor": frozenset({"vendor", "supplier"}),
    "candidate": frozenset({"candidate", "applicant"}),
}
# Person words that name nobody in particular; in the graph they go with anyone.
GENERIC_WORDS = frozenset({"to", "cc", "bcc", "recipient", "sender", "shared", "attendee", "invitee", "signer"})


@dataclass(frozen=True)
class Role:
    role: str
    evidence: str

    def __str__(self) -> str:
        return f"{self.role} ({self.evidence})"


def role_of(field: str, entity: str | None = None, description: str = "") -> Role | None:
    """The role of person field ``field`` of records of ``entity``, with its evidence, or None."""
    names = words(field)
    for role, vocabulary in ROLE_WORDS.items():
        hit = next((w for w in names if w in vocabulary), None)
        if hit is not None:
            return Role(role, f"{field}: word {hit!r}")
    if set(names) & GENERIC_WORDS:
        return None
    if entity:
        for role, vocabulary in ENTITY_ROLE_WORDS.items():
            hit = next((w for w in words(entity) if w in vocabulary), None)
            if hit is not None:
                return Role(role, f"{field}: a {entity}'s")
    described = set(re.findall(r"[a-z]+", description.lower()))
    for role, vocabulary in ROLE_WORDS.items():
        hit = next((w for w in sorted(described & vocabulary)), None)
        if hit is not None:
            return Role(role, f"{field}: description word {hit!r}")
    return None


def compatible(source: Role | None, target: Role | None) -> bool:
    """Whether a value of a person in role ``source`` may fill a field for role ``target``."""
    return source is None or target is None or source.role == target.role



def output_role(spec: ServiceSpec, tool: ToolSpec, path: str) -> Role | None:
    """The role of the person an output path of ``tool`` names (``items[].payer_email`` → customer)."""
    name = re.sub(r"\[\d*\]", "", path).rsplit(".", 1)[-1]
    return _field_role(spec, tool, name, "")


def parameter_role(spec: ServiceSpec, tool: ToolSpec, parameter: str) -> Role | None:
    """The role of the person a parameter of ``tool`` takes (``employee_email`` → employee)."""
    schema = tool.parameter_properties().get(parameter)
    described = str(schema.get("description", "")) if isinstance(schema, dict) else ""
    return _field_role(spec, tool, parameter, described)


def _field_role(spec: ServiceSpec, tool: ToolSpec, name: str, description: str) -> Role | None:
    entity = next((e for e in spec.entities if e.name == tool.entity), None)
    field = entity.field(name) if entity is not None else None
    if field is not None:
        return role_of(name, entity.name, field.description or description)
    return role_of(name, None, description)
