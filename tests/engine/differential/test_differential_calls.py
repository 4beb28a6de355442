from __future__ import annotations

import pytest

from compoworld_assets.engine.differential.calls import (
    CallParseError,
    ParsedCall,
    bind_arguments,
    json_ready,
    parse_call,
)


def test_parses_keyword_arguments():
    assert parse_call("cd(folder='document')") == ParsedCall("cd", (), {"folder": "document"})


def test_parses_positional_and_container_literals():
    call = parse_call("f('a.pdf', [1, 2], x=(3, 4), y={'k': None}, z=-1.5, flag=True)")
    assert call.name == "f"
    assert call.positional == ("a.pdf", [1, 2])
    assert call.keywords == {"x": (3, 4), "y": {"k": None}, "z": -1.5, "flag": True}


def test_parses_calls_without_arguments_and_surrounding_space():
    assert parse_call("  ls()  ") == ParsedCall("ls")


@pytest.mark.parametrize(
    "text",
    ["cd", "cd(", "obj.cd(folder='x')", "f(x=g(1))", "f(x=y)", "f(*args)", "f(**kw)", "1 + 2"],
)
def test_rejects_what_is_not_a_literal_call(text):
    with pytest.raises(CallParseError):
        parse_call(text)


def test_binds_positional_arguments_by_parameter_order():
    call = parse_call("tail('log.txt', lines=20)")
    assert bind_arguments(call, ["file_name", "lines"]) == {"file_name": "log.txt", "lines": 20}


def test_binding_rejects_too_many_positionals_and_repeats():
    with pytest.raises(CallParseError, match="positional"):
        bind_arguments(parse_call("f(1, 2)"), ["a"])
    with pytest.raises(CallParseError, match="twice"):
        bind_arguments(parse_call("f(1, a=2)"), ["a"])


def test_json_ready_converts_tuples_sets_and_keys():
    assert json_ready({1: (1, 2), "s": {3, 1}}) == {"1": [1, 2], "s": [1, 3]}
