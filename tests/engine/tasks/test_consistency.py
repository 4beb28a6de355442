"""The value-consistency validator: each rule with a failing and a passing case, and the drawn values pass."""

from __future__ import annotations

import random
from datetime import date

import pytest

from compoworld_assets.engine.library.builder import ServiceBuilder, field
from compoworld_assets.engine.library.population import Population
from compoworld_assets.engine.library.seeding import seed_world
from compoworld_assets.engine.specs.model import ServiceSpec
from compoworld_assets.engine.tasks.arguments import harmonize, step_values
from compoworld_assets.engine.tasks.consistency import RULES, check_task
from compoworld_assets.engine.tasks.model import ArgBinding, Plan, PlanStep, Task, ToolCallRecord

SEED = 5
TODAY = "2026-06-01"


def ledger_spec() -> ServiceSpec:
    b = ServiceBuilder("ledger", "Ledger", "finance", "Accounts and their slips.", "tests")
    b.entity("Account", "acc", "An account.", field("owner_email", "email"), field("currency", "currency"),
             field("amount", "money"))
    b.entity("Slip", "slip", "A pay slip.",
             field("account_id", "ledger.Account.id"),
             field("employee_email", "email"), field("employee_name", "person_name"),
             field("employee_first_name", "person_name"), field("employee_surname", "person_name"),
             field("birth_date", "date"), field("home_country", "country", enum=["pt", "br"]),
             field("period_start", "date"), field("period_end", "date"),
             field("gross", "money"), field("tax", "money"), field("net", "money"), field("amount", "money"),
             field("quantity", "integer"), field("unit_price", "money"), field("total", "money"),
             field("currency", "currency"), field("city", "city"), field("country", "country"),
             field("iban"), field("sku"), field("website", "url"), field("phone", "phone"))
    b.crud("Account", "CR")
    b.crud("Slip", "CU")
    return b.build()


SPEC = ledger_spec()
WORLD = seed_world([SPEC], SEED)
POPULATION = Population.generate(SEED)
ACCOUNT = WORLD.services["ledger"].tables["Account"]["acc_0002"]
PERSON = POPULATION.staff[0]

GOOD = {
    "account_id": "acc_0002", "employee_email": PERSON.email, "employee_name": PERSON.full_name,
    "employee_first_name": PERSON.first_name, "employee_surname": PERSON.last_name, "birth_date": "1984-03-09",
    "home_country": "pt",
    "period_start": "2026-05-01", "period_end": "2026-05-31", "gross": 5000.0, "tax": 1200.0, "net": 3800.0,
    "amount": min(ACCOUNT["amount"], 10.0), "quantity": 3, "unit_price": 12.5, "total": 37.5,
    "currency": ACCOUNT["currency"], "city": "Lisbon", "country": "PT", "iban": "DE89370400440532013000",
    "sku": "SKU-00042", "website": "https://acme.example.com/shop", "phone": "+1-555-201-3344",
}

BAD = {
    "schema": {"quantity": "three"},
    "empty": {"sku": ""},
    "format": {"iban": "Launch travel"},
    "near_today": {"birth_date": "2026-07-01"},
    "lookup": {"account_id": "acc_0999"},
    "person": {"employee_first_name": PERSON.full_name},
    "positive": {"quantity": 0, "total": 0.0},
    "interval": {"period_end": "2026-04-01"},
    "amounts": {"net": 6000.0},
    "place": {"country": "JP"},
    "parent": {"currency": "XXX" if ACCOUNT["currency"] != "XXX" else "YYY"},
}


def task_with(args: dict) -> tuple[Task, list[ToolCallRecord]]:
    bindings = {n: ArgBinding(kind="user_known" if n == "account_id" else "constant", value=v,
                              type="ledger.Account.id" if n == "account_id" else None) for n, v in args.items()}
    plan = Plan(steps=[PlanStep(index=0, service_id="ledger", tool="create_slip", args=bindings)])
    task = Task(task_id="t", seed=SEED, domain="finance", services=["ledger"], initial_state=WORLD,
                instruction="", plan=plan, rubric=[], today=TODAY)
    call = ToolCallRecord(service_id="ledger", tool="create_slip", arguments=args,
                          result={"success": True, "data": {"id": "slip_0009", **args}})
    return task, [call]


def rules_broken(args: dict) -> set[str]:
    task, calls = task_with(args)
    return {v.rule for v in check_task(task, {"ledger": SPEC}, calls)}


def test_the_good_values_break_no_rule():
    assert rules_broken(GOOD) == set()


