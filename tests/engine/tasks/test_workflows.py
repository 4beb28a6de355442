"""Workflow tasks: parts read from specs, each pattern built into a gated task whose decision the data fixes."""

import re

import pytest

from compoworld_assets.engine.backends import BackendRecipe, LLMSettings
from compoworld_assets.engine.library import builtin_specs
from compoworld_assets.engine.library.builder import ServiceBuilder, field
from compoworld_assets.engine.rollout.library_world import build_library
from compoworld_assets.engine.runtime.executor import SandboxLimits
from compoworld_assets.engine.tasks.gate import self_test
from compoworld_assets.engine.tasks.instantiate import TaskConfig
from compoworld_assets.engine.tasks.pipeline import task_world
from compoworld_assets.engine.tasks.plan_exec import replay_plan
from compoworld_assets.engine.tasks.realism import properties, summary
from compoworld_assets.engine.tasks.rubrics import evaluate_rubric, rubric_score
from compoworld_assets.engine.tasks.workflows.build import WorkflowDraft
from compoworld_assets.engine.tasks.workflows.casting import cast_library
from compoworld_assets.engine.tasks.workflows.drafting import combinations, draft_workflows
from compoworld_assets.engine.tasks.workflows.instantiate import instantiate_workflow
from compoworld_assets.engine.tasks.workflows.patterns import PATTERNS

SERVICES = ("invoicing", "mail", "docs", "projects", "helpdesk", "travel")


@pytest.fixture(scope="module")
def world():
    library = build_library(SERVICES)
    built = library.built
    pool = BackendRecipe(LLMSettings(), SandboxLimits()).runtime_pool()
    yield built, {s: b.spec for s, b in built.items()}, pool
    pool.close()


def _make(world, draft: WorkflowDraft, seed: int = 5):
    built, specs, pool = world
    return instantiate_workflow(draft, specs, seed, "train", lambda t: task_world(t, built, pool), TaskConfig())


def _drafts(world, pattern: str, level: str, n: int = 12) -> list[WorkflowDraft]:
    built, specs, _ = world
    drafts = draft_workflows(specs, {s: b.implementation for s, b in built.items()}, 3, 160)
    return [d for d in drafts if d.pattern == pattern and d.level == level][:n]


def _invented_service():
    """A service no pattern names: a fleet's work orders, with an amount, a status and an action."""
    b = ServiceBuilder("fleetdesk", "Fleet Desk", "logistics", "Work orders for the vehicle fleet.", "fleetdesk")
    b.entity("WorkOrder", "wo", "A repair job on a vehicle.",
             field("reference"), field("driver_email", "email"), field("driver_name", "person_name"),
             field("estimate", "money"), field("opened_on", "date"),
             field("state", enum=["new", "approved", "in_repair", "finished", "scrapped"]))
    b.crud("WorkOrder", "CRL")
    b.update_as("approve_work_order", "WorkOrder", "Approve a work order.", sets={"state": "approved"})
    b.update_as("scrap_work_order", "WorkOrder", "Scrap a work order.", sets={"state": "scrapped"})
    return b.build()


def test_parts_are_read_from_fields_and_effects_not_from_names():
    spec = _invented_service()
    cast = cast_library({spec.id: spec}, {spec.id: {t.name: "code" for t in spec.tools}})
    kinds = {(c.entity, c.action): c for c in cast.cases}
    approve = kinds[("WorkOrder", "approve_work_order")]
    assert (approve.label, approve.status, approve.target, approve.amount, approve.contact, approve.contact_name) == \
        ("reference", "state", "approved", "estimate", "driver_email", "driver_name")
    assert approve.ready == ("new",)  # a lifecycle's earlier live status, not a finished or scrapped one
    assert kinds[("WorkOrder", "scrap_work_order")].ready == ("new", "approved", "in_repair")
    # a tool served by the world model plays no part
    assert not cast_library({spec.id: spec}, {spec.id: {}}).cases


