"""Property tests: generated and mutated specs of every format through import (and build) never escape the
documented quarantine path, and what is imported is something every later stage can use."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from compoworld_assets.engine.runtime.sandbox import trusted_executor
from compoworld_assets.engine.service_build import ServiceBuild, try_build_service
from compoworld_assets.engine.specs.importers import import_document
from compoworld_assets.engine.specs.importers.guard import INTERNAL_ERROR
from compoworld_assets.engine.specs.model import ImportResult, ServiceSpec
from compoworld_assets.engine.synthesis.offline import OfflineSynthesizer
from compoworld_assets.engine.world_model.offline import OfflineWorldModel

# Text with everything JSON can carry, lone surrogates and NUL included.
TEXT = st.text(st.characters(exclude_categories=()), max_size=12)
NAMES = st.one_of(st.sampled_from(["title", "note_id", "query", "limit", "id", "__init__", "class", "model_config",
                                   "_x", "email", "to", "due_date", "amount", "", "cafe\u0301"]), TEXT)
TOOL_NAMES = st.one_of(st.sampled_from(["create_note", "get_note", "list_notes", "search_notes", "update_note",
                                        "delete_note", "send_note", "do", "__init__"]), TEXT)
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.just(10**100), st.floats(), TEXT,
    st.sampled_from(["string", "integer", "object", "array", "dict", "float", "any", "#/components/schemas/Note"]),
)
PATTERNS = st.one_of(st.sampled_from([r"^[\p{L}\p{N}]+$", r"\P{L}", "[unclosed", r"^(a+)+$", "a{1000000}",
                                      r"^\x{41}$", "(?<=a+)b", r"^[a-z]{2}$"]), TEXT)
JSON = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                     st.dictionaries(NAMES, inner, max_size=4)), max_leaves=12)


def _keyword(schemas: st.SearchStrategy) -> st.SearchStrategy:
    return st.one_of(
        st.tuples(st.just("type"), st.one_of(SCALARS, st.lists(st.sampled_from(["string", "null", "x", 5]),
                                                              max_size=3))),
        st.tuples(st.sampled_from(["format", "description", "title"]), st.one_of(SCALARS, st.just("date-time"))),
        st.tuples(st.sampled_from(["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
                                   "minLength", "maxLength", "minItems", "maxItems"]),
                  st.one_of(st.integers(-5, 20), st.just(10**9), SCALARS)),
        st.tuples(st.just("pattern"), st.one_of(PATTERNS, SCALARS)),
        st.tuples(st.just("enum"), st.one_of(st.lists(JSON, max_size=4), st.builds(lambda: list(range(20_000))), SCALARS)),
        st.tuples(st.just("required"), st.one_of(st.lists(st.one_of(NAMES, SCALARS), max_size=4), SCALARS)),
        st.tuples(st.sampled_from(["$ref", "$schema", "$id", "x-cw-type"]),
                  st.one_of(SCALARS, st.sampled_from(["email", "#/$defs/X", "crm.Contact.id"]), JSON)),
        st.tuples(st.sampled_from(["properties", "patternProperties"]),
                  st.one_of(st.dictionaries(st.one_of(NAMES, PATTERNS), schemas, max_size=4), SCALARS)),
        st.tuples(st.sampled_from(["items", "additionalProperties", "not"]), st.one_of(schemas, SCALARS)),
        st.tuples(st.sampled_from(["anyOf", "oneOf", "allOf", "items"]), st.lists(schemas, max_size=3)),
        st.tuples(st.sampled_from(["default", "example", "examples", "const", "nullable"]), JSON),
    )


SCHEMAS = st.recursive(
    st.one_of(st.just({}), st.just({"type": "string"}), st.booleans()),
    lambda inner: st.lists(_keyword(inner), max_size=6).map(dict),
    max_leaves=16,
)
OBJECT_SCHEMAS = st.builds(lambda props, required, extra: {"type": "object", "properties": props,
                                                           "required": required, **extra},
                           st.dictionaries(NAMES, SCHEMAS, max_size=5), st.lists(NAMES, max_size=3),
                           st.lists(_keyword(SCHEMAS), max_size=2).map(dict))
FUNCTIONS = st.lists(st.builds(lambda name, description, parameters: {
    "type": "function", "function": {"name": name, "description": description, "parameters": parameters}},
    TOOL_NAMES, TEXT, st.one_of(OBJECT_SCHEMAS, JSON)), max_size=5)
MCP = st.builds(lambda tools: {"tools": tools}, st.lists(st.fixed_dictionaries(
    {"name": TOOL_NAMES, "inputSchema": st.one_of(OBJECT_SCHEMAS, JSON)},
    optional={"description": TEXT, "outputSchema": SCHEMAS,
              "annotations": st.dictionaries(st.sampled_from(["readOnlyHint", "destructiveHint"]), JSON)}),
    min_size=1, max_size=5))


def _operation(parameters, body, response):
    return {"operationId": "op", "parameters": parameters,
            "requestBody": {"content": {"application/json": {"schema": body}}},
            "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": response}}}}}


PARAMETERS = st.lists(st.one_of(st.fixed_dictionaries(
    {"name": NAMES, "in": st.sampled_from(["path", "query", "header", "body"]), "schema": SCHEMAS},
    optional={"required": JSON}), st.just({"$ref": "#/components/parameters/Missing"}), JSON), max_size=4)
OPERATIONS = st.builds(_operation, PARAMETERS, st.one_of(OBJECT_SCHEMAS, st.just({"$ref": "#/components/schemas/Note"})),
                       st.one_of(SCHEMAS, st.just({"$ref": "#/components/schemas/Note"})))
OPENAPI = st.builds(
    lambda collection, item, note, title: {
        "openapi": "3.0.3", "info": {"title": title, "version": "1"},
        "paths": {"/notes": collection, "/notes/{note_id}": item},
        "components": {"schemas": {"Note": note}, "parameters": {}}},
    st.dictionaries(st.sampled_from(["get", "post", "parameters"]), st.one_of(OPERATIONS, JSON), max_size=2),
    st.dictionaries(st.sampled_from(["get", "put", "delete"]), st.one_of(OPERATIONS, JSON), max_size=2),
    st.one_of(OBJECT_SCHEMAS, SCHEMAS), TEXT)
DOCUMENTS = {"openai": FUNCTIONS, "mcp": MCP, "openapi": OPENAPI}
SETTINGS = {"deadline": None, "derandomize": True,
            "suppress_health_check": [HealthCheck.too_slow, HealthCheck.large_base_example,
                                      HealthCheck.data_too_large]}


def _assert_usable(result: ImportResult) -> None:
    """The import's contract: rows explain themselves, no rule failed unforeseen, specs survive storage."""
    assert isinstance(result, ImportResult)
    for row in result.quarantined:
        assert row.reason.strip() and row.location
        assert not row.reason.startswith(INTERNAL_ERROR), row.reason
        json.dumps(row.model_dump()).encode("utf-8")
    for spec in result.specs:
        assert ServiceSpec.model_validate_json(spec.model_dump_json()).content_hash() == spec.content_hash()
        for tool in spec.tools:
            Draft202012Validator.check_schema(tool.parameters)
            Draft202012Validator.check_schema(tool.returns)
            assert len(tool.parameter_properties()) <= 1024
        for entity in spec.entities:
            for field in entity.fields:
                assert field.enum is None or all(not (isinstance(v, float) and not math.isfinite(v))
                                                 for v in field.enum)


