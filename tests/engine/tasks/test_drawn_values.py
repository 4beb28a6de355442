"""What a task asks for is what a person would give: values a call can take, and an answer its result holds."""

from __future__ import annotations

import random
from datetime import date

from compoworld_assets.engine.library.population import Population
from compoworld_assets.engine.specs.model import Effect, ServiceSpec
from compoworld_assets.engine.tasks.arguments import step_values
from compoworld_assets.engine.tasks.instantiate import _report_sources
from compoworld_assets.engine.tasks.model import Plan, PlanStep
from compoworld_assets.engine.types import TYPE_KEY
from tests.engine.tasks.conftest import shop_spec

TOKEN = {"type": "object", "properties": {"token": {"type": "string"}, "type": {"type": "string", "enum": ["otac"]}},
         "required": ["token", "type"]}


def _with_tool(spec: ServiceSpec, name: str, **update) -> ServiceSpec:
    return spec.model_copy(update={"tools": [t.model_copy(update=update) if t.name == name else t for t in spec.tools]})


def test_a_create_that_answers_with_the_apis_own_response_reports_a_field_of_it():
    """A derived create may answer ``{token, type}`` instead of its record: there is no id to report."""
    plan = Plan(steps=[PlanStep(index=0, service_id="shop", tool="create_customer", args={})])
    assert _report_sources(plan, {"shop": shop_spec()})["customer_id"].path == "id"
    sources = _report_sources(plan, {"shop": _with_tool(shop_spec(), "create_customer", returns=TOKEN)})
    assert {name: source.path for name, source in sources.items()} == {"token": "token"}


def _drawn(spec: ServiceSpec, tool: str, seed: int) -> dict:
    names = list(spec.tool(tool).parameter_properties())
    return step_values(spec, spec.tool(tool), names, Population.generate(seed), date(2026, 6, 1), random.Random(seed))


def test_an_object_parameter_that_says_what_goes_in_it_is_not_drawn_empty():
    content = {"type": "object", "properties": {"subject": {"type": "string"}, "body": {"type": "string"}}}
    tool = shop_spec().tool("create_customer")
    spec = _with_tool(shop_spec(), "create_customer", parameters={
        **tool.parameters, "properties": {**tool.parameter_properties(), "content": content}})
    for seed in range(6):
        assert set(_drawn(spec, "create_customer", seed)["content"]) == {"subject", "body"}


def test_a_free_form_map_or_document_parameter_gets_an_entry():
    metadata = {"type": "object", "additionalProperties": {"type": "string"}}
    tool = shop_spec().tool("create_customer")
    spec = _with_tool(shop_spec(), "create_customer", parameters={
        **tool.parameters, "properties": {**tool.parameter_properties(), "metadata": metadata,
                                          "body": {"type": "object"}}})
    for seed in range(6):
        drawn = _drawn(spec, "create_customer", seed)
        assert drawn["metadata"] and all(isinstance(v, str) for v in drawn["metadata"].values())
        assert drawn["body"]


def test_a_last_step_that_answers_one_scalar_reports_it_whole():
    """A check that answers ``"true"`` (no object around it) ends a task with that answer."""
    spec = _with_tool(shop_spec(), "create_customer", returns={"type": "string"}, effect=Effect.QUERY, entity=None)
    plan = Plan(steps=[PlanStep(index=0, service_id="shop", tool="create_customer", args={})])
    assert {n: s.path for n, s in _report_sources(plan, {"shop": spec}).items()} == {"result": "$"}
    from compoworld_assets.engine.tasks.goal import GoalWriter
    from compoworld_assets.engine.tasks.instantiate import draft_task

    task = draft_task(plan, {"shop": spec}, seed=2, writer=GoalWriter())
    assert "tell me the answer it returns." in task.instruction, task.instruction
    assert task.answer_form() == '{"result": ...}'


def test_a_parameter_takes_its_own_type_where_the_record_field_has_another():
    """The record's ``signup_date`` is a date; a tool that takes it as a datetime gets a datetime."""
    tool = shop_spec().tool("create_customer")
    stated = {**tool.parameter_properties()["signup_date"], "format": "date-time", TYPE_KEY: "datetime"}
    spec = _with_tool(shop_spec(), "create_customer", parameters={
        **tool.parameters, "properties": {**tool.parameter_properties(), "signup_date": stated}})
    for seed in range(6):
        assert "T" in _drawn(spec, "create_customer", seed)["signup_date"]


def test_a_user_known_value_takes_the_apis_form_where_the_worlds_values_have_another():
    """The world's phones are ``+1-555-…``; an API that takes E.164 only gets a number in that form."""
    import re

    from compoworld_assets.engine.library.builder import ServiceBuilder, field
    from compoworld_assets.engine.library.seeding import seed_world
    from compoworld_assets.engine.tasks.instantiate import _resolve_step
    from compoworld_assets.engine.tasks.model import ArgBinding

    b = ServiceBuilder("dialer", "Dialer", "communication", "Calls.", "tests")
    b.entity("Call", "call", "A call.", field("to_phone", "phone"), field("caller", "person_name"))
    b.crud("Call", "C")
    e164 = {"type": "string", "pattern": r"^\+?[1-9]\d{1,14}$", TYPE_KEY: "phone"}
    tool = b.build().tool("create_call")
    spec = _with_tool(b.build(), "create_call", parameters={
        **tool.parameters, "properties": {**tool.parameter_properties(), "to_phone": e164}})
    world = seed_world([spec], 3)
    assert not any(re.fullmatch(e164["pattern"], r["to_phone"]) for r in world.services["dialer"].tables["Call"].values())
    step = PlanStep(index=0, service_id="dialer", tool="create_call",
                    args={"to_phone": ArgBinding(kind="user_known", type="phone")})
    for seed in range(5):
        resolved = _resolve_step(step, Plan(steps=[step]), world, {"dialer": spec}, random.Random(seed))
        assert re.fullmatch(e164["pattern"], resolved.args["to_phone"].value)


def test_a_lookup_by_several_fields_of_one_table_asks_for_what_one_record_holds():
    """Drawn one by one, ``channel`` and ``plan`` rarely meet in a record, and the look-up finds nothing."""
    from compoworld_assets.engine.library.builder import ServiceBuilder, field
    from compoworld_assets.engine.library.seeding import seed_world
    from compoworld_assets.engine.tasks.instantiate import _resolve_step
    from compoworld_assets.engine.tasks.model import ArgBinding

    b = ServiceBuilder("subs", "Subscriptions", "marketing", "Subscriptions.", "tests")
    b.entity("Subscription", "sub", "A subscription.", field("channel", enum=["email", "sms", "push"]),
             field("plan", enum=["free", "pro", "team", "enterprise"]), field("seats", "integer"))
    b.crud("Subscription", "L")
    spec = b.build()
    world = seed_world([spec], 4)
    rows = list(world.services["subs"].tables["Subscription"].values())
    step = PlanStep(index=0, service_id="subs", tool="list_subscriptions", args={
        name: ArgBinding(kind="user_known", path=f"subs.Subscription.{name}") for name in ("channel", "plan", "seats")})
    for seed in range(12):
        args = _resolve_step(step, Plan(steps=[step]), world, {"subs": spec}, random.Random(seed)).args
        wanted = {name: binding.value for name, binding in args.items()}
        assert any(all(row[n] == v for n, v in wanted.items()) for row in rows), wanted
