"""BFCL (``bfcl-eval``) scored with its own checkers, the model reached through litellm.

* Single-turn categories (``simple_python``, ``multiple``, ``parallel``, ``live_*``, ...): one
  model call with the entry's function docs as OpenAI tools; the tool calls are scored by BFCL's
  ``ast_checker`` (irrelevance categories: correct when the model calls nothing).
* Multi-turn categories: the model is asked turn by turn; its calls run on BFCL's executable
  backends (results fed back as tool messages; a turn ends when the model calls nothing, or after
  BFCL's own step limit, :func:`steps_per_turn`), and the decoded calls are scored by
  ``multi_turn_checker`` (state and response checks per turn).

Tokens per model turn are derived from the sample (:func:`gold_max_tokens`): the longest ground-truth
turn, written as a model writes it, plus slack (``rollout/budgets.py``); the self-test checks every
gold turn fits the limits the model gets.

BFCL's ``ast_checker`` module imports a config that imports every provider SDK; a stub replaces
``bfcl_eval.constants.model_config`` in ``sys.modules`` first (names are mapped back here, so the
checker's underscore-to-dot option is never needed). BFCL caches backend instances per model
name and entry id in module globals: every run gets its own model name and forgets its
instances afterwards.

Function names with characters OpenAI forbids (``math.factorial``) are sent as ``math_factorial``
and mapped back before scoring. Gorilla's schema dialect (``dict``, ``float``, ``tuple``, ``any``)
is translated to JSON Schema.
"""

from __future__ import annotations

import ast
import asyncio
import importlib
import inspect
import itertools
import json
import math
import random
import re
import sys
import types
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from compoworld_assets.engine.evaluation.results import (
    SAMPLE_TEXT_CHARS,
    BenchmarkRun,
    ModelEndpoint,
    SelfTest,
)
from compoworld_assets.engine.rollout.budgets import (
    DEFAULT_SLACK,
    END_OF_TURN_TOKENS,
    Slack,
    TokenCounter,
    assistant_text,
    estimated_tokens,
)
from compoworld_assets.engine.rollout.llm import CompletionFn, litellm_completion

BENCHMARK = "bfcl"
SINGLE_TURN = ("simple_python", "multiple", "parallel", "parallel_multiple", "irrelevance", "live_simple",
               "live_multiple", "live_parallel", "live_parallel_multiple", "live_irrelevance")
MULTI_TURN = ("multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param", "multi_turn_long_context")
DEFAULT_CATEGORIES = ("simple_python", "multiple", "parallel", "irrelevance", "live_simple", "multi_turn_base")
GORILLA_TYPES = {"dict": "object", "float": "number", "tuple": "array", "integer": "integer", "string": "string",
                 "boolean": "boolean", "array": "array", "object": "object", "number": "number", "null": "null"}
_FORBIDDEN_NAME_CHARS = re.compile(r"[^a-zA-Z0-9_-]")
_RUN_NUMBERS = itertools.count()


def data_dir() -> Path:
    import bfcl_eval

    return Path(bfcl_eval.__file__).parent / "data"


def _json_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def steps_per_turn() -> int:
    """BFCL's multi-turn step limit: its handler ends a turn once more than ``MAXIMUM_STEP_LIMIT`` (20)
    steps with calls have run, so a turn holds at most ``MAXIMUM_STEP_LIMIT + 1`` of them."""
    from bfcl_eval.constants.default_prompts import MAXIMUM_STEP_LIMIT

    return MAXIMUM_STEP_LIMIT + 1


def is_multi_turn(category: str) -> bool:
    return category in MULTI_TURN


def is_irrelevance(category: str) -> bool:
    return category.endswith("irrelevance")


