"""The model's rewrite of a request is kept only when it keeps every fact and reveals nothing to find."""

from types import SimpleNamespace

from compoworld_assets.engine.tasks.model import Criterion, Plan, Task
from compoworld_assets.engine.tasks.rewrite import REPORT_MARK, RequestRewriter, refusal
from compoworld_assets.engine.world_model.cache import InMemoryWorldModelCache

REQUEST = ('Today is 2026-06-01. Hi, it\'s Dana Ortiz (dana.ortiz@acme.example.com), finance lead. Omar Diaz asked '
           'us to void invoice INV-2026-0003. Please handle it under the "Invoice approval limits" document in Docs.')
REPORT = "\n\nWhen you are done, reply with a JSON object with exactly the keys needs_approval, amount_due: ..."


def _task() -> Task:
    rubric = [Criterion(id="asked", kind="state", description="", check={
        "op": "record_exists", "service": "projects", "entity": "Task", "new": True,
        "match": {"assignee_email": "bruno.novak@acme.example.com"}}),
        Criterion(id="answer_amount_due", kind="answer", description="",
                  check={"op": "answer_equals", "field": "amount_due", "value": 3120.5})]
    return Task(task_id="task_x", seed=1, domain="finance", services=["invoicing"], initial_state={},
                instruction=REQUEST + REPORT, plan=Plan(steps=[]), rubric=rubric)


def _model(text: str):
    calls = []

    def completion(**kwargs):
        calls.append(kwargs)
        return SimpleNamespace(choices=[SimpleNamespace(message=SimpleNamespace(content=text))])

    return completion, calls


GOOD = ('Today is 2026-06-01. Hi, Dana Ortiz here (dana.ortiz@acme.example.com). Omar Diaz wants invoice INV-2026-0003 '
        'voided; could you take care of it per the "Invoice approval limits" document in Docs?')


def test_a_faithful_rewrite_is_kept_and_the_report_paragraph_stays():
    completion, calls = _model(GOOD)
    revised = RequestRewriter("m", completion).revise(_task())
    assert revised.instruction == GOOD + REPORT
    assert REPORT_MARK not in calls[0]["messages"][0]["content"]  # the keys never go to the model
    assert revised.difficulty["writer"] == "m"


def test_a_rewrite_that_drops_adds_or_reveals_is_refused_with_its_reason():
    hidden = {"bruno.novak@acme.example.com", "3120.5"}
    assert refusal(REQUEST, GOOD.replace("INV-2026-0003", "the invoice"), hidden) == "drops 'inv-2026-0003'"
    assert refusal(REQUEST, GOOD + " It is due 2026-06-09.", hidden) == "adds '2026-06-09'"
    assert refusal(REQUEST, GOOD + " Record inv_0003.", hidden) == "reveals the record id 'inv_0003'"
    assert refusal(REQUEST, GOOD + " Loop in bruno.novak@acme.example.com.", hidden) == \
        "reveals 'bruno.novak@acme.example.com', which the agent must find"
    assert refusal(REQUEST, GOOD + " Bruno Novak approves.", {"bruno novak"}) == \
        "reveals 'bruno novak', which the agent must find"
    completion, _ = _model(GOOD.replace("INV-2026-0003", "it"))
    kept = RequestRewriter("m", completion).revise(_task())
    assert kept.instruction == _task().instruction
    assert kept.difficulty["writer"].startswith("template (the rewrite drops")


def test_rewrites_are_cached_by_what_was_asked():
    cache = InMemoryWorldModelCache()
    completion, calls = _model(GOOD)
    first = RequestRewriter("m", completion, cache).revise(_task())
    again = RequestRewriter("m", completion, cache).revise(_task())
    assert first == again and len(calls) == 1


def test_the_task_factory_keeps_checked_rewrites_and_refuses_the_rest_through_litellm():
    import litellm

    from compoworld_assets.engine.rollout.library_world import build_library
    from compoworld_assets.engine.tasks.instructions import LLMWriter
    from compoworld_assets.engine.tasks.pipeline import GenerationConfig, generate_tasks

    library = build_library(("invoicing", "mail", "docs", "projects", "helpdesk"))
    specs, built = [b.spec for b in library.builds.values()], library.built
    config = GenerationConfig(workflow_share=1.0)
    vague = LLMWriter("openai/mock", completion=litellm.completion, mock_response="Please sort this out today.")
    refused, _ = generate_tasks(specs, built, seed=2, n=4, config=config, writer=vague)
    assert refused and all(t.difficulty["writer"].startswith("template (the rewrite drops") for t in refused)

    def polite(**kwargs):
        text = kwargs["messages"][0]["content"].split("\n\n", 1)[1]
        return SimpleNamespace(choices=[SimpleNamespace(message=SimpleNamespace(
            content="Quick one. " + text.replace("Thanks", "Many thanks")))])

    kept, _ = generate_tasks(specs, built, seed=2, n=4, config=config, writer=LLMWriter("polite", completion=polite))
    assert [t.task_id for t in kept] == [t.task_id for t in refused]
    assert all(t.difficulty["writer"] == "polite" and t.instruction.startswith("Quick one. ") for t in kept)
    assert [t.rubric for t in kept] == [t.rubric for t in refused]  # the rubric never depends on the prose
