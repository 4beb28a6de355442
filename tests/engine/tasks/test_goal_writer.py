"""The goal writer states what the user wants: every value the agent must be told, no tool name, no
value the agent has to find (property test over many sampled plans), and the explicit style stays."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compoworld_assets.engine.library import builtin_spec
from compoworld_assets.engine.library.intents import DECLARED, intent_for, operation_words
from compoworld_assets.engine.library.wording import readable
from compoworld_assets.engine.runtime.service_runtime import RuntimePool, ServiceMount
from compoworld_assets.engine.service_build import BuiltService
from compoworld_assets.engine.synthesis.offline import OfflineSynthesizer
from compoworld_assets.engine.tasks.goal import GoalWriter
from compoworld_assets.engine.tasks.graph import built_services_graph
from compoworld_assets.engine.tasks.instantiate import TaskConfig, TaskGenerationError, draft_task
from compoworld_assets.engine.tasks.instructions import TemplateWriter, stated_values
from compoworld_assets.engine.tasks.plan_exec import PlanExecutionError, execute_plan
from compoworld_assets.engine.tasks.sampling import sample_plans
from compoworld_assets.engine.world_model.offline import OfflineWorldModel

SERVICES = ("crm", "mail", "invoicing", "helpdesk", "payments", "calendar", "hr", "payroll")


class World:
    """Eight built-in services, offline-synthesized, with a pool to run plans (short repr for hypothesis)."""

    def __init__(self) -> None:
        self.specs = [builtin_spec(s) for s in SERVICES]
        self.built = {}
        for spec in self.specs:
            module = OfflineSynthesizer().synthesize(spec)
            self.built[spec.id] = BuiltService(spec=spec, module=module,
                                               implementation={t: "code" for t in module.implemented_tools})
        self.graph = built_services_graph(self.built)
        self.pool = RuntimePool(world_model=OfflineWorldModel())

    def runtime(self, task):
        mounts = [ServiceMount(self.built[s].spec, self.built[s].module, self.built[s].implementation)
                  for s in task.services + task.distractor_services]
        return self.pool.world(mounts, task.initial_state)

    def __repr__(self) -> str:
        return f"World({', '.join(SERVICES)})"


@pytest.fixture(scope="module")
def world():
    made = World()
    yield made
    made.pool.close()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(min_value=0, max_value=10**6))
def test_goal_never_leaks_a_tool_name_or_an_intermediate_value(world, seed):
    specs, built = world.specs, world.built
    plans = sample_plans(world.graph, specs, seed, 1)
    if not plans:
        return
    try:
        task = draft_task(plans[0], built, seed)
        calls, _, answer = execute_plan(task, world.runtime(task))
    except (TaskGenerationError, PlanExecutionError):
        return
    text = task.instruction.casefold()
    told = {v.casefold() for v in stated_values(task)}
    assert all(value in text for value in told), "every value the user states is in the instruction"
    assert all(f'"{name}"' in task.answer_form() for name in task.report_fields)
    for spec in specs:
        assert f"({spec.id})" not in text
        for tool in spec.tools:
            assert spec.qualified_tool_name(tool.name).casefold() not in text
            if "_" in tool.name:
                assert tool.name.casefold() not in text, tool.name
    assert not re.search(r"\bstep \d", text)
    found = {str(call.arguments[name]).casefold() for step, call in zip(task.plan.steps, calls, strict=True)
             for name, binding in step.args.items() if binding.kind == "step_output"}
    found |= {str(v).casefold() for v in answer.values()}
    for value in found - told:
        if re.fullmatch(r"[a-z_]+", value):
            continue  # an enum word ("trash", "paid") may follow from the intent itself
        assert value not in text, f"{value!r} is for the agent to find"


def test_goal_names_records_the_user_knows_and_skips_the_reads(email_plan, tiny_specs):
    task = draft_task(email_plan, {s.id: s for s in tiny_specs}, seed=3)
    customer = task.plan.steps[0].args["customer_id"].value
    assert task.instruction_style == "goal"
    assert f"the email of customer {customer}" in task.instruction
    assert "look up" not in task.instruction and "Shop" not in task.instruction
    assert "tell me the id of the new message." in task.instruction
    assert task.answer_form() == '{"message_id": ...}'


def test_explicit_style_keeps_the_recipe(email_plan, tiny_specs):
    specs = {s.id: s for s in tiny_specs}
    task = draft_task(email_plan, specs, seed=3, config=TaskConfig(instruction_style="explicit"))
    assert task.instruction_style == "explicit"
    assert "1. In Shop (shop), look up the customer" in task.instruction and "from step 1" in task.instruction
    goal = GoalWriter().write(task.model_copy(update={"instruction_style": "goal"}), specs)
    assert TemplateWriter().write(task, specs) == task.instruction != goal


def test_mixed_style_writes_both():
    config = TaskConfig(instruction_style="mixed")
    assert {config.style_for(f"task_{n}") for n in range(20)} == {"goal", "explicit"}
    with pytest.raises(ValueError):
        TaskConfig(instruction_style="poetic")


@pytest.mark.parametrize("service_id", ["hr", "invoicing", "recruiting", "contracts"])
def test_built_in_tools_have_declared_or_conventional_intents(service_id):
    spec = builtin_spec(service_id)
    for tool in spec.tools:
        intent = intent_for(spec, tool)
        assert intent.source in ("declared", "convention"), tool.name
        if tool.effect is not None and tool.effect.value in ("update", "delete", "read"):
            assert "{subject}" in intent.template, tool.name
    assert all(key.split(".")[0] for key in DECLARED)


def test_imported_intents_come_from_descriptions_or_readable_names():
    from compoworld_assets.engine.specs.model import ServiceSpec, SourceRef, ToolSpec
    spec = ServiceSpec(id="docsapi", name="Docs API", domain="documents", description="Documents.",
                       source=SourceRef(kind="openapi", location="x"), tools=[
                           ToolSpec(name="createnewdocument", description="Creates a new document."),
                           ToolSpec(name="getheartbeat", description=""),
                           ToolSpec(name="listAllDocuments", description="This API is used widely.")])
    assert intent_for(spec, spec.tools[0]).phrase() == "create a new document"
    assert intent_for(spec, spec.tools[1]).source == "name"
    assert intent_for(spec, spec.tools[2]).phrase() == "list all documents"
    assert readable("createnewdocument", frozenset({"create", "new", "document"})) == "create new document"


@pytest.mark.parametrize(("operation", "words"), [
    ("api_transport_transport_gotify_id_put", "update transport gotify"),  # an id made from a route
    ("get_v1_email_disposable", "get email disposable"),
    ("getV2Users", "get users"),
    ("delete_thing_by_id", "delete thing"),
    ("repos_update_status_check_protection", "update repos status check protection"),
    ("admin_emoji_add", "add admin emoji"),
    ("wkhtmltopdf_from_url_get", "get wkhtmltopdf from url"),
])
def test_an_operation_id_reads_as_words_without_route_fragments(operation, words):
    assert operation_words(operation, frozenset()) == words


def test_an_undescribed_tool_of_an_entity_reads_by_its_effect_not_its_operation_id():
    from compoworld_assets.engine.specs.model import Effect, EntitySpec, ServiceSpec, SourceRef, ToolSpec
    spec = ServiceSpec(id="gotify", name="Gotify", domain="it", description="", source=SourceRef(
        kind="openapi", location="x"), entities=[EntitySpec(name="Transport", id_prefix="trn", fields=[])],
        tools=[ToolSpec(name="api_transport_id_put", description="", effect=Effect.UPDATE, entity="Transport",
                        parameters={"type": "object", "required": ["id"], "properties": {
                            "id": {"type": "string", "x-cw-type": "gotify.Transport.id"}}})])
    intent = intent_for(spec, spec.tools[0])
    assert (intent.source, intent.phrase("transport trn_0001")) == ("convention", "update transport trn_0001")


def test_a_field_naming_who_did_something_reads_as_that_person():
    from compoworld_assets.engine.library.intents import field_words
    from compoworld_assets.engine.tasks.goal import _field_of

    assert _field_of("booked_by", "room booking B", field_words) == "the person who booked room booking B"
    assert _field_of("assignedTo", "ticket T", field_words) == "the person ticket T is assigned to"
    assert _field_of("reports_to", "employee E", field_words) == "the reports to of employee E"  # not a participle
    assert _field_of("customer_email", "order O", field_words) == "the customer email of order O"
