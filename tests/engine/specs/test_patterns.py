"""Spec regular expressions made usable by Python's re, and validation that survives any pattern."""

from __future__ import annotations

import re

import pytest

from compoworld_assets.engine.runtime.state import ServiceState
from compoworld_assets.engine.service_build import probe_world_model
from compoworld_assets.engine.specs.model import ServiceSpec, SourceRef, ToolSpec
from compoworld_assets.engine.specs.patterns import python_pattern
from compoworld_assets.engine.world_model.offline import OfflineWorldModel
from compoworld_assets.engine.world_model.schema import is_valid, schema_errors, schema_problem

AWS_TAG = r"^([\p{L}\p{Z}\p{N}_.:/=+\-@]*)$"


def _compiled(pattern: str) -> re.Pattern[str]:
    translated, why = python_pattern(pattern)
    assert translated is not None, why
    return re.compile(translated)


def test_patterns_python_compiles_are_kept_as_they_are():
    assert python_pattern(r"^[a-z]{3}-\d+$") == (r"^[a-z]{3}-\d+$", "")


@pytest.mark.parametrize(("pattern", "matches", "rejects"), [
    (AWS_TAG, ["Été 2024: ok/=+-@", "Ключ_1", "数据"], ["tab\there", "semi;colon"]),
    (r"^\p{L}+$", ["é", "Δδ", "abc"], ["a1", "_", ""]),
    (r"^\P{L}+$", ["123", "_-"], ["a", "1a"]),
    (r"^\p{Lu}\p{Ll}*$", ["Élan", "Z"], ["élan", "ZZ"]),
    (r"^[\P{C}\s]+$", ["visible text\t"], ["bell\x07"]),
    (r"^\p{Han}+$", ["漢字"], ["kanji"]),
    (r"^\p{IsLetter}+$", ["Été"], ["a1"]),
    (r"^[a-zA-Z0-9\s-_()\[\]]+$", ["a-b_c (d) [e]"], ["a;b"]),
    (r"^\x{41}\x{3b1}$", ["Aα"], ["AB"]),
    (r"\A\d+\z", ["123"], ["123\n"]),
    (r"^(?<word>[a-z]+)-\k<word>$", ["ab-ab"], ["ab-cd"]),
])
def test_other_dialects_are_translated_exactly(pattern, matches, rejects):
    compiled = _compiled(pattern)
    assert all(compiled.search(text) for text in matches), matches
    assert not any(compiled.search(text) for text in rejects), rejects


@pytest.mark.parametrize("pattern", ["[unclosed", r"\p{NotAProperty}", "(?<=a+)b", "a{2,1}"])
def test_what_has_no_python_equivalent_is_refused_with_a_reason(pattern):
    translated, why = python_pattern(pattern)
    assert translated is None and why


def test_schemas_with_unusable_patterns_report_instead_of_raising():
    for pattern in (r"^\p{L}+$", r"^\P{L}+$", "[unclosed"):
        schema = {"type": "string", "pattern": pattern}
        assert schema_problem(schema) is not None
        assert schema_errors(schema, "abc")[0].startswith("$: the schema is invalid")
        assert not is_valid(schema, "abc")


def test_catastrophic_backtracking_fails_the_value_instead_of_hanging():
    schema = {"type": "string", "pattern": r"^(\w+\s?)*$"}
    assert schema_errors(schema, "word " * 2 + "!") != []
    [error] = schema_errors(schema, "a" * 40 + "!")
    assert "could not be matched" in error or "does not match" in error


def test_world_model_probe_on_a_stored_untranslated_pattern_fails_the_probe_not_the_build():
    """A spec imported before patterns were translated still carries ``\\p{L}`` in its returns."""
    tool = ToolSpec(name="describe", description="Describe.", returns={
        "type": "object", "properties": {"name": {"type": "string", "pattern": r"^\p{L}+$"}}, "required": ["name"]})
    spec = ServiceSpec(id="legacy", name="Legacy", domain="general", description="d",
                       source=SourceRef(kind="openai", location="legacy.json"), tools=[tool])
    probe = probe_world_model(spec, "describe", OfflineWorldModel(), ServiceState.empty(spec), seed=1)
    assert not probe.passed and ("the schema is invalid" in probe.detail or "cannot answer $.name" in probe.detail)
