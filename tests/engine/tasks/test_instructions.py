from types import SimpleNamespace

import pytest

from compoworld_assets.engine.tasks.instantiate import draft_task
from compoworld_assets.engine.tasks.instructions import LLMWriter, TemplateWriter, stated_values


@pytest.fixture
def draft(email_plan, tiny_specs):
    return draft_task(email_plan, {s.id: s for s in tiny_specs}, seed=3)


def test_template_states_what_the_user_knows_but_not_intermediate_values(draft):
    text = draft.instruction
    customer = draft.plan.steps[0].args["customer_id"].value
    email = draft.initial_state.services["shop"].tables["Customer"][customer]["email"]
    assert customer in text and "Your order" in text and "message_id" in draft.answer_form()
    assert email not in text
    assert set(stated_values(draft)) == {customer, "Your order", "Thanks for shopping with us", "2026-06-01"}


def test_user_known_values_come_from_the_world(draft):
    customer = draft.plan.steps[0].args["customer_id"].value
    assert customer in draft.initial_state.services["shop"].tables["Customer"]
    assert set(draft.services) == {"shop", "mailer"} and "notes" in draft.distractor_services


def _fake_completion(reply):
    def completion(**kwargs):
        assert kwargs["messages"][0]["content"].startswith("Rewrite the following task")
        return SimpleNamespace(choices=[SimpleNamespace(message=SimpleNamespace(content=reply))])

    return completion


def test_llm_writer_uses_a_rewrite_that_keeps_the_values(draft, tiny_specs):
    customer = draft.plan.steps[0].args["customer_id"].value
    rewrite = (f"Hi! Could you look up customer {customer} in the shop and email them with the subject "
               "Your order, body Thanks for shopping with us, dated 2026-06-01? Then tell me the message_id.")
    writer = LLMWriter("openai/gpt-4o-mini", completion=_fake_completion(rewrite))
    assert writer.write(draft, {s.id: s for s in tiny_specs}) == rewrite


def test_llm_writer_falls_back_when_a_value_is_lost(draft, tiny_specs):
    lossy = _fake_completion("Email the customer about their order.")
    writer = LLMWriter("openai/gpt-4o-mini", completion=lossy)
    specs = {s.id: s for s in tiny_specs}
    assert writer.write(draft, specs) == TemplateWriter().write(draft, specs)


@pytest.mark.slow
def test_llm_writer_through_litellm_mock_response(draft, tiny_specs, monkeypatch):
    """Imports litellm (several seconds)."""
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    customer = draft.plan.steps[0].args["customer_id"].value
    rewrite = (f"Please find customer {customer}, send them an email titled \"Your order\" saying "
               "\"Thanks for shopping with us\" dated 2026-06-01, and report message_id.")
    writer = LLMWriter("openai/gpt-4o-mini", mock_response=rewrite)
    assert writer.write(draft, {s.id: s for s in tiny_specs}) == rewrite