def test_every_rule_has_a_failing_case():
    assert set(BAD) == set(RULES)


@pytest.mark.parametrize("rule", sorted(BAD))
def test_each_rule_catches_its_violation(rule):
    broken = rules_broken({**GOOD, **BAD[rule]})
    assert rule in broken, broken


def test_an_update_answers_only_for_the_fields_it_sets():
    seeded = dict(WORLD.services["ledger"].tables["Slip"]["slip_0001"], net=10**6)
    plan = Plan(steps=[PlanStep(index=0, service_id="ledger", tool="update_slip", args={
        "slip_id": ArgBinding(kind="user_known", value="slip_0001", type="ledger.Slip.id"),
        "sku": ArgBinding(kind="constant", value="SKU-00077")})])
    task = Task(task_id="t", seed=SEED, domain="finance", services=["ledger"], initial_state=WORLD,
                instruction="", plan=plan, rubric=[], today=TODAY)
    call = ToolCallRecord(service_id="ledger", tool="update_slip", arguments={"slip_id": "slip_0001", "sku": "SKU-00077"},
                          result={"success": True, "data": seeded})
    assert check_task(task, {"ledger": SPEC}, [call]) == []
    call.arguments["net"] = 10**6
    assert {v.rule for v in check_task(task, {"ledger": SPEC}, [call])} == {"amounts"}


def drawn(seed: int) -> dict:
    """Constants as instantiation draws them, with the account the user names."""
    rng = random.Random(seed)
    tool = SPEC.tool("create_slip")
    values = step_values(SPEC, tool, list(tool.parameter_properties()), POPULATION, date.fromisoformat(TODAY), rng)
    values["account_id"] = f"acc_000{seed % 8 + 1}"
    return values


@pytest.mark.parametrize("seed", range(12))
def test_drawn_then_harmonized_values_pass_the_validator(seed):
    task, calls = task_with(drawn(seed))
    settled = harmonize(task.plan, calls, {"ledger": SPEC}, WORLD, WORLD, POPULATION, random.Random(seed))
    args = {n: b.value for n, b in settled.steps[0].args.items()}
    assert rules_broken(args) == set()


def test_only_harmonizing_makes_the_currency_follow_the_account():
    """The draw cannot know the account's currency; the gold run's arguments tell harmonize."""
    assert any(rules_broken(drawn(seed)) == {"parent"} for seed in range(12))


def test_a_record_with_two_parents_needs_the_currency_of_one():
    b = ServiceBuilder("books", "Books", "finance", "Accounts, invoices and entries.", "tests")
    b.entity("Account", "acc", "An account.", field("currency", "currency"))
    b.entity("Bill", "bill", "A bill.", field("currency", "currency"))
    b.entity("Entry", "ent", "An entry.", field("account_id", "books.Account.id"), field("bill_id", "books.Bill.id"),
             field("currency", "currency"))
    b.crud("Entry", "C")
    spec = b.build()
    world = seed_world([spec], SEED)
    account = world.services["books"].tables["Account"]["acc_0001"]["currency"]
    bills = world.services["books"].tables["Bill"]
    other = next((k for k, r in bills.items() if r["currency"] != account), None)
    assert other is not None

    def broken(currency: str) -> set[str]:
        args = {"account_id": "acc_0001", "bill_id": other, "currency": currency}
        plan = Plan(steps=[PlanStep(index=0, service_id="books", tool="create_entry",
                                    args={n: ArgBinding(kind="constant", value=v) for n, v in args.items()})])
        task = Task(task_id="t", seed=SEED, domain="finance", services=["books"], initial_state=world,
                    instruction="", plan=plan, rubric=[], today=TODAY)
        call = ToolCallRecord(service_id="books", tool="create_entry", arguments=args,
                              result={"success": True, "data": {"id": "ent_0009", **args}})
        return {v.rule for v in check_task(task, {"books": spec}, [call])}

    assert broken(account) == set() and broken(bills[other]["currency"]) == set()
    assert broken("XXX") == {"parent"}


@pytest.mark.parametrize("seed", range(4))
def test_name_parts_and_birth_dates_are_drawn_as_a_person_gives_them(seed):
    """``first_name``/``surname`` beside an email hold that person's name parts; a birth date lies decades back."""
    values = drawn(seed)
    person = next(p for p in POPULATION.everyone() if p.email == values["employee_email"])
    assert (values["employee_first_name"], values["employee_surname"]) == (person.first_name, person.last_name)
    assert 18 * 365 <= (date.fromisoformat(TODAY) - date.fromisoformat(values["birth_date"])).days <= 81 * 365