def test_every_pattern_fits_the_library_and_its_drafts_cover_services(world):
    built, specs, _ = world
    cast = cast_library(specs, {s: b.implementation for s, b in built.items()})
    assert all(combinations(p, cast, specs) for p in PATTERNS)
    drafts = draft_workflows(specs, {s: b.implementation for s, b in built.items()}, 3, 60)
    assert {d.pattern for d in drafts} == {p.name for p in PATTERNS}
    assert len({d.plan_hash() for d in drafts}) == 60
    assert {d.case.service for d in drafts} >= {"invoicing", "helpdesk", "projects", "travel"}


@pytest.mark.parametrize("pattern", [p.name for p in PATTERNS])
@pytest.mark.parametrize("level", ["easy", "medium", "hard"])
def test_each_pattern_makes_tasks_that_pass_the_gate(world, pattern, level):
    built, _specs, pool = world
    drafts = _drafts(world, pattern, level, 3)
    assert drafts
    for draft in drafts:
        task = _make(world, draft)
        result = self_test(task, task_world(task, built, pool))
        assert result.passed, result.reasons
        props = properties(task)
        assert props.no_chain_few_ids and props.person and props.decision and props.reference_handed
        assert props.trap_named in (None, False) and not props.defects
        assert task.difficulty["pattern"] == pattern and "decision" in task.capabilities


def test_priority_pick_acts_on_the_top_record_the_rules_allow(world):
    built, _specs, pool = world
    draft = next(d for d in _drafts(world, "priority_pick", "medium") if d.case.amount and d.rulebook)
    task = _make(world, draft)
    case = draft.case
    rows = task.initial_state.services[case.service].tables[case.entity]
    frozen = {c.check["id"] for c in task.rubric if c.check.get("op") == "trap_untouched"}
    moved = [c.check["id"] for c in task.rubric if c.check.get("op") == "field_equals"]
    listed = task.plan.steps[1].args.get(case.status)
    ready = [r for r in rows.values() if listed is None or r[case.status] == listed.value]
    if any(isinstance(r.get(case.amount), float) for r in ready) and "largest" in task.instruction:
        allowed = sorted((r for r in ready if r["id"] not in frozen), key=lambda r: -r[case.amount])
        assert moved == [allowed[0]["id"]]
        # the frozen record ranks first: the obvious plan acts on it, and the rubric gives it nothing
        assert max(ready, key=lambda r: r[case.amount])["id"] in frozen
    [trap] = task.traps
    _, final, answer = replay_plan(task.model_copy(update={"plan": trap.wrong_plan}), task_world(task, built, pool))
    assert rubric_score(task, evaluate_rubric(task, final, answer)) == 0.0


def test_approval_gate_takes_both_routes_and_forbids_the_other(world):
    built, _specs, pool = world
    routes = set()
    for draft in _drafts(world, "approval_gate", "easy") + _drafts(world, "approval_gate", "medium"):
        task = _make(world, draft)
        needs = task.report_sources["needs_approval"].value
        routes.add(needs)
        [trap] = task.traps
        criterion = next(c for c in task.rubric if c.id == trap.criterion_id)
        assert criterion.check["op"] == ("trap_untouched" if needs else "no_new_record")
        _, final, answer = replay_plan(task.model_copy(update={"plan": trap.wrong_plan}), task_world(task, built, pool))
        assert rubric_score(task, evaluate_rubric(task, final, answer)) == 0.0
        # the limit lives in the world: the instruction only points at the policy
        limit = re.search(r"[\d,]+\.\d\d", trap.rule).group(0)
        assert limit not in task.instruction
        assert any(limit in str(r.get(draft.rulebook.body)) for r in
                   task.initial_state.services[draft.rulebook.service].tables[draft.rulebook.entity].values())
    assert routes == {True, False}


