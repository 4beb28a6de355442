"""``values.schema_value`` on source schemas the offline world model meets: patterns, allOf, loose objects."""

from __future__ import annotations

import random
import re
import string

import pytest

from compoworld_assets.engine.runtime.state import ServiceState
from compoworld_assets.engine.specs.model import (
    Effect,
    EntitySpec,
    FieldSpec,
    ServiceSpec,
    SourceRef,
    ToolSpec,
)
from compoworld_assets.engine.types import TYPE_KEY
from compoworld_assets.engine.values import merge_all_of, pattern_value, schema_value
from compoworld_assets.engine.world_model import OfflineWorldModel
from compoworld_assets.engine.world_model.schema import schema_errors


@pytest.mark.parametrize(
    "pattern",
    [r"^[\da-z]{26}$", "^[A-Z]{3}$", r"^[A-Z]{2}-\d{4,6}$", r"^v\d+\.\d$", r"^[\w.-]{3,}$", "^.{5}$", "ab"],
)
def test_simple_patterns_get_matching_strings(pattern):
    for seed in range(5):
        value = pattern_value(pattern, random.Random(seed))
        assert value is not None and re.search(pattern, value), value
    assert schema_value({"type": "string", "pattern": pattern}, random.Random(1)) == pattern_value(
        pattern, random.Random(1)
    )


@pytest.mark.parametrize("pattern", [
    "^(ab)+$", "^a|b$", "^[^a]{2}$", r"^\D$",
    r"^arn:(aws|aws-cn):datasync:[a-z\-0-9]+:[0-9]{12}:agent/agent-[0-9a-z]{17}$",
    r"^https:\/\/[A-Za-z0-9]((.|-+)?[A-Za-z0-9]){0,252}\/[a-z0-9](-?[a-z0-9]){2,62}(\/[^\s]*)?$",
])
def test_patterns_with_groups_alternation_and_negated_classes_get_matching_strings(pattern):
    """Beyond the simple generator, rstr's Xeger makes the string; every value is checked against the pattern."""
    for seed in range(5):
        value = pattern_value(pattern, random.Random(seed), max_length=300)
        assert value is not None and re.search(pattern, value), value
    schema = {"type": "string", "pattern": pattern}
    assert schema_value(schema, random.Random(3)) == schema_value(schema, random.Random(3))


def test_a_pattern_python_cannot_read_or_beyond_both_generators_gets_no_value():
    assert pattern_value(r"\p{L}+", random.Random(0)) is None
    assert pattern_value("^(?=x)x$", random.Random(0)) is None  # look-arounds: no generator follows them
    assert pattern_value("^(?!x)x$", random.Random(0)) is None
    assert pattern_value("^[a-z]{50}$", random.Random(0), max_length=10) is None
    assert pattern_value("^((a{1000}){1000}){1000}$", random.Random(0)) is None  # not built: far too long


def test_pattern_values_do_not_depend_on_the_process_hash_seed():
    """rstr draws a negated class from a set; ours from a fixed order, so a seed gives one value in any process."""
    import subprocess
    import sys

    program = ("import random; from compoworld_assets.engine.values import pattern_value; "
               "print([pattern_value(p, random.Random(5)) for p in ('^[^\\s]{6}$', '^(ab|cd)[^xyz]{3}$')])")
    outputs = {subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True,
                              env={"PYTHONHASHSEED": str(seed), "PATH": ""}).stdout for seed in (1, 2, 3)}
    assert len(outputs) == 1 and "None" not in outputs.pop()


WIDE_CLASSES = [r"^[\u0020-\uD7FF\uE000-\uFFFD\r\n\t]{3,9}$", r"^[a-f0-9\u00C0-\u024F_]+$", r"^[\w\u0100-\u5000-]{4}$",
                r"^(x|[\u4E00-\u9FFF]{2})[^\u0000-\u0040]$", r"^(.{2}|[\d.]-)[^\s]+$"]


@pytest.mark.parametrize("pattern", WIDE_CLASSES)
def test_a_class_over_most_of_unicode_draws_what_listing_its_characters_draws(pattern):
    """Classes are drawn from without listing their characters (each class's characters worked out once, ``.``
    from a fixed alphabet); the draws are those of rstr listing the characters every time."""
    import itertools

    from compoworld_assets.engine.values import _Xeger

    class Listing(_Xeger):  # the characters listed, as rstr does, over the same fixed order for a negated class
        def __init__(self, rng):
            super().__init__(rng)
            self._cases = {**self._cases, "any": lambda _: self.printable(1, exclude="\n")}  # rstr's own

        def _handle_in(self, value):
            found = list(itertools.chain(*(self._handle_state(state) for state in value)))
            if found and found[0] is False:
                excluded = set(found[1:])
                found = [ch for ch in string.printable if ch not in excluded and ch not in "\n\r\x0b\x0c"]
            return self._random.choice(found)

    for seed in range(20):
        drawn = _Xeger(random.Random(seed)).xeger(pattern)
        assert drawn == Listing(random.Random(seed)).xeger(pattern)
        assert re.search(pattern, drawn), drawn


