"""A tiny two-service world (a shop and a mailer) for the task factory tests."""

from __future__ import annotations

import pytest

from compoworld_assets.engine.library.builder import ServiceBuilder, field
from compoworld_assets.engine.library.seeding import seed_world
from compoworld_assets.engine.runtime.service_runtime import RuntimePool, ServiceMount
from compoworld_assets.engine.runtime.state import WorldState
from compoworld_assets.engine.service_build import BuiltService
from compoworld_assets.engine.specs.model import ServiceSpec
from compoworld_assets.engine.synthesis.offline import OfflineSynthesizer
from compoworld_assets.engine.tasks.model import ArgBinding, Plan, PlanStep


def shop_spec() -> ServiceSpec:
    b = ServiceBuilder("shop", "Shop", "commerce", "Customers and their orders.", "tests")
    b.entity("Customer", "cus", "A customer.", field("full_name", "person_name"), field("email", "email"),
             field("signup_date", "date"))
    b.entity("Order", "ord", "An order.", field("customer_id", "shop.Customer.id"), field("total", "money"),
             field("status", enum=["open", "paid"]))
    b.crud("Customer", "CRL")
    b.crud("Order", "CRLU")
    b.update_as("pay_order", "Order", "Mark an order as paid.", sets={"status": "paid"})
    return b.build()


def mailer_spec() -> ServiceSpec:
    b = ServiceBuilder("mailer", "Mailer", "communication", "Outgoing email.", "tests")
    b.entity("Message", "msg", "An email.", field("to", "email"), field("subject"), field("body"),
             field("sent_on", "date"))
    b.crud("Message", "CRL")
    return b.build()


def notes_spec() -> ServiceSpec:
    b = ServiceBuilder("notes", "Notes", "documents", "Free-standing notes.", "tests")
    b.entity("Note", "note", "A note.", field("title"), field("body"))
    b.crud("Note", "CRLU")
    return b.build()


@pytest.fixture(scope="session")
def tiny_specs() -> list[ServiceSpec]:
    return [shop_spec(), mailer_spec(), notes_spec()]


@pytest.fixture(scope="session")
def tiny_built(tiny_specs: list[ServiceSpec]) -> dict[str, BuiltService]:
    built = {}
    for spec in tiny_specs:
        module = OfflineSynthesizer().synthesize(spec)
        built[spec.id] = BuiltService(spec=spec, module=module,
                                      implementation={t: "code" for t in module.implemented_tools})
    return built


@pytest.fixture(scope="session")
def pool():
    with RuntimePool() as runtime_pool:
        yield runtime_pool


@pytest.fixture(scope="session")
def runtime_for(pool, tiny_built):
    """A task's world as an agent gets it: its needed services at its initial state, its distractors at a seed
    state of their own (as the rollout world factory mounts them)."""
    def make(task):
        mounts = [ServiceMount(tiny_built[s].spec, tiny_built[s].module, tiny_built[s].implementation)
                  for s in task.services + task.distractor_services]
        distractors = seed_world([tiny_built[s].spec for s in task.distractor_services], 0)
        return pool.world(mounts, WorldState(services={**distractors.services, **task.initial_state.services}))

    return make


@pytest.fixture
def email_plan() -> Plan:
    """Look a customer up, email them, and pay one of their orders."""
    return Plan(steps=[
        PlanStep(index=0, service_id="shop", tool="get_customer",
                 args={"customer_id": ArgBinding(kind="user_known", path="shop.Customer.id",
                                                 type="shop.Customer.id")}),
        PlanStep(index=1, service_id="mailer", tool="create_message", args={
            "to": ArgBinding(kind="step_output", step=0, path="email", type="email"),
            "subject": ArgBinding(kind="constant", value="Your order"),
            "body": ArgBinding(kind="constant", value="Thanks for shopping with us"),
            "sent_on": ArgBinding(kind="constant", value="2026-06-01", type="date"),
        }),
    ])