@pytest.mark.parametrize("kind", sorted(DOCUMENTS))
def test_generated_documents_import_without_escaping_the_quarantine_path(kind):
    @settings(max_examples=100, **SETTINGS)
    @given(DOCUMENTS[kind])
    def check(document):
        _assert_usable(import_document(document, location=f"fuzz.{kind}.json"))

    check()


@pytest.mark.parametrize("kind", sorted(DOCUMENTS))
def test_mutated_documents_import_without_escaping_the_quarantine_path(kind):
    """Garbage written over random nodes of a generated document."""

    @settings(max_examples=50, **SETTINGS)
    @given(DOCUMENTS[kind], st.lists(st.tuples(st.integers(0, 10_000), JSON), min_size=1, max_size=4))
    def check(document, damage):
        for position, garbage in damage:
            _overwrite(document, position, garbage)
        _assert_usable(import_document(document, location=f"fuzz.{kind}.json"))

    check()


def _overwrite(document, position: int, value) -> None:
    nodes = []
    stack = [document]
    while stack:
        node = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, child in items:
            nodes.append((node, key))
            stack.append(child)
    if nodes:
        container, key = nodes[position % len(nodes)]
        container[key] = value


@pytest.mark.slow
@pytest.mark.parametrize("kind", sorted(DOCUMENTS))
def test_imported_services_build_or_quarantine_without_raising(kind):
    """Import → seed → offline synthesis → verification in the sandbox → world-model probe."""

    @settings(max_examples=30, **SETTINGS)
    @given(DOCUMENTS[kind])
    def check(document):
        for spec in import_document(document, location=f"fuzz.{kind}.json").specs:
            outcome = try_build_service(spec, OfflineSynthesizer(), trusted_executor, OfflineWorldModel(), seed=1,
                                        time_limit_s=120)
            assert isinstance(outcome, ServiceBuild), outcome
            assert len(outcome.verdicts) == len(spec.tools)

    check()
