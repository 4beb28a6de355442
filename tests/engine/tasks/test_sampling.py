import pytest

from compoworld_assets.engine.library import builtin_specs
from compoworld_assets.engine.tasks.graph import build_dependency_graph
from compoworld_assets.engine.tasks.sampling import WalkConfig, crosses_services, edge_coverage, sample_plans


@pytest.fixture(scope="module")
def library():
    specs = builtin_specs()
    return specs, build_dependency_graph(specs)


def test_same_seed_same_plans_other_seed_other_plans(tiny_specs):
    graph = build_dependency_graph(tiny_specs)
    first = sample_plans(graph, tiny_specs, 5, 8)
    assert [p.model_dump() for p in first] == [p.model_dump() for p in sample_plans(graph, tiny_specs, 5, 8)]
    other = sample_plans(graph, tiny_specs, 6, 8)
    assert [p.model_dump() for p in first] != [p.model_dump() for p in other]


def test_plans_are_distinct_cross_service_and_fully_bound(tiny_specs):
    graph = build_dependency_graph(tiny_specs)
    plans = sample_plans(graph, tiny_specs, 1, 30)
    assert plans
    assert len({p.plan_hash() for p in plans}) == len(plans)
    specs = {s.id: s for s in tiny_specs}
    for plan in plans:
        assert crosses_services(plan) and len(plan.services) >= 2
        assert any(specs[s.service_id].tool(s.tool).changes_state for s in plan.steps)
        for step in plan.steps:
            required = set(specs[step.service_id].tool(step.tool).required_parameters())
            assert required <= set(step.args)
            for binding in step.args.values():
                if binding.kind == "step_output":
                    assert binding.step < step.index and "[]" not in binding.path


def test_no_plans_without_a_cross_service_edge(tiny_specs):
    notes_only = [s for s in tiny_specs if s.id == "notes"]
    graph = build_dependency_graph(notes_only)
    assert sample_plans(graph, notes_only, 1, 5, WalkConfig(min_services=1)) == []


def test_a_world_model_tool_is_walked_only_when_its_probe_passed(tiny_specs):
    """An unusable world-model tool (no type-valid result) is never a step; a simulated read is."""
    implementation = {"shop": {"get_customer": "world_model"}}
    unusable = build_dependency_graph(tiny_specs, implementation)
    plans = sample_plans(unusable, tiny_specs, 2, 40)
    assert plans and all(s.qualified_name != "shop_get_customer" for p in plans for s in p.steps)
    simulated = build_dependency_graph(tiny_specs, implementation, {"shop": ["get_customer"]})
    assert simulated.nodes["shop_get_customer"]["walkable"] and not simulated.nodes["shop_get_customer"]["code"]
    plans = sample_plans(simulated, tiny_specs, 2, 40)
    assert any(s.qualified_name == "shop_get_customer" for p in plans for s in p.steps)


def test_a_simulated_action_only_feeds_later_steps(tiny_specs):
    """An action (its spec names no effect) may hand its result on; a walk ends on one only when the
    answer can report a field of its result, and it is not the write a plan needs; a write that names
    no entity is never walked."""
    from compoworld_assets.engine.specs.model import Effect
    from compoworld_assets.engine.tasks.graph import reportable_path, simulation_walkable

    shop = next(s for s in tiny_specs if s.id == "shop")
    create = next(t for t in shop.tools if t.effect == Effect.CREATE)
    assert simulation_walkable(create) and simulation_walkable(create.model_copy(update={"effect": Effect.ACTION}))
    assert not simulation_walkable(create.model_copy(update={"entity": None}))
    acting = [s.model_copy(update={"tools": [t.model_copy(update={"effect": Effect.ACTION}) if t.effect != Effect.CREATE
                                             and t.changes_state else t for t in s.tools]}) for s in tiny_specs]
    implementation = {s.id: {t.name: "world_model" for t in s.tools if t.effect == Effect.ACTION} for s in acting}
    graph = build_dependency_graph(acting, implementation, {sid: list(tools) for sid, tools in implementation.items()})
    specs = {s.id: s for s in acting}
    plans = sample_plans(graph, acting, 3, 30)
    assert plans and any(specs[s.service_id].tool(s.tool).effect == Effect.ACTION for p in plans for s in p.steps)
    for plan in plans:
        last = specs[plan.steps[-1].service_id].tool(plan.steps[-1].tool)
        assert last.effect != Effect.ACTION or reportable_path(last) is not None
        assert any(specs[s.service_id].tool(s.tool).effect in (Effect.CREATE, Effect.UPDATE, Effect.DELETE)
                   for s in plan.steps)


