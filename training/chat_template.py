"""The training chat template: SmolLM2's ChatML rendering plus tools, tool calls and generation markers.

* The system turn holds the system message and, when tools are given, one signature line per
  tool, ``- name(city: string, days: integer)``: the required arguments with their JSON types,
  no other schema and no optional arguments, which keeps a 30-tool prompt under 1,000 tokens (CPU
  training cost grows with the prompt), and how to call one. Without the types, a model trained
  on it called BFCL's ``calculate_bmi`` with ``"weight": "70 kg"`` instead of ``70``.
* An assistant turn renders its text, then each tool call as
  ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``, which is what
  :func:`compoworld_assets.engine.rollout.llm.parse_content_tool_calls` parses back; the turn,
  its closing ``<|im_end|>`` included, is wrapped in ``{% generation %}`` markers so that
  ``assistant_only_loss=True`` trains on assistant tokens only.
* Tool results are ``tool`` turns.
"""

from __future__ import annotations

from typing import Any

from compoworld_assets.engine.rollout.llm import parse_content_tool_calls

# Part of the code version of every checkpoint and score made with the template (2: typed signatures).
TEMPLATE_VERSION = "2"
DEFAULT_SYSTEM = "You are a helpful AI assistant named SmolLM, trained by Hugging Face"
END_OF_TURN = "<|im_end|>"
TOOL_CALL_INSTRUCTION = ('To call a tool, answer with <tool_call>{"name": <tool name>, "arguments": '
                         '<JSON object>}</tool_call>.')

TRAINING_CHAT_TEMPLATE = (
    "{%- if messages and messages[0].role == 'system' -%}"
    "{%- set system = messages[0].content -%}{%- set turns = messages[1:] -%}"
    "{%- else -%}"
    "{%- set system = '" + DEFAULT_SYSTEM + "' -%}{%- set turns = messages -%}"
    "{%- endif -%}"
    "{{- '<|im_start|>system\\n' + system -}}"
    "{%- if tools -%}"
    "{{- '\\n\\nTools:' -}}"
    "{%- for tool in tools -%}"
    "{%- set function = tool.function if tool.function is defined else tool -%}"
    "{%- set parameters = function.parameters if function.parameters is defined and function.parameters else {} -%}"
    "{%- set required = parameters.required if parameters.required is defined and parameters.required else [] -%}"
    "{%- set properties = parameters.properties if parameters.properties is defined and parameters.properties else {} -%}"
    "{{- '\\n- ' + function.name + '(' -}}"
    "{%- for name in required -%}"
    "{%- set schema = properties[name] if name in properties else {} -%}"
    "{{- (', ' if not loop.first else '') + name + ': ' -}}"
    "{{- schema.type if schema.type is defined and schema.type is string else 'any' -}}"
    "{%- endfor -%}"
    "{{- ')' -}}"
    "{%- endfor -%}"
    "{{- '\\n' + '" + TOOL_CALL_INSTRUCTION + "' -}}"
    "{%- endif -%}"
    "{{- '<|im_end|>\\n' -}}"
    "{%- for message in turns -%}"
    "{%- if message.role == 'assistant' -%}"
    "{{- '<|im_start|>assistant\\n' -}}"
    "{%- generation -%}"
    "{{- message.content if message.content else '' -}}"
    "{%- for call in (message.tool_calls if message.tool_calls else []) -%}"
    "{%- set function = call.function if call.function is defined else call -%}"
    "{{- '<tool_call>{\"name\": ' + (function.name | tojson) + ', \"arguments\": ' -}}"
    "{{- function.arguments if function.arguments is string else (function.arguments | tojson) -}}"
    "{{- '}</tool_call>' -}}"
    "{%- endfor -%}"
    "{{- '<|im_end|>' -}}"
    "{%- endgeneration -%}"
    "{{- '\\n' -}}"
    "{%- else -%}"
    "{{- '<|im_start|>' + message.role + '\\n' + (message.content if message.content else '') + '<|im_end|>\\n' -}}"
    "{%- endif -%}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\\n' -}}{%- endif -%}"
)


def install_training_template(tokenizer: Any) -> Any:
    """Set the training template on ``tokenizer`` (in place; also returned) with ``<|im_end|>`` as EOS and pad."""
    tokenizer.chat_template = TRAINING_CHAT_TEMPLATE
    tokenizer.eos_token = END_OF_TURN
    if tokenizer.pad_token is None:
        tokenizer.pad_token = END_OF_TURN
    return tokenizer


def tool_turn_text(content: str) -> str:
    """The text that follows a finished assistant turn to show one tool result and open the next turn."""
    return f"\n<|im_start|>tool\n{content}{END_OF_TURN}\n<|im_start|>assistant\n"


def parse_tool_calls(text: str) -> list[tuple[str, dict[str, Any]]]:
    """The tool calls in generated assistant text (the rollout engine's parser, tags or bare JSON)."""
    return parse_content_tool_calls(text.split(END_OF_TURN, 1)[0])

