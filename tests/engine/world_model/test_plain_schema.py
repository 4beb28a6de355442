"""Schemas known valid without the meta-schema check: never one the meta-schema refuses (property test against
jsonschema's ``check_schema``), and the keyword list is the meta-schema's."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator, SchemaError
from jsonschema_specifications import REGISTRY

from compoworld_assets.engine.world_model.plain_schema import META_SCHEMA_KEYWORDS, plainly_valid
from compoworld_assets.engine.world_model.schema import schema_errors, schema_problem

JSON = st.recursive(st.none() | st.booleans() | st.integers(-3, 3) | st.floats(-2, 2) | st.text(max_size=3),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=2),
                    max_leaves=6)
ARGUMENTS = {
    "type": st.sampled_from(["string", "integer", "object", "array", "number", "boolean", "null", "str", "float"])
    | st.lists(st.sampled_from(["string", "null", "integer", "nope"]), max_size=3),
    "required": st.lists(st.sampled_from(["a", "b", 1]), max_size=3),
    "enum": JSON, "const": JSON, "default": JSON, "examples": JSON,
    "title": JSON, "description": JSON, "format": JSON, "$comment": JSON,
    "deprecated": JSON, "readOnly": JSON, "uniqueItems": JSON,
    "minimum": JSON, "maximum": JSON, "exclusiveMinimum": JSON, "multipleOf": JSON,
    "minLength": JSON | st.sampled_from([0, 1.0, 2.5, -1, True]), "maxItems": JSON | st.sampled_from([3, 0.0, -2]),
    "pattern": st.sampled_from(["^a+$", "[", r"\p{L}", "(?P<x>a)", r"\d{3}", "*"]) | JSON,
    "x-cw-type": JSON, "nullable": JSON,
    "$ref": st.just("#/x"), "prefixItems": st.just([]), "definitions": st.just({}),
}


def schemas(depth: int = 2) -> st.SearchStrategy:
    leaf = st.booleans() | st.dictionaries(st.sampled_from(sorted(ARGUMENTS)), st.none(), max_size=0)
    if depth == 0:
        return leaf
    child = schemas(depth - 1)
    nested = {"properties": st.dictionaries(st.text(max_size=2), child, max_size=2) | JSON,
              "items": child | JSON, "additionalProperties": child, "not": child,
              "allOf": st.lists(child, max_size=2) | JSON, "anyOf": st.lists(child, max_size=2),
              "oneOf": st.lists(child, max_size=2), "$defs": st.dictionaries(st.text(max_size=2), child, max_size=2)}
    keyword = st.sampled_from(sorted({**ARGUMENTS, **nested}))
    return leaf | keyword.flatmap(lambda k: st.tuples(st.just(k), {**ARGUMENTS, **nested}[k])).map(
        lambda pair: {pair[0]: pair[1]}) | st.lists(
        st.sampled_from(sorted({**ARGUMENTS, **nested})).flatmap(
            lambda k: st.tuples(st.just(k), {**ARGUMENTS, **nested}[k])), max_size=4).map(dict)


def meta_schema_accepts(schema) -> bool | None:
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError:
        return False
    except Exception:  # noqa: BLE001 - jsonschema could not check it (the full path reports that)
        return None
    return True


@settings(max_examples=400, deadline=None)
@given(schemas())
def test_a_schema_known_valid_here_is_valid_under_the_meta_schema(schema):
    if plainly_valid(schema):
        assert meta_schema_accepts(schema) is True, schema


@pytest.mark.parametrize("schema", [
    {"type": "object", "properties": {"a": {"type": "string", "pattern": "^a+$", "minLength": 1.0}},
     "required": ["a"], "additionalProperties": False, "x-cw-type": "email", "nullable": True},
    {"type": ["string", "null"], "enum": ["a", None], "format": "date", "examples": [1]},
    {"anyOf": [{"type": "integer", "minimum": 0, "multipleOf": 2}, True]},
])
def test_plain_tool_schemas_are_known_valid(schema):
    assert plainly_valid(schema) and meta_schema_accepts(schema)


@pytest.mark.parametrize(("schema", "reason"), [
    ({"type": "str"}, "invalid"), ({"pattern": r"\p{L}"}, "invalid"), ({"required": ["a", "a"]}, "invalid"),
    ({"items": [{"type": "string"}]}, "invalid"), ({"minLength": -1}, "invalid"), ({"anyOf": []}, "invalid"),
])
def test_a_schema_the_meta_schema_refuses_still_gets_its_reason(schema, reason):
    assert not plainly_valid(schema)
    assert reason in (schema_problem(schema) or "")
    assert schema_errors(schema, "x")[0].startswith("$: the schema is invalid")


def test_the_keywords_are_the_meta_schemas():
    defined = set()
    for uri in REGISTRY:
        if "draft/2020-12" in uri:
            defined |= set(REGISTRY[uri].contents.get("properties") or {})
    assert defined == META_SCHEMA_KEYWORDS