def load_entries(category: str) -> list[dict[str, Any]]:
    """A category's entries with ``ground_truth`` attached (none for irrelevance) and multi-turn docs filled in."""
    if category not in SINGLE_TURN + MULTI_TURN:
        raise ValueError(f"unsupported BFCL category {category!r}; choose from {SINGLE_TURN + MULTI_TURN}")
    entries = _json_lines(data_dir() / f"BFCL_v4_{category}.json")
    answer_file = data_dir() / "possible_answer" / f"BFCL_v4_{category}.json"
    answers = {a["id"]: a["ground_truth"] for a in _json_lines(answer_file)} if answer_file.is_file() else {}
    for entry in entries:
        entry["ground_truth"] = answers.get(entry["id"])
        if is_multi_turn(category):
            _attach_multi_turn_docs(entry)
    return entries


def _attach_multi_turn_docs(entry: dict[str, Any]) -> None:
    """The involved backends' function docs, minus the functions a miss-func entry reveals later."""
    from bfcl_eval.constants.executable_backend_config import MULTI_TURN_FUNC_DOC_FILE_MAPPING

    docs = []
    for backend in entry["involved_classes"]:
        docs += _json_lines(data_dir() / "multi_turn_func_doc" / MULTI_TURN_FUNC_DOC_FILE_MAPPING[backend])
    missed = {turn: set(names) for turn, names in entry.get("missed_function", {}).items()}
    hidden = set().union(*missed.values()) if missed else set()
    entry["function"] = [d for d in docs if d["name"] not in hidden]
    entry["revealed_function"] = {turn: [d for d in docs if d["name"] in names] for turn, names in missed.items()}


def sample_entries(category: str, n: int | None, seed: int = 0) -> list[dict[str, Any]]:
    """Up to ``n`` entries of ``category`` (all when None): a seeded sample kept in file order."""
    entries = load_entries(category)
    if n is None or n >= len(entries):
        return entries
    keep = set(random.Random(f"{seed}:{category}").sample(range(len(entries)), n))
    return [e for k, e in enumerate(entries) if k in keep]


def openai_name(name: str) -> str:
    return _FORBIDDEN_NAME_CHARS.sub("_", name)[:64]


