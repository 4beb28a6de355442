import xml.etree.ElementTree as ET

import pytest

from compoworld_assets.engine.library import builtin_specs
from compoworld_assets.engine.tasks.graph import (
    IDENTIFYING_TYPES,
    build_dependency_graph,
    graph_from_tables,
    graph_statistics,
    graph_tables,
    service_graph_svg,
    service_level_graph,
)
from compoworld_assets.engine.tasks.pipeline import generate_tasks
from compoworld_assets.engine.tasks.sampling import WalkConfig, sample_plans
from compoworld_assets.engine.types import is_entity_ref


def _edges(graph, source, target):
    return [d for _, v, d in graph.out_edges(source, data=True) if v == target]


def _feeds(graph, source, target, parameter):
    return [d for d in _edges(graph, source, target) if d["parameter"] == parameter]


def test_type_edge_across_services_carries_email(tiny_specs):
    graph = build_dependency_graph(tiny_specs)
    edges = _edges(graph, "shop_get_customer", "mailer_create_message")
    assert [(e["kind"], e["type"], e["parameter"], e["output_path"], e["cross_service"]) for e in edges] == [
        ("type", "email", "to", "email", True)]


@pytest.mark.parametrize(("pattern", "joined"), [
    (r"^[^@]+@[^@]+\.[a-z]+$", True),  # any email fits: the producer's email flows in
    (r"^[a-z]+@billing\.corp\.internal$", False),  # one mailbox domain: no producer's email would fit
    ("(unclosed", True),  # a pattern Python cannot read constrains nothing
])
def test_a_parameter_pattern_narrower_than_its_type_takes_no_edge(tiny_specs, pattern, joined):
    mailer = next(s for s in tiny_specs if s.id == "mailer")
    tool = mailer.tool("create_message")
    props = {**tool.parameter_properties(), "to": {**tool.parameter_properties()["to"], "pattern": pattern}}
    narrowed = tool.model_copy(update={"parameters": {**tool.parameters, "properties": props}})
    specs = [s if s.id != "mailer" else s.model_copy(update={"tools": [
        narrowed if t.name == "create_message" else t for t in s.tools]}) for s in tiny_specs]
    graph = build_dependency_graph(specs)
    assert bool(_edges(graph, "shop_get_customer", "mailer_create_message")) == joined


def test_entity_reference_type_edge_within_a_service(tiny_specs):
    graph = build_dependency_graph(tiny_specs)
    edges = _edges(graph, "shop_create_customer", "shop_create_order")
    assert any(e["kind"] == "type" and e["parameter"] == "customer_id" and e["output_path"] == "id"
               and e["type"] == "shop.Customer.id" and not e["cross_service"] for e in edges)


def test_state_edge_from_a_write_to_a_reader_of_the_same_entity(tiny_specs):
    graph = build_dependency_graph(tiny_specs)
    kinds = {(e["kind"], e["parameter"]) for e in _edges(graph, "shop_create_order", "shop_get_order")}
    assert ("state", "order_id") in kinds
    listing = [e for e in _edges(graph, "shop_pay_order", "shop_list_orders") if e["kind"] == "state"]
    assert listing and listing[0]["parameter"] == listing[0]["output_path"]


def test_uninformative_types_make_no_edges(tiny_specs):
    graph = build_dependency_graph(tiny_specs)
    types = {d["type"] for _, _, d in graph.edges(data=True)}
    assert "date" not in types and "money" not in types
    assert all(is_entity_ref(t) or t in IDENTIFYING_TYPES for t in types)
    assert not _edges(graph, "notes_get_note", "mailer_create_message")