def test_a_latest_wins_policy_has_an_older_version_that_routes_otherwise(world):
    draft = next(d for d in _drafts(world, "approval_gate", "medium") if d.rulebook and d.rulebook.stamp)
    task = _make(world, draft)
    book = draft.rulebook
    quoted = set(re.findall(r'"([^"]+)"', task.instruction))  # the policy is named by its title, in quotes
    versions = [r for r in task.initial_state.services[book.service].tables[book.entity].values()
                if r[book.title] in quoted]
    assert len(versions) == 2
    old, new = sorted(versions, key=lambda r: r[book.stamp])
    assert old[book.body] != new[book.body] and "most recent version" in task.instruction


def test_messages_are_the_agents_own_words_checked_for_the_facts(world):
    built, _specs, pool = world
    draft = _drafts(world, "priority_pick", "easy")[0]
    task = _make(world, draft)
    message_step = task.plan.steps[-1]
    assert all(message_step.args[n].free for n in ("subject", "body"))
    sent = next(c for c in task.rubric if c.id.startswith("notified_"))
    reworded = task.model_copy(deep=True)
    reworded.plan.steps[-1].args["body"] = reworded.plan.steps[-1].args["body"].model_copy(
        update={"value": "Quick update on " + sent.check["mentions"]["values"][0] + ": done."})
    _, final, answer = replay_plan(reworded, task_world(task, built, pool))
    assert rubric_score(task, evaluate_rubric(task, final, answer)) == 1.0
    silent = reworded.model_copy(deep=True)
    silent.plan.steps[-1].args["body"] = silent.plan.steps[-1].args["body"].model_copy(update={"value": "Done."})
    silent.plan.steps[-1].args["subject"] = silent.plan.steps[-1].args["subject"].model_copy(update={"value": "Hi"})
    _, final, answer = replay_plan(silent, task_world(task, built, pool))
    assert rubric_score(task, evaluate_rubric(task, final, answer)) < 1.0


def test_same_draft_and_seed_give_the_same_task(world):
    draft = _drafts(world, "sweep", "hard")[0]
    assert _make(world, draft).model_dump_json() == _make(world, draft).model_dump_json()
    assert _make(world, draft).model_dump_json() != _make(world, draft, seed=6).model_dump_json()


def test_realism_summary_tells_a_step_chain_from_a_request(world):
    task = _make(world, _drafts(world, "sweep", "medium")[0])
    chain = task.model_copy(update={"instruction": "Today is 2026-06-01. Void invoice inv_0003. Then send an email "
                                                   "to x@y.example.com about inv_0004."})
    good, bad = summary([task]), summary([chain])
    assert good["no_chain_and_at_most_one_id"] == 1.0 and good["speaks_as_a_person"] == 1.0
    assert bad["no_chain_and_at_most_one_id"] == 0.0 and bad["speaks_as_a_person"] == 0.0


def _witness_service(sid: str, done: str):
    """Another service whose records refer to a purchase of ``shopx`` and end in ``done``."""
    b = ServiceBuilder(sid, sid.title(), "finance", f"Records of {sid}.", sid)
    b.entity("Record", "rec", "One record about a purchase.", field("purchase_id", "shopx.Purchase.id"),
             field("state", enum=["open", done]))
    b.crud("Record", "L")
    return b.build()


