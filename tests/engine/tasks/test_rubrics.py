import pytest

from compoworld_assets.engine.tasks.instantiate import TaskConfig, instantiate_task
from compoworld_assets.engine.tasks.model import ArgBinding, Plan, PlanStep
from compoworld_assets.engine.tasks.plan_exec import execute_plan
from compoworld_assets.engine.tasks.rubrics import evaluate_rubric, rubric_score, same_value


@pytest.fixture
def email_task(email_plan, tiny_built, runtime_for):
    return instantiate_task(email_plan, tiny_built, 3, "train", runtime_for,
                            config=TaskConfig(min_distractors=1))


def _ops(task):
    return {c.check["op"] for c in task.rubric}


def test_rubric_follows_the_plan(email_task):
    assert _ops(email_task) == {"record_exists", "answer_equals", "no_collateral"}  # by id: no trap fits
    created = next(c for c in email_task.rubric if c.check["op"] == "record_exists")
    assert created.kind == "state" and created.check["match"]["subject"] == "Your order"
    customer = email_task.plan.steps[0].args["customer_id"].value
    email = email_task.initial_state.services["shop"].tables["Customer"][customer]["email"]
    assert created.check["match"]["to"] == email
    assert email_task.report_fields == ["message_id"]


def test_gold_final_state_scores_one_and_initial_state_zero(email_task, runtime_for):
    _, final, answer = execute_plan(email_task, runtime_for(email_task))
    results = evaluate_rubric(email_task, final, answer)
    assert all(r.passed for r in results) and rubric_score(email_task, results) == 1.0
    nothing = evaluate_rubric(email_task, email_task.initial_state, {})
    assert rubric_score(email_task, nothing) == 0.0
    assert {r.id for r in nothing if r.passed} == {c.id for c in email_task.rubric if c.kind == "negative"}


def test_wrong_answer_costs_its_share(email_task, runtime_for):
    _, final, _answer = execute_plan(email_task, runtime_for(email_task))
    results = evaluate_rubric(email_task, final, {"message_id": "msg_9999"})
    assert rubric_score(email_task, results) == pytest.approx(0.5)


def test_a_task_seeds_the_services_it_needs_and_only_names_its_distractors(email_task):
    assert set(email_task.initial_state.services) == set(email_task.services) == {"shop", "mailer"}
    assert email_task.distractor_services == ["notes"]


def test_collateral_damage_zeroes_the_score(email_task, runtime_for):
    assert email_task.distractor_services == ["notes"]
    runtime = runtime_for(email_task)
    # As an episode scores it: against the whole mounted world, the distractor at its own seed state.
    mounted = email_task.model_copy(update={"initial_state": runtime.world_state()})
    _, _, answer = execute_plan(mounted, runtime)
    scribble = runtime.call("notes", "update_note", {"note_id": "note_0001", "title": "Scribbled over"})
    assert scribble["success"]
    results = evaluate_rubric(mounted, runtime.world_state(), answer)
    assert {r.id for r in results if not r.passed} == {"no_collateral"}
    assert rubric_score(email_task, results) == 0.0


def test_touching_the_trap_record_zeroes_the_score(tiny_built, runtime_for):
    """Pay a customer's first open order: the house rules put a look-alike of it on hold."""
    pay_first_order = Plan(steps=[
        PlanStep(index=0, service_id="shop", tool="list_orders", args={"customer_id": ArgBinding(
            kind="user_known", path="shop.Order.customer_id", type="shop.Customer.id")}),
        PlanStep(index=1, service_id="shop", tool="pay_order", args={"order_id": ArgBinding(
            kind="step_output", step=0, path="items[0].id", type="shop.Order.id")})])
    task = instantiate_task(pay_first_order, tiny_built, 3, "train", runtime_for, config=TaskConfig(min_distractors=1))
    _, final, answer = execute_plan(task, runtime_for(task))
    trap = next(c for c in task.rubric if c.check["op"] == "trap_untouched")
    assert any(trap.check["id"] in rule for rule in task.house_rules)
    final = final.snapshot()  # states are values: a copy to change
    final.services[trap.check["service"]].tables[trap.check["entity"]][trap.check["id"]]["status"] = "paid"
    results = {r.id: r.passed for r in evaluate_rubric(task, final, answer)}
    assert results[trap.id] is False and results["no_collateral"] is False