def test_tables_statistics_and_picture(tiny_specs):
    graph = build_dependency_graph(tiny_specs)
    nodes, edges = graph_tables(graph)
    assert nodes.height == graph.number_of_nodes() == sum(len(s.tools) for s in tiny_specs)
    assert edges.height == graph.number_of_edges()
    stats = graph_statistics(graph)
    assert stats["services"] == 3 and stats["cross_service_edges"] == edges["cross_service"].sum()
    assert 0 < stats["cross_service_share"] < 1
    services = service_level_graph(graph)
    assert services.has_edge("shop", "mailer") and not services.has_edge("notes", "shop")
    svg = ET.fromstring(service_graph_svg(graph, per_service=1))
    namespace = "{http://www.w3.org/2000/svg}"
    assert len(svg.findall(f"{namespace}circle")) == 3
    arrows = [path.find(f"{namespace}title").text for path in svg.findall(f"{namespace}path[@marker-end]")]
    assert len(arrows) == len({a for a, _ in services.edges()}), "one arrow per service that feeds another"
    assert any(a.startswith(f"shop → mailer: {services['shop']['mailer']['weight']} tool edges") for a in arrows)
    assert service_graph_svg(graph) == service_graph_svg(build_dependency_graph(tiny_specs))


def test_the_stored_tables_give_back_the_graph_and_its_walks():
    """Tasks walk the stored ``dependency_graph``: read back, it must sample exactly the plans the built graph does."""
    specs = builtin_specs()
    graph = build_dependency_graph(specs)
    stored = graph_from_tables(*graph_tables(graph))
    assert sorted(stored.nodes(data=True)) == sorted(graph.nodes(data=True))
    assert sorted(stored.edges(keys=True, data=True), key=repr) == sorted(graph.edges(keys=True, data=True), key=repr)
    walk = WalkConfig(min_length=2, max_length=5, min_services=2)
    assert [p.plan_hash() for p in sample_plans(stored, specs, 11, 120, walk)] == [
        p.plan_hash() for p in sample_plans(graph, specs, 11, 120, walk)]


def test_a_graph_naming_unbuilt_services_is_refused(tiny_specs, tiny_built):
    graph = build_dependency_graph(tiny_specs)
    built = {sid: b for sid, b in tiny_built.items() if sid != "notes"}
    with pytest.raises(ValueError, match="not built: notes"):
        generate_tasks(tiny_specs, built, seed=1, n=2, graph=graph)


def test_world_model_tools_are_marked(tiny_specs):
    implementation = {"shop": {"get_customer": "world_model"}}
    graph = build_dependency_graph(tiny_specs, implementation)
    assert graph.nodes["shop_get_customer"]["code"] is False
    assert graph.nodes["shop_create_order"]["code"] is True
    assert graph.nodes["mailer_create_message"]["code"] is True


def test_roles_block_a_nonsensical_edge():
    """A candidate's email never becomes a payslip's employee email; an employee's does, and a
    role-less recipient (an email's ``to``) takes anyone's."""
    from compoworld_assets.engine.library import builtin_spec

    graph = build_dependency_graph([builtin_spec(s) for s in ("recruiting", "hr", "payroll", "mail")])
    assert not _feeds(graph, "recruiting_get_candidate", "payroll_create_payslip", "employee_email")
    employee = _feeds(graph, "hr_get_employee", "payroll_create_payslip", "employee_email")
    assert employee and "employee" in employee[0]["roles"]
    assert _feeds(graph, "recruiting_get_candidate", "mail_send_email", "to")


def test_a_person_lookup_takes_the_people_its_records_are_seeded_with():
    """A list filter on a role-less person field finds only the pool its records are seeded from: an
    employee's email never filters the mailbox's ``to`` (seeded with customers), a contact's does; a new
    message still goes to anyone."""
    from compoworld_assets.engine.library import builtin_spec

    graph = build_dependency_graph([builtin_spec(s) for s in ("crm", "hr", "mail")])
    assert not _feeds(graph, "hr_get_employee", "mail_list_messages", "to")
    customer = _feeds(graph, "crm_get_contact", "mail_list_messages", "to")
    assert customer and "Message records are seeded with customers" in customer[0]["roles"]
    assert _feeds(graph, "hr_get_employee", "mail_send_email", "to")


