"""The training chat template: SmolLM2's ChatML rendering plus tools, tool calls and generation markers.

* The system turn holds the system message and, when tools are given, each tool on a line of its
  own, ``- name: description``, then one indented line per parameter, required ones first as the
  schema lists them, an optional one marked ``?``::

      - weather_forecast: Forecast for a city.
        city: string — The city name.
        days?: integer = 3 — Days ahead.
        unit?: "celsius"|"fahrenheit"

  Every parameter is shown with its JSON type (enums as their values, objects as
  ``{key: type, key?: type}``, arrays as ``type[]``), its default and its description, because a
  model cannot fill a parameter it never sees (103 of BFCL's 400 ``simple_python`` items need an
  optional one) nor type it right (without types, a model trained on signatures called BFCL's
  ``calculate_bmi`` with ``"weight": "70 kg"``). Then one line says how to call a tool.
* An assistant turn renders its text, then each tool call as
  ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``, which is what
  :func:`compoworld_assets.engine.rollout.llm.parse_content_tool_calls` parses back; the turn,
  its closing ``<|im_end|>`` included, is wrapped in ``{% generation %}`` markers so that
  ``assistant_only_loss=True`` trains on assistant tokens only.
* Tool results are ``tool`` turns.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from compoworld_assets.engine.rollout.llm import parse_content_tool_calls

# Part of the code version of every checkpoint and score made with the template
# (2: typed signatures of required parameters; 3: every parameter with its type, default and description).
TEMPLATE_VERSION = "3"
DEFAULT_SYSTEM = "You are a helpful AI assistant named SmolLM, trained by Hugging Face"
END_OF_TURN = "<|im_end|>"
TOOL_CALL_INSTRUCTION = ('To call a tool, answer with <tool_call>{"name": <tool name>, "arguments": '
                         '<JSON object>}</tool_call>.')

# Renders a parameter's schema as a compact type: enum values, {key: type} for objects, type[] for arrays.
_TYPE_MACRO = (
    "{%- macro type_of(schema) -%}"
    "{%- if schema.enum is defined and schema.enum -%}"
    "{{- schema.enum | map('tojson') | join('|') -}}"
    "{%- elif schema.properties is defined and schema.properties is mapping and schema.properties -%}"
    "{%- set required = schema.required if schema.required is defined and schema.required else [] -%}"
    "{{- '{' -}}"
    "{%- for name, prop in schema.properties.items() -%}"
    "{{- (', ' if not loop.first else '') + name + ('' if name in required else '?') + ': ' + type_of(prop) -}}"
    "{%- endfor -%}"
    "{{- '}' -}}"
    # schema['items'], not schema.items: attribute lookup would find the dict's items method.
    "{%- elif schema['items'] is defined and schema['items'] is mapping -%}"
    "{{- type_of(schema['items']) + '[]' -}}"
    "{%- elif schema.type is defined and schema.type is string -%}"
    "{{- schema.type -}}"
    "{%- elif schema.type is defined and schema.type -%}"
    "{{- schema.type | join('|') -}}"
    "{%- else -%}"
    "{{- 'any' -}}"
    "{%- endif -%}"
    "{%- endmacro -%}"
)

TRAINING_CHAT_TEMPLATE = (
    _TYPE_MACRO
    + "{%- if messages and messages[0].role == 'system' -%}"
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
    "{{- '\\n- ' + function.name -}}"
    "{%- if function.description is defined and function.description -%}"
    "{{- ': ' + function.description | replace('\\n', ' ') -}}"
    "{%- endif -%}"
    "{%- for name in required + properties | reject('in', required) | list -%}"
    "{%- set schema = properties[name] if name in properties else {} -%}"
    "{{- '\\n  ' + name + ('' if name in required else '?') + ': ' + type_of(schema) -}}"
    "{%- if schema.default is defined -%}{{- ' = ' + schema.default | tojson -}}{%- endif -%}"
    "{%- if schema.description is defined and schema.description -%}"
    "{{- ' — ' + schema.description | replace('\\n', ' ') -}}"
    "{%- endif -%}"
    "{%- endfor -%}"
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


def tool_turn_text(*contents: str) -> str:
    """The text that follows a finished assistant turn to show its tool results, one ``tool`` turn each in call
    order, and open the next assistant turn."""
    return "\n" + "".join(f"<|im_start|>tool\n{content}{END_OF_TURN}\n" for content in contents) + \
        "<|im_start|>assistant\n"


def token_counter(tokenizer: Any) -> Callable[[str], int]:
    """Tokens of a text as ``tokenizer`` encodes it inside a rendered conversation (no special tokens added),
    for the budgets of ``compoworld_assets.engine.rollout.budgets``."""
    return lambda text: len(tokenizer(text, add_special_tokens=False)["input_ids"])


def parse_tool_calls(text: str) -> list[tuple[str, dict[str, Any]]]:
    """The tool calls in generated assistant text (the rollout engine's parser, tags or bare JSON)."""
    return parse_content_tool_calls(text.split(END_OF_TURN, 1)[0])