def test_wrong_recipient_fails_the_state_criterion(email_task, runtime_for):
    runtime = runtime_for(email_task)
    runtime.reset(email_task.initial_state)
    runtime.call("mailer", "create_message", {"to": "someone.else@example.com", "subject": "Your order",
                                              "body": "Thanks for shopping with us", "sent_on": "2026-06-01"})
    results = {r.id: r.passed for r in evaluate_rubric(email_task, runtime.world_state(), {})}
    assert results["step1_created"] is False and results["no_collateral"] is True


@pytest.mark.parametrize(("expected", "given", "same"), [
    (12.5, "12.50", True), (12.5, 12.504, True), (12.5, 12.6, False), ("Ada  Berg", "ada berg", True),
    ("msg_0001", "msg_0002", False), (True, "true", True), (True, False, False), (3, "three", False),
])
def test_value_normalisation(expected, given, same):
    assert same_value(expected, given) is same


def test_an_update_a_later_step_undid_gets_no_criterion_and_doing_nothing_scores_zero(tiny_specs):
    """Pay an order, then set it back to open with a new total: the payment left nothing to check (doing
    nothing passes a check of status 'open'), while the re-stated status stays beside the changed total."""
    from compoworld_assets.engine.runtime.state import ServiceState, WorldState
    from compoworld_assets.engine.tasks.model import ArgBinding, Plan, PlanStep, Task, ToolCallRecord
    from compoworld_assets.engine.tasks.rubrics import GoldRun, build_rubric

    specs = {s.id: s for s in tiny_specs}
    order = {"id": "ord_0001", "customer_id": "cus_0001", "total": 10.0, "status": "open"}
    initial = WorldState(services={"shop": ServiceState(service_id="shop", tables={"Order": {"ord_0001": order}})})
    after = {**order, "total": 12.5}
    final = WorldState(services={"shop": ServiceState(service_id="shop", tables={"Order": {"ord_0001": after}})})
    key = ArgBinding(kind="user_known", path="shop.Order.id", value="ord_0001", type="shop.Order.id")
    plan = Plan(steps=[
        PlanStep(index=0, service_id="shop", tool="pay_order", args={"order_id": key}),
        PlanStep(index=1, service_id="shop", tool="update_order", args={
            "order_id": key, "status": ArgBinding(kind="constant", value="open"),
            "total": ArgBinding(kind="constant", value=12.5)}),
    ])
    calls = [
        ToolCallRecord(service_id="shop", tool="pay_order", arguments={"order_id": "ord_0001"},
                       result={"success": True, "data": {**order, "status": "paid"}}),
        ToolCallRecord(service_id="shop", tool="update_order",
                       arguments={"order_id": "ord_0001", "status": "open", "total": 12.5},
                       result={"success": True, "data": after}),
    ]
    task = Task(task_id="t", seed=0, domain="commerce", services=["shop"], initial_state=initial, instruction="",
                plan=plan, rubric=[])
    rubric = build_rubric(task, specs, GoldRun(calls, final, {}))
    updates = {c.id: c.check["fields"] for c in rubric if c.check["op"] == "field_equals"}
    assert updates == {"step1_updated": {"status": "open", "total": 12.5}}
    task = task.model_copy(update={"rubric": rubric})
    assert rubric_score(task, evaluate_rubric(task, initial, {})) == 0.0
    assert rubric_score(task, evaluate_rubric(task, final, {})) == 1.0