def test_a_url_made_for_its_record_is_found_only_among_its_entity_records():
    """Seeded URLs other than company websites are made per record, so a URL of another service or of
    another entity never finds one; the entity's own URLs do, and websites find websites."""
    from compoworld_assets.engine.library.builder import ServiceBuilder, field

    b = ServiceBuilder("links", "Links", "documents", "Saved links.", "tests")
    b.entity("Link", "lnk", "A saved link.", field("target", "url"), field("website", "url"), field("title"))
    b.entity("Feed", "feed", "A feed.", field("source", "url"), field("title"))
    b.crud("Link", "CR")
    b.crud("Feed", "R")
    b.list_as("list_links", "Link", "List saved links.", ("target", "website"))
    pages = ServiceBuilder("pages", "Pages", "documents", "Web pages.", "tests")
    pages.entity("Page", "pg", "A page.", field("address", "url"), field("website", "url"), field("title"))
    pages.crud("Page", "CRL")
    graph = build_dependency_graph([b.build(), pages.build()])
    into = {(source, d["parameter"], d["output_path"]) for source, target, d in graph.edges(data=True)
            if target == "links_list_links" and d["kind"] == "type"}
    assert ("pages_get_page", "target", "address") not in into
    assert ("links_get_feed", "target", "source") not in into
    assert ("links_get_link", "target", "target") in into
    assert ("pages_get_page", "website", "website") in into
    assert not any(parameter == "website" and path == "address" for _, parameter, path in into)
    assert ("links_get_link", "target", "website") not in into  # another field of the same record


def test_reportable_path_is_a_scalar_field_of_the_result_required_and_typed_first(tiny_specs):
    from compoworld_assets.engine.tasks.graph import reportable_path
    from compoworld_assets.engine.types import TYPE_KEY

    tool = tiny_specs[0].tools[0]

    def returning(schema):
        return tool.model_copy(update={"returns": schema})

    scalars = {"type": "object", "required": ["count"], "properties": {
        "count": {"type": "integer"}, "link": {"type": "string", TYPE_KEY: "url"}, "note": {"type": "string"}}}
    assert reportable_path(returning(scalars)) == "count", "required before optional"
    assert reportable_path(returning({**scalars, "required": []})) == "link", "then shared-typed"
    assert reportable_path(returning({"type": "object", "properties": {
        "items": {"type": "array", "items": {"type": "string"}},
        "maybe": {"anyOf": [{"type": "string"}, {"type": "null"}]}}})) is None, "no lists, no nullable fields"
    assert reportable_path(returning({"allOf": [{"type": "object", "properties": {"uri": {"allOf": [
        {"type": "string"}, {"description": "where"}]}}}]})) == "uri"
    assert reportable_path(returning({})) is None


def test_a_dense_type_keeps_a_bounded_sample_of_its_edges(monkeypatch):
    """Above DENSE_PAIRS a type's edges are sampled: a subset of the exact ones (roles and the other
    rules still hold), at most ``fanout`` drawn per producing tool and per consumer parameter, every
    tool that had such an edge keeps one, and the draw does not depend on the order of the specs."""
    from compoworld_assets.engine.library import builtin_spec
    from compoworld_assets.engine.tasks import graph as dependency_graph

    specs = [builtin_spec(s) for s in ("crm", "hr", "mail", "recruiting", "payroll", "calendar", "helpdesk")]

    def type_edges(graph):
        return {(u, v, d["parameter"], d["output_path"]) for u, v, d in graph.edges(data=True) if d["kind"] == "type"}

    exact_graph = build_dependency_graph(specs, fanout=None)
    exact = type_edges(exact_graph)
    monkeypatch.setattr(dependency_graph, "DENSE_PAIRS", 0)
    sampled_graph = build_dependency_graph(specs, fanout=2)
    sampled = type_edges(sampled_graph)
    assert graph_statistics(exact_graph)["sampled_types"] == []
    assert "email" in graph_statistics(sampled_graph)["sampled_types"]
    assert sampled < exact
    assert sampled == type_edges(build_dependency_graph(list(reversed(specs)), fanout=2))
    pairs = dependency_graph.type_pairs(specs)
    assert len(sampled) <= sum(2 * (outputs + parameters) for outputs, parameters in pairs.values())
    for side in (0, 1):  # every source that had a type edge keeps one, and every target parameter
        assert {e[side] for e in sampled} == {e[side] for e in exact}