def test_a_plan_whose_only_writes_are_simulated_actions_is_not_kept(tiny_specs):
    """Offline a simulated action changes nothing: a walk needs a write some criterion can check."""
    from compoworld_assets.engine.specs.model import Effect

    acting = [s.model_copy(update={"tools": [t.model_copy(update={"effect": Effect.ACTION}) if t.changes_state else t
                                             for t in s.tools]}) for s in tiny_specs]
    implementation = {s.id: {t.name: "world_model" for t in s.tools if t.effect == Effect.ACTION} for s in acting}
    graph = build_dependency_graph(acting, implementation, {sid: list(tools) for sid, tools in implementation.items()})
    assert sum(1 for _, data in graph.nodes(data=True) if data["walkable"] and not data["code"]) > 0
    assert sample_plans(graph, acting, 3, 30) == []
    assert sample_plans(graph, acting, 3, 30, WalkConfig(require_write=False))


def test_a_small_service_joined_by_few_edges_still_gets_into_plans(library):
    """A one-tool link shortener takes a URL from the 30 built-in services: bridge walks put it in the first 30
    plans and in several of 90. (Plain walks never reached it in 30 plans while walks drew tools, not services.)"""
    from pathlib import Path

    from compoworld_assets.engine.specs.importers import import_spec_file

    [shortener] = import_spec_file(Path(__file__).parents[2] / "fixtures/bridges/link_shortener_functions.json").specs
    specs = [*library[0], shortener]
    graph = build_dependency_graph(specs)
    for seed in (1, 2, 3):
        # in several plans, not one: instantiation may lose a plan, and then the service would be in no task
        assert any(shortener.id in p.services for p in sample_plans(graph, specs, seed, 30))
        plans = sample_plans(graph, specs, seed, 90)
        assert sum(shortener.id in p.services for p in plans) >= WalkConfig().bridge_plans


def test_a_bridge_into_a_dead_end_is_no_bridge(library):
    """A simulated action that returns nothing can neither end a task nor lead on: a service whose only
    edges from the library go into such tools is not reachable, and bridge walks do not try it."""
    from compoworld_assets.engine.specs.model import Effect, ServiceSpec, SourceRef, ToolSpec
    from compoworld_assets.engine.tasks.sampling import bridged_services

    def service(sid: str, tool: str, effect: Effect) -> ServiceSpec:
        parameters = {"type": "object", "required": ["target_url"],
                      "properties": {"target_url": {"type": "string", "x-cw-type": "url"}}}
        return ServiceSpec(id=sid, name=sid, domain="web", description=sid, version="1",
                           source=SourceRef(kind="openai", location="test"),
                           tools=[ToolSpec(name=tool, description=tool, parameters=parameters, effect=effect)])

    pinger = service("pinger", "ping_url", Effect.ACTION)
    specs = [*library[0], pinger]
    graph = build_dependency_graph(specs, {"pinger": {"ping_url": "world_model"}}, {"pinger": ["ping_url"]})
    assert any(data["cross_service"] for _, target, data in graph.in_edges("pinger_ping_url", data=True))
    reachable = bridged_services(graph, specs)
    assert "pinger" not in reachable and {"crm", "files"} <= reachable
    assert not any("pinger" in p.services for p in sample_plans(graph, specs, 1, 30))


@pytest.mark.parametrize(("name", "paging"), [
    ("limit", True), ("nextToken", True), ("body_nextToken", True), ("per_page", True), ("pageSize", True),
    ("maxResults", True), ("starting_after", True), ("cursor", True),
    ("max_price", False), ("start_date", False), ("status", False), ("query", False), ("owner_email", False),
])
def test_paging_parameters_are_no_list_filters(name, paging):
    from compoworld_assets.engine.tasks.sampling import is_paging_parameter

    assert is_paging_parameter(name) is paging