def test_a_reconciliation_pairs_a_case_only_with_a_witness_recording_the_same_outcome():
    """A payment that succeeded settles a purchase's payment, a parcel that arrived its delivery; neither says the
    other happened, and a survey that was completed says neither."""
    b = ServiceBuilder("shopx", "Shop X", "commerce", "Purchases.", "shopx")
    b.entity("Purchase", "pur", "A purchase.", field("reference"), field("buyer_email", "email"),
             field("amount", "money"), field("state", enum=["pending", "shipped", "paid", "delivered"]))
    b.crud("Purchase", "CRL")
    b.update_as("settle_purchase", "Purchase", "Mark a purchase as paid.", sets={"state": "paid"})
    b.update_as("deliver_purchase", "Purchase", "Mark a purchase as delivered.", sets={"state": "delivered"})
    mail = next(s for s in builtin_specs() if s.id == "mail")  # where the summary goes
    specs = {s.id: s for s in (b.build(), _witness_service("payx", "succeeded"), _witness_service("courierx", "delivered"),
                               _witness_service("surveyx", "completed"), mail)}
    cast = cast_library(specs, {sid: {t.name: "code" for t in s.tools} for sid, s in specs.items()})
    reconcile = next(p for p in PATTERNS if p.name == "reconcile")
    pairs = {(case.action, witness.service) for case, _, _, _, witness, _ in combinations(reconcile, cast, specs)}
    assert pairs == {("settle_purchase", "payx"), ("deliver_purchase", "courierx")}


def _cluster_service():
    """An API no pattern names, shaped as real ones are: clusters under projects, keys nobody writes down."""
    b = ServiceBuilder("clusterx", "Cluster X", "it", "Managed clusters.", "clusterx")
    b.entity("Project", "prj", "A project.", field("name"), field("owner_email", "email"))
    b.entity("Cluster", "cl", "A cluster.", field("name"), field("region", enum=["eu-west", "us-east"]),
             field("nodes", "integer"), field("project_id", "clusterx.Project.id"))
    b.entity("ApiKey", "key", "An API key.", field("label"), field("secret_key"))
    b.entity("AddTag", "tag", "Tags added to a cluster.", field("name"))
    b.crud("Project", "L")
    b.crud("Cluster", "CRL")
    b.crud("ApiKey", "C")
    b.crud("AddTag", "C")
    spec = b.build()
    create = spec.tool("create_cluster")  # a protocol's constant, as query-style APIs take it
    create.parameters["properties"]["Action"] = {"type": "string", "enum": ["CreateCluster"]}
    create.parameters["required"].append("Action")
    return spec


def test_a_set_up_is_any_create_whose_values_a_person_can_write():
    spec = _cluster_service()
    cast = cast_library({spec.id: spec}, {spec.id: {t.name: "code" for t in spec.tools}})
    made = {p.tool: p for p in cast.provisions}
    cluster = made["create_cluster"]
    assert set(cluster.parameters) == {"name", "region", "nodes"} and cluster.label == "name"
    assert [(p.parameter, p.entity, p.lister, p.label) for p in cluster.parents] == \
        [("project_id", "Project", "list_projects", "name")]
    assert cluster.implicit == ("Action",)  # its only value goes with the call, unsaid
    assert "create_api_key" not in made  # a secret is not something a request states
    assert "create_add_tag" not in made  # an operation's name, not a thing to ask for
    assert not cast_library({spec.id: spec}, {spec.id: {}}).provisions  # the world model plays no part


def test_a_fulfilled_request_is_read_from_the_queue_not_from_the_instruction(world):
    built, _specs, pool = world
    draft = _drafts(world, "fulfil", "medium", 1)[0]
    task = _make(world, draft)
    made = next(c for c in task.rubric if c.id.startswith("set_up_"))
    body = " ".join(str(r) for r in task.initial_state.services[draft.case.service].tables[draft.case.entity].values())
    stated = [str(v) for k, v in made.check["match"].items() if k in draft.provision.parameters and isinstance(v, str)]
    assert stated and all(v in body for v in stated)  # the ticket says what to set up...
    assert not any(v in task.instruction for v in stated)  # ...the person handing it over does not
    assert [t.kind for t in task.traps] == ["not_ready"]
    _, final, answer = replay_plan(task.model_copy(update={"plan": task.traps[0].wrong_plan}), task_world(task, built, pool))
    failed = {r.id for r in evaluate_rubric(task, final, answer) if not r.passed}
    assert task.traps[0].criterion_id in failed
