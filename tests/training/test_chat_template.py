"""The training template: rendering, generation masks, and the round trip through the rollout parser."""

import json

import pytest

from compoworld_assets.engine.rollout.budgets import assistant_text
from training.chat_template import TRAINING_CHAT_TEMPLATE, parse_tool_calls, tool_turn_text
from training.data import first_oracle_call, read_sft_file

TOOLS = [{"type": "function", "function": {
    "name": "crm_get_contact", "description": "Get a contact.",
    "parameters": {"type": "object", "properties": {"contact_id": {"type": "string"}, "verbose": {"type": "boolean"}},
                   "required": ["contact_id"]}}}]
MESSAGES = [
    {"role": "system", "content": "Be precise."},
    {"role": "user", "content": "Look up cont_0001."},
    {"role": "assistant", "content": "", "tool_calls": [{"id": "call_1", "type": "function", "function": {
        "name": "crm_get_contact", "arguments": json.dumps({"contact_id": "cont_0001"})}}]},
    {"role": "tool", "tool_call_id": "call_1", "name": "crm_get_contact", "content": '{"success": true}'},
    {"role": "assistant", "content": "Done."},
]


def render(messages, tools=None, **kwargs):
    from transformers.utils.chat_template_utils import render_jinja_template

    rendered, _ = render_jinja_template(conversations=[messages], tools=tools, chat_template=TRAINING_CHAT_TEMPLATE,
                                        **kwargs)
    return rendered[0]


def test_renders_tools_calls_and_tool_turns():
    text = render(MESSAGES, TOOLS)
    assert text.startswith("<|im_start|>system\nBe precise.\n\nTools:\n- crm_get_contact: Get a contact.\n"
                           "  contact_id: string\n  verbose?: boolean\nTo call a tool, answer with <tool_call>")
    assert ('<|im_start|>assistant\n<tool_call>{"name": "crm_get_contact", "arguments": {"contact_id": '
            '"cont_0001"}}</tool_call><|im_end|>\n<|im_start|>tool\n{"success": true}<|im_end|>\n') in text
    assert text.endswith("<|im_start|>assistant\nDone.<|im_end|>\n")


def test_every_parameter_shows_its_type_default_and_description():
    tool = {"type": "function", "function": {"name": "book", "description": "Book a trip.\nFast.", "parameters": {
        "type": "object", "required": ["city", "missing"], "properties": {
            "when": {"type": "string", "format": "date", "default": "today", "description": "Departure day."},
            "city": {"type": "string", "description": "Where to."},
            "unit": {"type": "string", "enum": ["km", "mi"]},
            "stops": {"type": "array", "items": {"type": "object", "required": ["name"],
                                                 "properties": {"name": {"type": "string"}, "nights": {}}}},
            "seats": {"type": ["integer", "null"], "default": 1}}}}}
    text = render(MESSAGES[1:2], [tool])
    assert text.split("Tools:\n", 1)[1].split("\nTo call a tool", 1)[0] == (
        "- book: Book a trip. Fast.\n"
        "  city: string — Where to.\n"
        "  missing: any\n"
        '  when?: string = "today" — Departure day.\n'
        '  unit?: "km"|"mi"\n'
        "  stops?: {name: string, nights?: any}[]\n"
        "  seats?: integer|null = 1")


def test_an_assistant_turn_renders_as_the_budgets_count_it():
    text = render(MESSAGES[:3], TOOLS)
    assert text.endswith("<|im_start|>assistant\n" + assistant_text(MESSAGES[2]) + "<|im_end|>\n")


def test_bfcl_prompts_show_every_parameter_the_ground_truth_uses():
    bfcl = pytest.importorskip("compoworld_assets.engine.evaluation.bfcl")
    pytest.importorskip("bfcl_eval")
    unseen = []
    for entry in bfcl.load_entries("simple_python"):
        tools, _ = bfcl.openai_tools(entry["function"])
        system = render([{"role": "user", "content": "q"}], tools).split("<|im_end|>", 1)[0]
        for answer in entry["ground_truth"]:
            for options in answer.values():
                unseen += [(entry["id"], name) for name in options if f"\n  {name}" not in system]
    assert unseen == []


def test_default_system_prompt_and_generation_prompt():
    text = render(MESSAGES[1:2], add_generation_prompt=True)
    assert text.startswith("<|im_start|>system\nYou are a helpful AI assistant named SmolLM")
    assert "Tools:" not in text and text.endswith("<|im_start|>user\nLook up cont_0001.<|im_end|>\n"
                                                  "<|im_start|>assistant\n")


def test_tool_turn_text_continues_the_rendering():
    prefix = render(MESSAGES[:3], TOOLS)
    assert render(MESSAGES[:4], TOOLS, add_generation_prompt=True) == (
        prefix[:-1] + tool_turn_text('{"success": true}'))


def test_round_trip_through_the_rollout_parser():
    text = render(MESSAGES[:3], TOOLS)
    turn = text.split("<|im_start|>assistant\n")[-1]
    assert parse_tool_calls(turn) == [("crm_get_contact", {"contact_id": "cont_0001"})]
    assert parse_tool_calls("I cannot help with that.<|im_end|>") == []


@pytest.mark.slow
def test_assistant_masks_cover_exactly_the_assistant_turns(tokenizer, demo_files):
    sample = read_sft_file(demo_files.sft)[0]
    out = tokenizer.apply_chat_template(sample["messages"], tools=sample["tools"], return_dict=True,
                                        return_assistant_tokens_mask=True)
    spans, current = [], []
    for token, masked in zip(out["input_ids"], out["assistant_masks"], strict=True):
        if masked:
            current.append(token)
        elif current:
            spans.append(tokenizer.decode(current))
            current = []
    assistant_turns = [m for m in sample["messages"] if m["role"] == "assistant"]
    assert len(spans) == len(assistant_turns)
    assert all(s.startswith("<tool_call>") and s.endswith("</tool_call><|im_end|>") for s in spans)
    _, oracle = first_oracle_call(sample)
    assert parse_tool_calls(spans[0]) == [oracle]


def test_tool_turn_text_shows_every_result_of_a_turn_in_order():
    calls = {"role": "assistant", "content": "", "tool_calls": [
        {"id": "a", "type": "function", "function": {"name": "crm__get_contact", "arguments": "{}"}},
        {"id": "b", "type": "function", "function": {"name": "crm__get_contact", "arguments": "{}"}}]}
    results = [{"role": "tool", "tool_call_id": "a", "content": "first"},
               {"role": "tool", "tool_call_id": "b", "content": "second"}]
    prefix = render([*MESSAGES[:2], calls], TOOLS)
    assert render([*MESSAGES[:2], calls, *results], TOOLS, add_generation_prompt=True) == (
        prefix[:-1] + tool_turn_text("first", "second"))