def test_coverage_preference_covers_more_edges(library):
    """On six services 300 plans cover edges more than once, so the preference has something to do."""
    specs = [s for s in library[0] if s.id in ("crm", "mail", "invoicing", "helpdesk", "calendar", "payments")]
    graph = build_dependency_graph(specs)
    plain = WalkConfig(uncovered_bonus=1.0)
    covering = WalkConfig(uncovered_bonus=50.0)
    for seed in (1, 2):
        neutral = edge_coverage(graph, sample_plans(graph, specs, seed, 300, plain))
        preferred = edge_coverage(graph, sample_plans(graph, specs, seed, 300, covering))
        assert len(preferred) > len(neutral)


def test_thousand_plans_on_the_library(library):
    specs, graph = library
    plans = sample_plans(graph, specs, 11, 1000)
    assert len(plans) == 1000
    assert all(crosses_services(p) for p in plans)
    assert max(len(p.steps) for p in plans) == WalkConfig().max_length


def test_a_plan_that_deletes_what_it_created_is_not_kept():
    """create → get → delete of one record leaves no trace a rubric could check."""
    from compoworld_assets.engine.library.builder import ServiceBuilder, field
    from compoworld_assets.engine.tasks.model import ArgBinding, Plan, PlanStep
    from compoworld_assets.engine.tasks.sampling import _deletes_own_creation, _tool_index

    b = ServiceBuilder("memos", "Memos", "documents", "Memos.", "tests")
    b.entity("Memo", "memo", "A memo.", field("title"))
    b.crud("Memo", "CRD")
    specs = [b.build()]
    tools = _tool_index(build_dependency_graph(specs), specs)

    def plan(delete_key: ArgBinding) -> Plan:
        created = ArgBinding(kind="step_output", step=0, path="id", type="memos.Memo.id")
        return Plan(steps=[PlanStep(index=0, service_id="memos", tool="create_memo", args={}),
                           PlanStep(index=1, service_id="memos", tool="get_memo", args={"memo_id": created}),
                           PlanStep(index=2, service_id="memos", tool="delete_memo", args={"memo_id": delete_key})])

    assert _deletes_own_creation(plan(ArgBinding(kind="step_output", step=1, path="id", type="memos.Memo.id")), tools)
    assert not _deletes_own_creation(plan(ArgBinding(kind="user_known", value="memo_0001", type="memos.Memo.id")),
                                     tools)


def test_an_update_step_sets_a_field_of_its_record_not_another_parameter():
    """An update's drawn parameter is one its record has as a field: a path's ``owner`` or a ``dry_run``
    flag would leave the record as it was (a step the rubric cannot see)."""
    import random

    from compoworld_assets.engine.library.builder import ServiceBuilder, field
    from compoworld_assets.engine.tasks.sampling import _parameters_to_bind, _tool_index

    b = ServiceBuilder("memos", "Memos", "documents", "Memos.", "tests")
    b.entity("Memo", "memo", "A memo.", field("title"))
    b.crud("Memo", "RU")
    spec = b.build()
    update = spec.tool("update_memo")
    properties = {**update.parameter_properties(), "dry_run": {"type": "boolean"}, "owner": {"type": "string"}}
    spec = spec.model_copy(update={"tools": [
        t.model_copy(update={"parameters": {**t.parameters, "properties": properties}}) if t is update else t
        for t in spec.tools]})
    info = _tool_index(build_dependency_graph([spec]), [spec])["memos_update_memo"]
    drawn = {p for seed in range(40) for p in _parameters_to_bind(info, {}, random.Random(seed))}
    assert drawn - {info.key} == {"title"}


def test_a_create_whose_field_a_later_step_reads_is_given_that_field():
    """Left out, an optional ``email`` is stored empty and the next step would mail ``''``."""
    import random

    from compoworld_assets.engine.library.builder import ServiceBuilder, field
    from compoworld_assets.engine.tasks.sampling import _bind, _Edge, _tool_index

    b = ServiceBuilder("clients", "Clients", "crm", "Clients.", "tests")
    b.entity("Client", "cli", "A client.", field("full_name", "person_name"), field("email", "email", required=False))
    b.crud("Client", "C")
    clients = b.build()
    assert "email" not in clients.tool("create_client").required_parameters()
    from tests.engine.tasks.conftest import mailer_spec

    specs = [clients, mailer_spec()]
    tools = _tool_index(build_dependency_graph(specs), specs)
    edge = _Edge(target="mailer_create_message", key="k", parameter="to", output_path="email", type="email",
                 cross_service=True, target_service="mailer")
    plan = _bind([("clients_create_client", None), ("mailer_create_message", edge)], tools, random.Random(0))
    assert plan.steps[1].args["to"].path == "email"
    given = plan.steps[0].args["email"]
    assert given.kind == "user_known" and given.type == "email"



