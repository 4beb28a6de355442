"""Traps that bite: each kind's wrong plan fails its negative criterion, the gold plan passes, and the
gate rejects a trap no wrong plan can reach."""

from __future__ import annotations

import pytest

from compoworld_assets.engine.tasks import traps
from compoworld_assets.engine.tasks.gate import self_test
from compoworld_assets.engine.tasks.goal import GoalWriter
from compoworld_assets.engine.tasks.instantiate import TaskConfig, instantiate_task
from compoworld_assets.engine.tasks.model import ArgBinding, Plan, PlanStep
from compoworld_assets.engine.tasks.plan_exec import execute_plan, replay_plan
from compoworld_assets.engine.tasks.rubrics import GoldRun, evaluate_criterion, evaluate_rubric, rubric_score
from compoworld_assets.engine.tasks.traps import make_trap

MESSAGE = {"subject": ArgBinding(kind="constant", value="Your order"),
           "body": ArgBinding(kind="constant", value="Thanks for shopping with us"),
           "sent_on": ArgBinding(kind="constant", value="2026-06-01", type="date")}


def step(index: int, tool: str, **args: ArgBinding) -> PlanStep:
    return PlanStep(index=index, service_id="mailer" if tool == "create_message" else "shop", tool=tool, args=args)


def out(step_index: int, path: str, type_name: str) -> ArgBinding:
    return ArgBinding(kind="step_output", step=step_index, path=path, type=type_name)


def known(path: str, type_name: str) -> ArgBinding:
    return ArgBinding(kind="user_known", path=path, type=type_name)


def first_customer_plan() -> Plan:
    """Email the first customer listed."""
    return Plan(steps=[step(0, "list_customers"),
                       step(1, "create_message", to=out(0, "items[0].email", "email"), **MESSAGE)])


def first_order_plan() -> Plan:
    """Pay the first open order of a customer, then email that customer."""
    return Plan(steps=[
        step(0, "list_orders", customer_id=known("shop.Order.customer_id", "shop.Customer.id")),
        step(1, "pay_order", order_id=out(0, "items[0].id", "shop.Order.id")),
        step(2, "get_customer", customer_id=out(0, "items[0].customer_id", "shop.Customer.id")),
        step(3, "create_message", to=out(2, "email", "email"), **MESSAGE),
    ])


def pay_then_email_plan() -> Plan:
    """Look a customer up, pay an order, email the customer."""
    return Plan(steps=[
        step(0, "get_customer", customer_id=known("shop.Customer.id", "shop.Customer.id")),
        step(1, "pay_order", order_id=known("shop.Order.id", "shop.Order.id")),
        step(2, "create_message", to=out(0, "email", "email"), **MESSAGE),
    ])


def trapped(kind, plan, tiny_built, runtime_for, seed=3):
    task = instantiate_task(plan, tiny_built, seed, "train", runtime_for,
                            config=TaskConfig(min_distractors=1, traps=False))
    calls, final, answer = execute_plan(task, runtime_for(task))
    specs = {sid: b.spec for sid, b in tiny_built.items()}
    made = make_trap(kind, task, specs, GoldRun(calls, final, answer), runtime_for)
    assert made is not None, f"no {kind} trap"
    return task, made


def check_bites(made, runtime_for):
    """The wrong plan fails the trap criterion; the gold plan passes everything."""
    task, criterion = made.task, made.criterion
    trap = task.traps[0]
    runtime = runtime_for(task)
    _, final, answer = replay_plan(task.model_copy(update={"plan": trap.wrong_plan}), runtime)
    result = evaluate_criterion(criterion, task.initial_state, final, answer)
    assert not result.passed, result.detail
    _, gold_final, gold_answer = execute_plan(task, runtime)
    assert evaluate_criterion(criterion, task.initial_state, gold_final, gold_answer).passed
    return result


@pytest.mark.parametrize(("kind", "plan"), [
    ("on_hold", first_order_plan), ("do_not_email", first_customer_plan), ("threshold", pay_then_email_plan),
])
def test_the_wrong_plan_falls_into_each_kind_of_trap(kind, plan, tiny_built, runtime_for):
    _, made = trapped(kind, plan(), tiny_built, runtime_for)
    assert made.task.traps[0].kind == kind and made.criterion.kind == "negative"
    assert made.task.traps[0].rule in made.task.house_rules
    check_bites(made, runtime_for)


