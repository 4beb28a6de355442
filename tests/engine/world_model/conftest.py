"""A small help-desk service whose action tools are left to the world model."""

from __future__ import annotations

import pytest

from compoworld_assets.engine.runtime.state import ServiceState
from compoworld_assets.engine.specs.model import (
    Effect,
    EntitySpec,
    FieldSpec,
    ServiceSpec,
    SourceRef,
    ToolSpec,
)

TICKET_REF = {"type": "string", "x-cw-type": "helpdesk.Ticket.id"}
AGENT_REF = {"type": "string", "x-cw-type": "helpdesk.Agent.id"}
EMAIL = {"type": "string", "x-cw-type": "email"}


def helpdesk_spec() -> ServiceSpec:
    ticket = EntitySpec(
        name="Ticket",
        id_prefix="tick",
        fields=[
            FieldSpec(name="subject", json_type="string"),
            FieldSpec(name="requester_email", json_type="string", type="email"),
            FieldSpec(name="status", json_type="string", enum=["open", "closed"]),
            FieldSpec(name="assignee_id", json_type="string", type="helpdesk.Agent.id", required=False),
        ],
    )
    agent = EntitySpec(
        name="Agent",
        id_prefix="agent",
        fields=[
            FieldSpec(name="full_name", json_type="string", type="person_name"),
            FieldSpec(name="email", json_type="string", type="email"),
        ],
    )
    tools = [
        ToolSpec(
            name="create_ticket",
            description="Open a ticket.",
            effect=Effect.CREATE,
            entity="Ticket",
            parameters={
                "type": "object",
                "properties": {"subject": {"type": "string"}, "requester_email": EMAIL},
                "required": ["subject", "requester_email"],
            },
            returns=ticket.record_schema("helpdesk"),
        ),
        ToolSpec(
            name="summarize_ticket",
            description="Summarise a ticket's conversation.",
            effect=Effect.ACTION,
            parameters={"type": "object", "properties": {"ticket_id": TICKET_REF}, "required": ["ticket_id"]},
            returns={
                "type": "object",
                "properties": {
                    "ticket_id": TICKET_REF,
                    "summary": {"type": "string"},
                    "requester_email": EMAIL,
                },
                "required": ["ticket_id", "summary", "requester_email"],
            },
        ),
        ToolSpec(
            name="suggest_agent",
            description="Suggest the best agent for a topic.",
            effect=Effect.ACTION,
            parameters={
                "type": "object",
                "properties": {"topic": {"type": "string", "minLength": 1}},
                "required": ["topic"],
            },
            returns={
                "type": "object",
                "properties": {
                    "agent_id": AGENT_REF,
                    "agent_email": EMAIL,
                    "confidence": {"type": "number", "minimum": 0, "maximum": 1},
                },
                "required": ["agent_id", "agent_email", "confidence"],
            },
        ),
        ToolSpec(
            name="triage_queue",
            description="The tickets that need attention.",
            effect=Effect.ACTION,
            returns={"type": "array", "items": ticket.record_schema("helpdesk")},
        ),
        ToolSpec(
            name="send_reply",
            description="Email the requester.",
            effect=Effect.ACTION,
            parameters={
                "type": "object",
                "properties": {"to": EMAIL, "body": {"type": "string"}},
                "required": ["to", "body"],
            },
            returns={
                "type": "object",
                "properties": {
                    "message_id": {"type": "string"},
                    "to": EMAIL,
                    "sent_at": {"type": "string", "x-cw-type": "datetime", "format": "date-time"},
                },
                "required": ["message_id", "to", "sent_at"],
            },
        ),
        ToolSpec(
            name="find_agent",
            description="Find the agent with an email address.",
            effect=Effect.ACTION,
            parameters={"type": "object", "properties": {"email": EMAIL}, "required": ["email"]},
            returns=agent.record_schema("helpdesk"),
        ),
        ToolSpec(
            name="count_open",
            description="How many tickets are open.",
            effect=Effect.ACTION,
            returns={"type": "integer", "minimum": 0},
        ),
    ]
    return ServiceSpec(
        id="helpdesk",
        name="Helpdesk",
        domain="it",
        description="Support tickets.",
        source=SourceRef(kind="builtin", location="tests"),
        entities=[ticket, agent],
        tools=tools,
    )


def helpdesk_state() -> ServiceState:
    return ServiceState(
        service_id="helpdesk",
        counters={"Ticket": 2, "Agent": 1},
        tables={
            "Ticket": {
                "tick_0001": {
                    "id": "tick_0001",
                    "subject": "VPN is down",
                    "requester_email": "ada.berg@globex.example.com",
                    "status": "open",
                    "assignee_id": "agent_0001",
                },
                "tick_0002": {
                    "id": "tick_0002",
                    "subject": "New laptop",
                    "requester_email": "omar.ito@hooli.example.com",
                    "status": "closed",
                    "assignee_id": None,
                },
            },
            "Agent": {
                "agent_0001": {
                    "id": "agent_0001",
                    "full_name": "Mei Sato",
                    "email": "mei.sato@initech.example.com",
                }
            },
        },
    )


@pytest.fixture
def spec() -> ServiceSpec:
    return helpdesk_spec()


@pytest.fixture
def state() -> ServiceState:
    return helpdesk_state()
