"""A small hand-written helpdesk spec, a seed state for it, an in-process executor and fixtures.

Shared by the synthesis and verification tests (their conftests import it); the executor runs
a module the way the sandbox does (exec the source, call ``handle``, keep a deep-copied state)
minus the isolation.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from compoworld_assets.engine import envelope
from compoworld_assets.engine.runtime.state import ServiceState
from compoworld_assets.engine.specs.model import EntitySpec, FieldSpec, ServiceSpec, SourceRef, ToolSpec
from compoworld_assets.engine.synthesis.base import SynthesizedModule
from compoworld_assets.engine.synthesis.offline import OfflineSynthesizer

REF_CUSTOMER = "helpdesk.Customer.id"
REF_TICKET = "helpdesk.Ticket.id"

CUSTOMER = EntitySpec(
    name="Customer",
    id_prefix="cus",
    description="A customer.",
    fields=[
        FieldSpec(name="name", json_type="string", type="person_name"),
        FieldSpec(name="email", json_type="string", type="email"),
        FieldSpec(name="tier", json_type="string", enum=["free", "pro"]),
        FieldSpec(name="active", json_type="boolean"),
        FieldSpec(name="visits", json_type="integer", required=False),
    ],
)
TICKET = EntitySpec(
    name="Ticket",
    id_prefix="tic",
    description="A support ticket.",
    fields=[
        FieldSpec(name="customer_id", json_type="string", type=REF_CUSTOMER),
        FieldSpec(name="subject", json_type="string"),
        FieldSpec(name="status", json_type="string", enum=["open", "closed"]),
        FieldSpec(name="priority", json_type="integer"),
        FieldSpec(name="due", json_type="string", type="date", required=False),
    ],
)


def _params(props: dict[str, Any], required: list[str], closed: bool = False) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": props, "required": required}
    if closed:
        schema["additionalProperties"] = False
    return schema


def _page(entity: EntitySpec) -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["items", "count"],
        "properties": {
            "items": {"type": "array", "items": entity.record_schema("helpdesk")},
            "count": {"type": "integer"},
        },
    }


def helpdesk_spec() -> ServiceSpec:
    customer_fields = {f.name: f.json_schema() for f in CUSTOMER.fields}
    customer_key = {"customer_id": {"type": "string", "x-cw-type": REF_CUSTOMER}}
    ticket_key = {"ticket_id": {"type": "string", "x-cw-type": REF_TICKET}}
    limit = {"limit": {"type": "integer", "minimum": 1}}
    customer = CUSTOMER.record_schema("helpdesk")
    ticket = TICKET.record_schema("helpdesk")
    tools = [
        ToolSpec(
            name="create_customer",
            description="Create a customer.",
            effect="create",
            entity="Customer",
            parameters=_params(customer_fields, ["name", "email", "tier"]),
            returns=customer,
        ),
        ToolSpec(
            name="get_customer",
            description="Get a customer.",
            effect="read",
            entity="Customer",
            parameters=_params(customer_key, ["customer_id"]),
            returns=customer,
        ),
        ToolSpec(
            name="list_customers",
            description="List customers.",
            effect="list",
            entity="Customer",
            parameters=_params(
                {"tier": customer_fields["tier"], "active": customer_fields["active"], **limit}, []
            ),
            returns=_page(CUSTOMER),
        ),
        ToolSpec(
            name="search_customers",
            description="Search customers.",
            effect="search",
            entity="Customer",
            parameters=_params({"query": {"type": "string"}, **limit}, ["query"]),
            returns=_page(CUSTOMER),
        ),
        ToolSpec(
            name="update_customer",
            description="Update a customer.",
            effect="update",
            entity="Customer",
            parameters=_params(
                {
                    **customer_key,
                    "email": customer_fields["email"],
                    "tier": customer_fields["tier"],
                    "visits": customer_fields["visits"],
                },
                ["customer_id"],
            ),
            returns=customer,
        ),
        ToolSpec(
            name="delete_customer",
            description="Delete a customer.",
            effect="delete",
            entity="Customer",
            parameters=_params(customer_key, ["customer_id"]),
            returns={
                "type": "object",
                "properties": {"deleted": {"type": "string"}},
                "required": ["deleted"],
            },
        ),
        ToolSpec(
            name="open_ticket",
            description="Open a ticket for a customer.",
            effect="create",
            entity="Ticket",
            parameters=_params(
                {
                    "customer_id": {"type": "string", "x-cw-type": REF_CUSTOMER},
                    "subject": {"type": "string"},
                    "priority": {"type": "integer"},
                    "due": {"type": "string", "x-cw-type": "date"},
                },
                ["customer_id", "subject", "priority"],
                closed=True,
            ),
            sets={"status": "open"},
            returns=ticket,
        ),
        ToolSpec(
            name="get_ticket",
            description="Get a ticket.",
            effect="read",
            entity="Ticket",
            parameters=_params(ticket_key, ["ticket_id"]),
            returns=ticket,
        ),
        ToolSpec(
            name="close_ticket",
            description="Close a ticket.",
            effect="update",
            entity="Ticket",
            parameters=_params(ticket_key, ["ticket_id"]),
            sets={"status": "closed"},
            returns=ticket,
        ),
        ToolSpec(
            name="escalate_ticket",
            description="Escalate a ticket to a human.",
            effect="action",
            parameters=_params(ticket_key, ["ticket_id"]),
            returns={"type": "object", "properties": {"escalated": {"type": "boolean"}}},
        ),
    ]
    return ServiceSpec(
        id="helpdesk",
        name="Helpdesk",
        domain="support",
        description="Customers and tickets.",
        source=SourceRef(kind="builtin", location="tests"),
        entities=[CUSTOMER, TICKET],
        tools=tools,
    )


def helpdesk_seed_state() -> ServiceState:
    customers = {
        "cus_0001": {
            "id": "cus_0001",
            "name": "Ada Berg",
            "email": "ada@acme.example.com",
            "tier": "pro",
            "active": True,
            "visits": 3,
        },
        "cus_0002": {
            "id": "cus_0002",
            "name": "Omar Ito",
            "email": "omar@globex.example.com",
            "tier": "free",
            "active": False,
            "visits": None,
        },
    }
    tickets = {
        "tic_0001": {
            "id": "tic_0001",
            "customer_id": "cus_0001",
            "subject": "Login fails",
            "status": "open",
            "priority": 2,
            "due": "2026-02-01",
        },
    }
    return ServiceState(
        service_id="helpdesk",
        tables={"Customer": customers, "Ticket": tickets},
        counters={"Customer": 2, "Ticket": 1},
    )


class InProcessExecutor:
    """Runs a module in this process: same contract as the sandbox, no isolation, for fast tests."""

    def __init__(self, module_source: str) -> None:
        namespace: dict[str, Any] = {}
        exec(compile(module_source, "<synthesized>", "exec"), namespace)  # noqa: S102 - hosting it is the point
        self._handle = namespace["handle"]
        self._state: dict[str, Any] = {}
        self._installed: dict[str, Any] = {}

    def reset(self, state: ServiceState) -> None:
        self._installed = state.model_dump(mode="json")
        self.restore()

    def restore(self) -> None:
        self._state = copy.deepcopy(self._installed)

    @property
    def changed(self) -> bool:
        return self._state != self._installed

    def call(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        try:
            result = self._handle(self._state, tool, copy.deepcopy(args))
        except Exception as exc:  # noqa: BLE001 - every tool failure becomes an envelope
            return envelope.error(envelope.INTERNAL_ERROR, f"{type(exc).__name__}: {exc}")
        if not envelope.is_envelope(result):
            return envelope.error(envelope.INTERNAL_ERROR, "tool returned a malformed envelope")
        return copy.deepcopy(result)

    def state(self) -> ServiceState:
        return ServiceState.model_validate(copy.deepcopy(self._state))

    def close(self) -> None:
        self._handle = None


@pytest.fixture
def helpdesk() -> ServiceSpec:
    return helpdesk_spec()


@pytest.fixture
def seed_state() -> ServiceState:
    return helpdesk_seed_state()


@pytest.fixture
def offline_module(helpdesk: ServiceSpec) -> SynthesizedModule:
    return OfflineSynthesizer().synthesize(helpdesk)