def hub_spec(kinds: int = 60):
    """A service with ``4 * kinds`` tools taking and giving emails and URLs (a GitHub of the corpus)."""
    from compoworld_assets.engine.library.builder import ServiceBuilder, field

    hub = ServiceBuilder("hub", "Hub", "business", "A service with a great many kinds of record.", "tests")
    for i in range(kinds):
        hub.entity(f"Kind{i}", f"k{i}", "A record.", field("title"), field("owner_email", "email"), field("link", "url"))
        hub.crud(f"Kind{i}", "CRLU")
    return hub.build()


def test_a_service_with_many_tools_does_not_draw_most_walks(library):
    """Drawn by tool, walks started in the 240-tool hub and went into it in ~60% of plans; by service, near
    its fair share."""
    from collections import Counter

    specs = [*library[0], hub_spec()]
    graph = build_dependency_graph(specs)
    for seed in (1, 2):
        plans = sample_plans(graph, specs, seed, 300)
        in_plans = Counter(s for p in plans for s in set(p.services))
        fair = sum(in_plans.values()) / len(in_plans)
        assert in_plans["hub"] <= 2 * fair, (in_plans["hub"], fair)


def test_a_round_gets_its_plans_when_small_services_run_out_of_walks(tiny_specs):
    """The shop and the notes have few distinct plans; walks drawn for services whose last walks gave nothing
    new go elsewhere instead of using up the round's attempts (219 of 300 plans, 315 of 600 before)."""
    specs = [*tiny_specs, hub_spec()]
    graph = build_dependency_graph(specs)
    for n in (300, 600):
        assert len(sample_plans(graph, specs, 1, n)) == n


def test_a_walk_refused_before_binding_takes_the_draws_binding_would_have(library):
    """Walks refused by their tools alone are not bound, yet each takes binding's share of the round's random
    stream: the rounds sampled before stay the same. Checked on every walk of a round of the built-in library."""
    import random

    from compoworld_assets.engine.tasks.sampling import (
        _bind,
        _bridges,
        _Coverage,
        _skip_binding,
        _tool_index,
        _walk,
        _weigh_edges,
    )

    specs, graph = library
    config = WalkConfig()
    tools = _tool_index(graph, specs)
    _weigh_edges(tools, config)
    starts: dict[str, list[str]] = {}
    for name, info in sorted(tools.items()):
        if info.edges:
            starts.setdefault(info.service_id, []).append(name)
    bridges, coverage, rng = _bridges(tools), _Coverage(starts), random.Random(3)
    walks = [w for w in (_walk(tools, starts, bridges, coverage, rng, config, 1)[1] for _ in range(400)) if w]
    assert sum(_draws_a_field(w, tools) for w in walks) > 20  # walks through plain updates: binding draws for them
    for index, walk in enumerate(walks):
        bound, skipped = random.Random(index), random.Random(index)
        _bind(walk, tools, bound)
        _skip_binding(walk, tools, skipped)
        assert bound.getstate() == skipped.getstate()


def _draws_a_field(walk, tools) -> bool:
    from compoworld_assets.engine.tasks.sampling import _changed_field_choices

    return any(_changed_field_choices(tools[n], {e.parameter} if e else set()) for n, e in walk)


def test_start_weights_follow_the_coverage_counts(library):
    """The start weights kept as counts change equal the weights computed from the counts at the end."""
    from compoworld_assets.engine.tasks.model import Plan, PlanStep
    from compoworld_assets.engine.tasks.sampling import _Coverage

    coverage = _Coverage(["a", "b", "c"])
    coverage.missed("a")
    coverage.missed("a")
    coverage.missed("x")  # a bridged service no walk starts in
    coverage.accept(Plan(steps=[PlanStep(index=0, service_id="b", tool="t", args={}),
                                PlanStep(index=1, service_id="c", tool="u", args={})]), [("b_t", None)])
    coverage.hit("c")
    expected = [1.0 / ((1 + coverage.services[s]) * (1 + coverage.misses[s])) for s in "abc"]
    assert coverage.start_weights == expected == [1 / 3, 1 / 2, 1 / 2]