def test_on_hold_shifts_the_gold_plan_past_the_held_record(tiny_built, runtime_for):
    _, made = trapped("on_hold", first_order_plan(), tiny_built, runtime_for)
    pay = made.task.plan.steps[1].args["order_id"]
    assert pay.path == "items[1].id" and made.task.traps[0].wrong_plan.steps[1].args["order_id"].path == "items[0].id"
    text = GoalWriter().write(made.asked, {sid: b.spec for sid, b in tiny_built.items()})
    assert "the first order for customer" in text and "that the house rules let you use" in text
    check_bites(made, runtime_for)


def test_threshold_leaves_the_write_out_of_the_gold_plan_but_not_out_of_the_request(tiny_built, runtime_for):
    original, made = trapped("threshold", pay_then_email_plan(), tiny_built, runtime_for)
    assert [s.tool for s in made.task.plan.steps] == ["get_customer", "create_message"]
    assert made.task.services == original.services, "the split depends on the services: they stay"
    assert [s.tool for s in made.asked.plan.steps] == [s.tool for s in original.plan.steps]
    assert "need a manager's approval" in made.task.traps[0].rule
    # Identified by its walk: a walk of the two remaining steps would have the same gold plan but another task.
    assert made.task.plan_hash == pay_then_email_plan().plan_hash() != made.task.plan.plan_hash()
    check_bites(made, runtime_for)


def test_a_full_task_with_a_trap_passes_the_gate_and_the_wrong_plan_scores_zero(tiny_built, runtime_for):
    task = instantiate_task(pay_then_email_plan(), tiny_built, 3, "train", runtime_for,
                            config=TaskConfig(min_distractors=1))
    assert task.traps, "a trap fits this plan"
    result = self_test(task, runtime_for(task))
    assert result.passed, result.reasons
    _, final, answer = replay_plan(task.model_copy(update={"plan": task.traps[0].wrong_plan}), runtime_for(task))
    assert rubric_score(task, evaluate_rubric(task, final, answer)) == 0.0


def test_the_gate_rejects_a_trap_no_wrong_plan_reaches(tiny_built, runtime_for):
    task = instantiate_task(pay_then_email_plan(), tiny_built, 3, "train", runtime_for,
                            config=TaskConfig(min_distractors=1))
    harmless = task.model_copy(update={"traps": [task.traps[0].model_copy(update={"wrong_plan": task.plan})]})
    result = self_test(harmless, runtime_for(harmless))
    assert not result.passed and any("not reachable" in r for r in result.reasons)


def order_for_the_first_listed_customer_plan() -> Plan:
    """Look a customer up, order for the first customer listed, email the looked-up customer."""
    return Plan(steps=[
        step(0, "get_customer", customer_id=known("shop.Customer.id", "shop.Customer.id")),
        step(1, "list_customers"),
        step(2, "create_order", customer_id=out(1, "items[0].id", "shop.Customer.id"),
             total=ArgBinding(kind="constant", value=120.0, type="money"),
             status=ArgBinding(kind="constant", value="open")),
        step(3, "create_message", to=out(0, "email", "email"), **MESSAGE),
    ])


def test_a_trap_that_changes_what_the_gold_plan_writes_is_refused(tiny_built, runtime_for):
    """A look-alike of the looked-up customer that sorts first makes the gold plan's listing hand its id to the
    new order: the same records change and the trap's criterion passes, yet the gold run orders for the
    look-alike, so the trap is refused."""
    task = instantiate_task(order_for_the_first_listed_customer_plan(), tiny_built, 3, "train", runtime_for,
                            config=TaskConfig(min_distractors=1, traps=False))
    calls, final, answer = execute_plan(task, runtime_for(task))
    spec = tiny_built["shop"].spec
    looked_up = task.initial_state.services["shop"].tables["Customer"][calls[0].arguments["customer_id"]]
    twin = {**looked_up, "id": "cus_0000", "email": "someone.else@example.com"}
    emails_the_twin = traps._with_step(task.plan, 3, "to", ArgBinding(kind="constant", value=twin["email"]))
    draft = traps._draft("do_not_email", task, task, spec, "Customer", twin, twin["email"],
                         "Never contact someone.else@example.com.", emails_the_twin)
    gold = GoldRun(calls, final, answer)
    assert traps.falls_into(draft.task, draft.criterion, traps.Trap(kind="do_not_email", rule=draft.rule,
                            criterion_id=draft.criterion.id, wrong_plan=emails_the_twin), runtime_for(draft.task))
    assert traps._checked(draft, task, gold, runtime_for) is None
