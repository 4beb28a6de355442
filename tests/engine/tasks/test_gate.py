import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compoworld_assets.engine.canonical import content_hash
from compoworld_assets.engine.runtime.state import ServiceState, WorldState
from compoworld_assets.engine.tasks.gate import _Outcome, mutated_value, self_test
from compoworld_assets.engine.tasks.instantiate import TaskConfig, instantiate_task
from compoworld_assets.engine.tasks.model import ArgBinding, Criterion
from compoworld_assets.engine.tasks.pipeline import generate_tasks


@pytest.fixture
def email_task(email_plan, tiny_built, runtime_for):
    return instantiate_task(email_plan, tiny_built, 3, "train", runtime_for,
                            config=TaskConfig(min_distractors=1))


def test_good_task_passes_the_gate(email_task, runtime_for):
    result = self_test(email_task, runtime_for(email_task))
    assert result.passed, result.reasons
    assert result.scores["do_nothing"] == 0 and result.scores["claim_only"] == 0
    assert result.scores["gold"] == 1
    assert result.scores["mutations_caught"] == 1.0


def test_rubric_of_only_negative_criteria_is_quarantined(email_task, runtime_for):
    broken = email_task.model_copy(update={"rubric": [c for c in email_task.rubric if c.kind == "negative"]})
    result = self_test(broken, runtime_for(broken))
    assert not result.passed
    assert any("no state or answer criterion" in r for r in result.reasons)


def test_wrong_expected_answer_is_quarantined(email_task, runtime_for):
    rubric = [c if c.kind != "answer" else c.model_copy(update={"check": {**c.check, "value": "msg_0001"}})
              for c in email_task.rubric]
    broken = email_task.model_copy(update={"rubric": rubric})
    result = self_test(broken, runtime_for(broken))
    assert not result.passed and result.scores["gold"] < 1
    assert any(r.startswith("gold scores") for r in result.reasons)


def test_rubric_blind_to_the_email_body_lets_a_mutation_through(email_task, runtime_for):
    def loosen(c: Criterion) -> Criterion:
        if c.check["op"] != "record_exists":
            return c
        return c.model_copy(update={"check": {**c.check, "match": {k: v for k, v in c.check["match"].items()
                                                                    if k != "body"}}})

    broken = email_task.model_copy(update={"rubric": [loosen(c) for c in email_task.rubric]})
    result = self_test(broken, runtime_for(broken))
    assert not result.passed
    assert any("mutation not caught" in r and "body" in r for r in result.reasons)


def test_criterion_passing_on_the_initial_state_is_quarantined(email_task, runtime_for):
    customer = email_task.plan.steps[0].args["customer_id"].value
    always = Criterion(id="customer_exists", kind="state", description="customer exists",
                       check={"op": "field_equals", "service": "shop", "entity": "Customer", "id": customer,
                              "fields": {}})
    broken = email_task.model_copy(update={"rubric": email_task.rubric + [always]})
    result = self_test(broken, runtime_for(broken))
    assert not result.passed and result.scores["do_nothing"] > 0


def test_mutated_values_differ_and_keep_their_kind(email_task):
    assert mutated_value("2026-06-01", ArgBinding(kind="constant", type="date"), email_task) == "2026-06-02"
    assert mutated_value("a@b.example.com", ArgBinding(kind="constant", type="email"), email_task) == \
        "other.a@b.example.com"
    ref = ArgBinding(kind="user_known", type="shop.Customer.id")
    other = mutated_value("cus_0001", ref, email_task)
    assert other != "cus_0001" and other in email_task.initial_state.services["shop"].tables["Customer"]
    assert mutated_value(True, ArgBinding(kind="constant"), email_task) is False


def test_pipeline_on_the_tiny_world(tiny_specs, tiny_built, pool):
    tasks, quarantined = generate_tasks(tiny_specs, tiny_built, seed=4, n=6, pool=pool)
    assert tasks and len(tasks) + len(quarantined) == 6
    for task in tasks:
        assert task.rubric and task.instruction and len(task.services) >= 2
        assert "cross-env-data-flow" in task.capabilities
    assert all(q.reason for q in quarantined)


