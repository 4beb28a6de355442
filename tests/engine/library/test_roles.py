"""People's roles in the seeded world, inferred from field names, entities and descriptions, with evidence."""

from __future__ import annotations

import pytest

from compoworld_assets.engine.library import builtin_spec
from compoworld_assets.engine.library.population import Population
from compoworld_assets.engine.library.roles import compatible, parameter_role, role_of
from compoworld_assets.engine.library.seeding import seed_world


@pytest.mark.parametrize(("field", "entity", "description", "role"), [
    ("payer_email", "Invoice", "", "customer"),
    ("employee_email", "Payslip", "", "employee"),
    ("owner_email", "Deal", "", "employee"),
    ("email", "Candidate", "", "candidate"),
    ("contact_email", "Vendor", "", "vendor"),
    ("email", "Employee", "", "employee"),
    ("to", "Message", "", None),
    ("recipient_email", "Shipment", "", None),
    ("email", "Attendee", "", None),
    ("notify", None, "Email of the customer to notify.", "customer"),
    ("contactEmail", None, "", None),
])
def test_roles_come_from_words_entities_and_descriptions(field, entity, description, role):
    found = role_of(field, entity, description)
    assert (found.role if found else None) == role
    if found:
        assert field in found.evidence


def test_roles_are_compatible_only_when_equal_or_one_is_anyone():
    customer, employee = role_of("payer_email"), role_of("employee_email")
    assert not compatible(customer, employee) and compatible(customer, customer)
    assert compatible(None, employee) and compatible(customer, None)


def test_each_pool_of_the_world_is_seeded_where_its_role_is():
    population = Population.generate(4)
    world = seed_world([builtin_spec("recruiting"), builtin_spec("procurement"), builtin_spec("payroll")], 4,
                       population=population)
    tables = {sid: state.tables for sid, state in world.services.items()}
    assert {r["email"] for r in tables["recruiting"]["Candidate"].values()} <= {p.email for p in population.candidates}
    assert {r["contact_email"] for r in tables["procurement"]["Vendor"].values()} <= \
        {p.email for p in population.vendors}
    assert {r["employee_email"] for r in tables["payroll"]["Payslip"].values()} <= {p.email for p in population.staff}
    assert {p.role for p in population.everyone()} == {"employee", "customer", "vendor", "candidate"}


def test_parameter_roles_read_the_tool_entity():
    payroll = builtin_spec("payroll")
    assert parameter_role(payroll, payroll.tool("create_payslip"), "employee_email").role == "employee"


def test_a_lookup_wants_the_pool_its_seeded_records_hold_but_not_in_the_spec_own_data():
    """``mail.list_messages(to=…)`` finds customers (the seeder's pool for a role-less ``to``); a service
    started from its own records holds whoever they name, so the filter takes its words' role (anyone)."""
    from compoworld_assets.engine.library.seeding import wanted_role

    mail = builtin_spec("mail")
    listing = mail.tool("list_messages")
    assert parameter_role(mail, listing, "to") is None
    assert wanted_role(mail, listing, "to").role == "customer"
    assert wanted_role(mail, listing, "sender").role == "employee"
    assert wanted_role(mail, mail.tool("send_email"), "to") is None  # a new message goes to anyone
    given = mail.model_copy(update={"seed_records": {"Message": {}}})
    assert wanted_role(given, listing, "to") is None