def test_all_of_parts_are_merged_and_required_names_are_always_present():
    schema = {
        "allOf": [
            {"type": "object", "properties": {"id": {"type": "string", "pattern": "^[a-f0-9]{8}$"}},
             "required": ["id"]},
            {"properties": {"size": {"type": "integer"}}, "required": ["size", "label"]},
        ]
    }
    merged = merge_all_of(schema)
    assert merged["type"] == "object" and merged["required"] == ["id", "size", "label"]
    value = schema_value(schema, random.Random(2))
    assert schema_errors(schema, value) == [] and set(value) == {"id", "size", "label"}
    loose = {"type": "object", "required": ["href"]}
    assert schema_errors(loose, schema_value(loose, random.Random(0))) == []


def test_offline_world_model_fills_all_of_from_state_and_satisfies_patterns():
    """The answer reuses stored ids through ``allOf``; its own id gets a pattern-matching value; a list of
    links nothing holds is empty, and a required value nothing holds makes the answer unavailable."""
    vault_ref = {"type": "string", TYPE_KEY: "vaults.Vault.id"}
    returns = {
        "allOf": [
            {"type": "object", "properties": {"id": {"type": "string", "pattern": r"^[\da-z]{26}$"}},
             "required": ["id"]},
            {"type": "object", "properties": {"vault_id": vault_ref,
                                              "links": {"type": "array",
                                                        "items": {"type": "object", "required": ["href"]}}},
             "required": ["vault_id", "links"]},
        ]
    }
    tool = ToolSpec(name="vault_report", description="Report.", effect=Effect.ACTION, returns=returns)
    vault = EntitySpec(name="Vault", id_prefix="vault", fields=[FieldSpec(name="name", json_type="string")])
    spec = ServiceSpec(id="vaults", name="Vaults", domain="security", description="Vaults.",
                       source=SourceRef(kind="openapi", location="v.json"), entities=[vault], tools=[tool])
    state = ServiceState(service_id="vaults", counters={"Vault": 1},
                         tables={"Vault": {"vault_0001": {"id": "vault_0001", "name": "Ops"}}})
    result = OfflineWorldModel().simulate(spec, tool, {}, state).result
    assert result["success"] and schema_errors(returns, result["data"]) == []
    assert result["data"]["vault_id"] == "vault_0001" and result["data"]["links"] == []
    assert OfflineWorldModel().simulate(spec, tool, {}, state).result == result
    returns["allOf"][1]["required"].append("owner")
    result = OfflineWorldModel().simulate(spec, tool, {}, state).result
    assert result["error"]["code"] == "unavailable" and "$.owner" in result["error"]["message"]


@pytest.mark.parametrize("seed", range(5))
def test_every_keyword_of_an_all_of_part_shapes_the_value(seed):
    """A property written as ``allOf`` of its schema and a description keeps its items, enum, bounds and
    pattern (as in AWS specs), so the value fits it."""
    schema = {"type": "object", "required": ["failed", "status", "arn", "tags"], "properties": {
        "failed": {"allOf": [{"type": "array", "minItems": 1, "items": {"type": "object", "properties": {
            "id": {"type": "string"}}}}, {"description": "Failures."}]},
        "status": {"allOf": [{"type": "string", "enum": ["InProgress", "Failed"]}, {"description": "Status."}]},
        "arn": {"allOf": [{"type": "string", "minLength": 40, "maxLength": 60,
                           "pattern": "^arn:(aws|aws-cn):gateway:[a-z0-9-]+:[0-9]{12}:gw/.+$"}]},
        "tags": {"type": "object", "minProperties": 1, "additionalProperties": {"type": "string"}},
    }}
    assert merge_all_of(schema["properties"]["status"])["enum"] == ["InProgress", "Failed"]
    value = schema_value(schema, random.Random(seed))
    assert schema_errors(schema, value) == []
    assert isinstance(value["failed"][0], dict) and value["status"] in ("InProgress", "Failed")


def test_a_pattern_value_respects_a_minimum_length():
    """Never a value outside the bounds; a pattern that allows them gets one on most draws (it is a search)."""
    found = [pattern_value("^[a-z]{3,20}$", random.Random(seed), 12, 10) for seed in range(10)]
    assert all(10 <= len(text) <= 12 for text in found if text is not None)
    assert sum(text is not None for text in found) >= 8


def test_a_pattern_narrower_than_the_shared_type_shapes_the_value():
    """``x-cw-type: url`` with a pattern for one kind of URL: the value matches the pattern, not just any URL."""
    schema = {"type": "string", TYPE_KEY: "url", "pattern": r"^https:\/\/[a-z0-9]{3,12}\.blob\/[a-z0-9]{3,20}$"}
    for seed in range(5):
        value = schema_value(schema, random.Random(seed))
        assert re.search(schema["pattern"], value), value
    assert schema_value({"type": "string", TYPE_KEY: "url"}, random.Random(0)).startswith("http")