def test_a_replay_from_a_checkpoint_ends_where_a_replay_from_the_start_does(email_task, runtime_for):
    """The gate replays mutations of step k from the gold run's checkpoint before k; that must be the
    same outcome (state, answer, the calls from k on) as replaying the whole plan with the mutation."""
    from compoworld_assets.engine.tasks.plan_exec import Override, execute_plan, replay_plan

    runtime = runtime_for(email_task)
    checkpoints = []
    calls, final, answer = execute_plan(email_task, runtime, checkpoints)
    assert [c.step for c in checkpoints] == [s.index for s in email_task.plan.steps]
    assert checkpoints[0].results == () and len(checkpoints[-1].results) == len(calls) - 1
    for step in email_task.plan.steps:
        start = checkpoints[step.index]
        for name in sorted(step.args):
            changed = mutated_value(calls[step.index].arguments.get(name), step.args[name], email_task)
            for kwargs in ({"skip": step.index}, {"override": Override(step.index, name, changed)}):
                whole = replay_plan(email_task, runtime, **kwargs)
                resumed = replay_plan(email_task, runtime, start=start, **kwargs)
                assert resumed[1] == whole[1] and resumed[2] == whole[2]
                assert resumed[0] == whole[0][step.index:]
    assert replay_plan(email_task, runtime, start=checkpoints[-1])[1:] == (final, answer)


_RECORDS = st.dictionaries(st.sampled_from(["r1", "r2"]), st.fixed_dictionaries(
    {"n": st.one_of(st.integers(0, 2), st.floats(0, 2, allow_nan=False), st.booleans()), "s": st.sampled_from(["a", "b"])}),
    max_size=2)
_SERVICES = st.dictionaries(st.sampled_from(["crm", "mail"]), _RECORDS, max_size=2)


def _world(services: dict) -> WorldState:
    return WorldState(services={sid: ServiceState(service_id=sid, tables={"Row": rows, "Other": {"o1": {"n": 1}}},
                                                  counters={"Row": len(rows)})
                                for sid, rows in services.items()})


@settings(max_examples=300, deadline=None)
@given(gold=_SERVICES, other=_SERVICES, gold_answer=st.dictionaries(st.just("x"), st.integers(0, 1)),
       answer=st.dictionaries(st.just("x"), st.integers(0, 1)), share=st.booleans(), share_tables=st.booleans())
def test_outcomes_compare_as_their_content_hashes_do(gold, other, gold_answer, answer, share, share_tables):
    """The gate's outcome comparison (service by service and table by table, skipping the very same objects) agrees
    with comparing the hashes of the whole final worlds and answers: ``1``, ``1.0`` and ``True`` stay different
    values."""
    gold_world, world = _world(gold), _world(other)
    if share:  # a service the replay did not change is the very object the gold run ended with
        world.services.update({sid: state for sid, state in gold_world.services.items() if sid in world.services})
    if share_tables:  # so is a table no step after the replay's checkpoint changed
        for sid, state in world.services.items():
            if sid in gold_world.services and state is not gold_world.services[sid]:
                state.tables["Other"] = gold_world.services[sid].tables["Other"]
    by_hash = content_hash([gold_world.content_hash(), gold_answer]) == content_hash([world.content_hash(), answer])
    assert _Outcome(gold_world, gold_answer).same(world, answer) == by_hash


def test_a_read_nothing_uses_is_not_mutated_and_the_verdict_is_the_same(email_task, runtime_for, monkeypatch):
    """A look-up whose result nothing reads (a step added before the plan) cannot change the outcome: with the
    specs' effects the gate skips its mutations, without them it replays them and finds nothing; same verdict."""
    from compoworld_assets.engine.tasks import gate
    from compoworld_assets.engine.tasks.model import Plan, PlanStep

    def shifted(binding: ArgBinding) -> ArgBinding:
        return binding.model_copy(update={"step": binding.step + 1}) if binding.kind == "step_output" else binding

    steps = [PlanStep(index=0, service_id="shop", tool="list_customers", args={})] + [
        s.model_copy(update={"index": s.index + 1, "args": {n: shifted(b) for n, b in s.args.items()}})
        for s in email_task.plan.steps]
    task = email_task.model_copy(update={"plan": Plan(steps=steps), "report_sources": {
        k: shifted(b) for k, b in email_task.report_sources.items()}})
    replays = []
    real = gate.replay_plan
    monkeypatch.setattr(gate, "replay_plan", lambda *a, **k: replays.append(k.get("skip")) or real(*a, **k))
    full = self_test(task, runtime_for(task))
    tried = len(replays)
    replays.clear()
    lean = self_test(task, runtime_for(task), read_only=lambda step: step.tool.startswith(("list_", "get_")))
    assert full.passed and lean.passed and full.scores == lean.scores
    assert tried - len(replays) == 1 and 0 not in replays, "only the unread listing's drop is left out"
