"""Shared-type and entity-reference inference."""

from __future__ import annotations

import pytest

from compoworld_assets.engine.specs.infer import (
    annotate_schema,
    entity_name,
    infer_entity_ref,
    infer_shared_type,
    singular,
    snake_name,
)
from compoworld_assets.engine.types import TYPE_KEY


@pytest.mark.parametrize(
    ("name", "schema", "expected"),
    [
        ("email", {"type": "string"}, "email"),
        ("billing_email", {"type": "string"}, "email"),
        ("notificationEmailAddress", {"type": "string"}, "email"),
        ("contact", {"type": "string", "format": "email"}, "email"),
        ("phone_number", {"type": "string"}, "phone"),
        ("start_date", {"type": "string"}, "date"),
        ("created_at", {"type": "string"}, "datetime"),
        ("whenever", {"type": "string", "format": "date-time"}, "datetime"),
        ("homepage", {"type": "string"}, "url"),
        ("country_code", {"type": "string"}, "country"),
        ("shippingAddress", {"type": "string"}, "address"),
        ("price", {"type": "number"}, "money"),
        ("givenName", {"type": "string"}, "person_name"),
        ("surname", {"type": "string"}, "person_name"),
        ("contact_family_name", {"type": "string"}, "person_name"),
    ],
)
def test_clear_evidence_gives_a_type(name, schema, expected):
    assert infer_shared_type(name, schema) == expected


@pytest.mark.parametrize(
    ("name", "schema"),
    [
        ("to", {"type": "string"}),  # ambiguous without mail context
        ("email", {"type": "integer"}),  # JSON type disagrees
        ("email", {"type": "string", "example": "not-an-address"}),  # example contradicts
        ("customer_email_id", {"type": "string"}),  # ids are not shared values
        ("ipAddress", {"type": "string"}),  # not a postal address
        ("fuelAmount", {"type": "number", "description": "The amount of fuel in gallons"}),
        ("expiration_date", {"type": "string", "description": "Expiry in the format MM/YYYY"}),
        ("timestamp", {"type": "string", "description": "formatted as 'YYYY-MM-DD HH:MM:SS'"}),
        ("organization", {"type": "string", "description": "Organization id to filter by"}),
        ("currency", {"type": "string", "enum": ["USD", "EUR"]}),
        ("status", {"type": "string"}),
    ],
)
def test_weak_or_contradicted_evidence_gives_no_type(name, schema):
    assert infer_shared_type(name, schema) is None


def test_ambiguous_name_needs_context_or_description():
    assert infer_shared_type("to", {"type": "string"}, context_words={"send", "mail"}) == "email"
    assert infer_shared_type("to", {"type": "string", "description": "Recipient e-mail"}) == "email"
    assert infer_shared_type("amount", {"type": "number"}, context_words={"payment"}) == "money"
    assert infer_shared_type("amount", {"type": "number"}) is None


def test_entity_reference_needs_the_entity_and_a_string_id():
    entities = {"Contact", "CreditCard"}
    assert infer_entity_ref("contact_id", {"type": "string"}, "crm", entities) == "crm.Contact.id"
    assert infer_entity_ref("creditCardId", {"type": "string"}, "crm", entities) == "crm.CreditCard.id"
    assert infer_entity_ref("deal_id", {"type": "string"}, "crm", entities) is None
    assert infer_entity_ref("contact_id", {"type": "integer"}, "crm", entities) is None


def test_annotate_schema_types_nested_properties_and_keeps_existing_types():
    schema = {
        "type": "object",
        "properties": {
            "owner_email": {"type": "string"},
            "contact_id": {"type": "string"},
            "kept": {"type": "string", TYPE_KEY: "url"},
            "items": {
                "type": "array",
                "items": {"type": "object", "properties": {"price": {"type": "number"}}},
            },
        },
    }
    out = annotate_schema(schema, "crm", {"Contact"})
    props = out["properties"]
    assert props["owner_email"][TYPE_KEY] == "email"
    assert props["contact_id"][TYPE_KEY] == "crm.Contact.id"
    assert props["kept"][TYPE_KEY] == "url"
    assert props["items"]["items"]["properties"]["price"][TYPE_KEY] == "money"
    assert TYPE_KEY not in schema["properties"]["owner_email"]


def test_name_helpers():
    assert snake_name("fanSpeed") == "fan_speed"
    assert snake_name("{petId}") == "pet_id"
    assert (
        singular("companies") == "company" and singular("boxes") == "box" and singular("status") == "status"
    )
    assert entity_name("credit_cards") == "CreditCard"