def json_schema(schema: Any) -> Any:
    """Gorilla's schema dialect as JSON Schema (``dict`` → object, ``float`` → number, ``any`` → untyped)."""
    if isinstance(schema, list):
        return [json_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    converted = {}
    for key, value in schema.items():
        if key == "type" and isinstance(value, str):
            if value in GORILLA_TYPES:
                converted[key] = GORILLA_TYPES[value]
        elif key == "properties" and isinstance(value, dict):
            converted[key] = {name: json_schema(prop) for name, prop in value.items()}
        elif key in ("items", "additionalProperties", "anyOf", "oneOf", "allOf"):
            converted[key] = json_schema(value)
        else:
            converted[key] = value
    return converted


def openai_tools(docs: Sequence[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """OpenAI function tools for BFCL function docs, and the map from sent names back to BFCL names."""
    tools, names = [], {}
    for doc in docs:
        name = openai_name(doc["name"])
        names[name] = doc["name"]
        parameters = json_schema(doc.get("parameters") or {"type": "dict", "properties": {}})
        tools.append({"type": "function", "function": {"name": name, "description": doc.get("description", ""),
                                                       "parameters": parameters}})
    return tools, names


def decoded_calls(message: dict[str, Any], names: dict[str, str]) -> list[tuple[str, dict[str, Any]]]:
    """The (BFCL name, arguments) of an assistant message's tool calls; undecodable arguments become {}."""
    calls = []
    for call in message.get("tool_calls") or []:
        function = call["function"]
        try:
            arguments = json.loads(function.get("arguments") or "{}")
        except json.JSONDecodeError:
            arguments = {}
        calls.append((names.get(function["name"], function["name"]),
                      arguments if isinstance(arguments, dict) else {}))
    return calls


def call_string(name: str, arguments: dict[str, Any]) -> str:
    """A call as BFCL's executable backends evaluate it: ``name(key=<python literal>, ...)``."""
    return f"{name}({', '.join(f'{key}={value!r}' for key, value in arguments.items())})"


def _ast_checker() -> Any:
    """BFCL's ``ast_checker`` imported behind a stub model config that never maps names."""
    config_name = "bfcl_eval.constants.model_config"
    if config_name not in sys.modules:
        stub = types.ModuleType(config_name)
        stub.MODEL_CONFIG_MAPPING = {}
        sys.modules[config_name] = stub
    module = importlib.import_module("bfcl_eval.eval_checker.ast_eval.ast_checker")
    module.MODEL_CONFIG_MAPPING = _NeverMapNames()
    return module


class _NeverMapNames(dict):
    def __missing__(self, key: str) -> types.SimpleNamespace:
        return types.SimpleNamespace(underscore_to_dot=False)


def score_single_turn(entry: dict[str, Any], category: str, calls: list[tuple[str, dict[str, Any]]]) -> bool:
    if is_irrelevance(category):
        return not calls
    if not calls:
        return False
    checker = _ast_checker()
    from bfcl_eval.constants.enums import Language

    result = checker.ast_checker(entry["function"], [{name: args} for name, args in calls], entry["ground_truth"],
                                 Language.PYTHON, category, "compoworld")
    return bool(result["valid"])


def _new_run_name(model: str, seed: int) -> str:
    return re.sub(r"[^a-zA-Z0-9]", "_", f"cw_{model}_{seed}_{next(_RUN_NUMBERS)}")


def _forget_instances(run_name: str) -> None:
    """Drop the backend instances BFCL cached in its module globals for ``run_name``."""
    utils = importlib.import_module("bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils")
    for key in [k for k in vars(utils) if k.startswith(run_name)]:
        del vars(utils)[key]


def _execute(entry: dict[str, Any], calls: list[str], run_name: str) -> list[str]:
    from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils import execute_multi_turn_func_call

    results, _ = execute_multi_turn_func_call(calls, entry["initial_config"], entry["involved_classes"], run_name,
                                              entry["id"], long_context=entry["id"].startswith(
                                                  "multi_turn_long_context"))
    return results


def score_multi_turn(entry: dict[str, Any], decoded: list[list[list[str]]], run_name: str) -> bool:
    """BFCL's multi-turn checker on ``decoded`` (turn → step → call strings)."""
    from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker import multi_turn_checker

    category = entry["id"].rsplit("_", 1)[0]
    try:
        return bool(multi_turn_checker(decoded, entry["ground_truth"], entry, category, run_name)["valid"])
    finally:
        _forget_instances(run_name)


async def _ask(policy: Any, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
    return await policy.next_message(list(messages), tools)


async def run_single_turn(entry: dict[str, Any], category: str, policy: Any) -> tuple[bool, dict[str, Any]]:
    """Whether the model's answer is correct, and what it answered (its calls, or its text)."""
    tools, names = openai_tools(entry["function"])
    message = await _ask(policy, [m for turn in entry["question"] for m in turn], tools)
    calls = decoded_calls(message, names)
    observed = ({"calls": [call_string(name, args) for name, args in calls]} if calls
                else {"text": str(message.get("content") or "")[:SAMPLE_TEXT_CHARS]})
    return score_single_turn(entry, category, calls), observed


async def run_multi_turn(entry: dict[str, Any], policy: Any, run_name: str,
                         max_steps_per_turn: int) -> tuple[bool, dict[str, Any]]:
    """Ask the model turn by turn, running its calls on BFCL's backends, then score the decoded calls.

    Also returns the decoded calls per turn (what the checker saw).
    """
    docs = list(entry["function"])
    messages: list[dict[str, Any]] = []
    decoded: list[list[list[str]]] = []
    try:
        for turn, question in enumerate(entry["question"]):
            docs += entry["revealed_function"].get(str(turn), [])
            tools, names = openai_tools(docs)
            messages += question
            steps: list[list[str]] = []
            for _ in range(max_steps_per_turn):
                message = await _ask(policy, messages, tools)
                messages.append(message)
                calls = [call_string(name, args) for name, args in decoded_calls(message, names)]
                if not calls:
                    break
                steps.append(calls)
                for call, result in zip(message["tool_calls"], _execute(entry, calls, run_name), strict=True):
                    messages.append({"role": "tool", "tool_call_id": call["id"], "name": call["function"]["name"],
                                     "content": result})
            decoded.append(steps)
    finally:
        _forget_instances(run_name)
    return score_multi_turn(entry, decoded, run_name + "_score"), {"calls_per_turn": decoded}


def evaluate_bfcl(endpoint: ModelEndpoint, seeds: Sequence[int], categories: Sequence[str] = DEFAULT_CATEGORIES,
                  per_category: int | None = 3, sample_seed: int = 0, max_steps_per_turn: int | None = None,
                  completion_fn: CompletionFn = litellm_completion,
                  count_tokens: TokenCounter = estimated_tokens) -> BenchmarkRun:
    """Accuracy per entry (``accuracy``) and per category (``accuracy[<category>]``) under every seed.

    Tokens per turn: the endpoint's ``max_tokens`` when set, else :func:`gold_max_tokens` over the
    sample; steps per multi-turn turn: ``max_steps_per_turn``, else BFCL's own (:func:`steps_per_turn`).
    """
    samples = {category: sample_entries(category, per_category, sample_seed) for category in categories}
    max_tokens = endpoint.max_tokens or gold_max_tokens([e for es in samples.values() for e in es], count_tokens)
    steps = max_steps_per_turn or steps_per_turn()
    run = BenchmarkRun(benchmark=BENCHMARK, model=endpoint.name, seeds=list(seeds), success_metric="accuracy",
                       details={"categories": list(categories), "per_category": per_category,
                                "budget": {"max_tokens": max_tokens, "max_steps_per_turn": steps}})
    for category, entries in samples.items():
        for entry in entries:
            for seed in seeds:
                policy = endpoint.policy(seed, completion_fn, max_tokens=max_tokens)
                if is_multi_turn(category):
                    correct, observed = asyncio.run(run_multi_turn(entry, policy, _new_run_name(endpoint.name, seed),
                                                                   steps))
                else:
                    correct, observed = asyncio.run(run_single_turn(entry, category, policy))
                run.sample(entry["id"], seed, correct, **observed)
                run.add("accuracy", entry["id"], correct)
                run.add(f"accuracy[{category}]", entry["id"], correct)
    return run


def gold_arguments(options: dict[str, list[Any]]) -> dict[str, Any]:
    """One correct argument set from BFCL's possible answers (an optional parameter, marked by "", is left out,
    and so is one with no possible answer at all, as two ``live_simple`` entries have).

    A dict-valued parameter's possible answer is itself a dict of option lists, also inside lists; a few
    nested answers are a bare value instead of a list of options.
    """
    chosen = {}
    for name, values in options.items():
        values = values if isinstance(values, list) else [values]
        if values and "" not in values:
            chosen[name] = _gold_value(values[0])
    return chosen


def _gold_value(value: Any) -> Any:
    if isinstance(value, dict):
        return gold_arguments(value)
    if isinstance(value, list) and value and all(isinstance(item, dict) for item in value):
        return [gold_arguments(item) for item in value]
    return value


def gold_single_turn_message(entry: dict[str, Any]) -> dict[str, Any]:
    """The ground truth as the assistant message a perfect model would send (OpenAI tool calls)."""
    calls = [{"id": f"gold_{k}", "type": "function",
              "function": {"name": openai_name(name), "arguments": json.dumps(gold_arguments(options))}}
             for k, answer in enumerate(entry["ground_truth"] or []) for name, options in answer.items()]
    return {"role": "assistant", "content": "", **({"tool_calls": calls} if calls else {})}


def parse_call_string(call: str, entry: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """A ground-truth call string as (name, keyword arguments), positional arguments bound by the backend's signature."""
    from bfcl_eval.constants.executable_backend_config import CLASS_FILE_PATH_MAPPING

    node = ast.parse(call, mode="eval").body
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        raise TypeError(f"not a plain call: {call!r}")
    name = node.func.id
    arguments = {kw.arg: ast.literal_eval(kw.value) for kw in node.keywords}
    if node.args:
        for backend in entry["involved_classes"]:
            cls = getattr(importlib.import_module(CLASS_FILE_PATH_MAPPING[backend]), backend)
            if hasattr(cls, name):
                parameters = [p for p in inspect.signature(getattr(cls, name)).parameters if p != "self"]
                arguments = {**dict(zip(parameters, (ast.literal_eval(a) for a in node.args))), **arguments}
                break
    return name, arguments


def gold_turns(entry: dict[str, Any]) -> list[list[tuple[str, dict[str, Any]]]]:
    """The ground truth's calls as (BFCL name, arguments) per turn (multi-turn: every turn, empty ones too)."""
    if entry.get("ground_truth") is None:
        return []
    if entry["id"].startswith("multi_turn"):
        return [[parse_call_string(call, entry) for call in turn] for turn in entry["ground_truth"]]
    _, names = openai_tools(entry["function"])
    return [decoded_calls(gold_single_turn_message(entry), names)]


def gold_turn_tokens(entry: dict[str, Any], count_tokens: TokenCounter = estimated_tokens) -> list[int]:
    """Tokens of each gold turn written as a model writes it (every call of the turn in one message)."""
    return [count_tokens(assistant_text({"tool_calls": [
        {"function": {"name": openai_name(name), "arguments": json.dumps(arguments, ensure_ascii=False)}}
        for name, arguments in turn]})) + END_OF_TURN_TOKENS for turn in gold_turns(entry) if turn]


def gold_max_tokens(entries: Sequence[dict[str, Any]], count_tokens: TokenCounter = estimated_tokens,
                    slack: Slack = DEFAULT_SLACK) -> int:
    """Tokens per turn for ``entries``: the longest gold turn times ``slack.factor``, plus ``slack.tokens``."""
    longest = max((n for entry in entries for n in gold_turn_tokens(entry, count_tokens)), default=0)
    return math.ceil(longest * slack.factor) + slack.tokens


def bfcl_self_test(categories: Sequence[str] = DEFAULT_CATEGORIES, per_category: int | None = 3,
                   sample_seed: int = 0, max_tokens: int | None = None,
                   count_tokens: TokenCounter = estimated_tokens) -> SelfTest:
    """Ground truth through the same decoding and checkers: every entry must score as correct, and every
    gold turn must fit ``max_tokens`` (the limit the model gets; None: derived from the sample)."""
    samples = [(category, entry) for category in categories
               for entry in sample_entries(category, per_category, sample_seed)]
    if max_tokens is None:
        max_tokens = gold_max_tokens([entry for _, entry in samples], count_tokens)
    failures = []
    for category, entry in samples:
        turns = gold_turns(entry)
        if is_multi_turn(category):
            decoded = [[[call_string(name, args) for name, args in turn]] if turn else [] for turn in turns]
            correct = score_multi_turn(entry, decoded, _new_run_name("gold", 0))
        else:
            correct = score_single_turn(entry, category, turns[0] if turns else [])
        longest = max(gold_turn_tokens(entry, count_tokens), default=0)
        if not correct:
            failures.append(f"{entry['id']}: the ground truth scored as wrong")
        elif longest > max_tokens:
            failures.append(f"{entry['id']}: a gold turn needs {longest} tokens > max_tokens {max_tokens}")
    return SelfTest(name="ground_truth", passed=len(samples) - len(failures), total=len(samples), failures=failures)
