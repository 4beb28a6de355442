"""Each input class that once crashed or stalled import or build: bounded, repaired or quarantined."""

from __future__ import annotations

import json

import pytest
from jsonschema import Draft202012Validator

from compoworld_assets.engine.runtime.sandbox import trusted_executor
from compoworld_assets.engine.runtime.state import ServiceState, record_model
from compoworld_assets.engine.service_build import build_service
from compoworld_assets.engine.specs.importers import import_document, import_spec_file
from compoworld_assets.engine.specs.limits import ImportLimits
from compoworld_assets.engine.specs.model import Effect, ServiceSpec
from compoworld_assets.engine.synthesis.offline import OfflineSynthesizer
from compoworld_assets.engine.verification.cases import generate_cases, wrong_type_value
from compoworld_assets.engine.world_model.offline import OfflineWorldModel


def _function(name: str, properties: dict, required: tuple[str, ...] = ()) -> dict:
    return {"type": "function", "function": {"name": name, "description": f"{name}.", "parameters": {
        "type": "object", "properties": properties, "required": list(required)}}}


def _notes(**field: dict) -> list[dict]:
    """A small CRUD function service whose Note entity has the given extra field(s)."""
    return [_function("create_note", {"title": {"type": "string"}, **field}, ("title",)),
            _function("get_note", {"note_id": {"type": "string"}}, ("note_id",)),
            _function("search_notes", {"query": {"type": "string"}, **field})]


def _only_spec(result) -> ServiceSpec:
    assert len(result.specs) == 1, [q.reason for q in result.quarantined]
    return result.specs[0]


def _reasons(result) -> list[str]:
    return [q.reason for q in result.quarantined]


def _assert_buildable(spec: ServiceSpec) -> None:
    for tool in spec.tools:
        Draft202012Validator.check_schema(tool.parameters)
        Draft202012Validator.check_schema(tool.returns)
    build = build_service(spec, OfflineSynthesizer(), trusted_executor, OfflineWorldModel(), seed=3)
    assert len(build.verdicts) == len(spec.tools)


def test_deep_nesting_in_json_text_is_unreadable_not_a_recursion_error(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    [row] = import_spec_file(path).quarantined
    assert row.reason == "JSON nested too deeply to parse"


def test_deeply_nested_document_is_rejected_before_any_importer_recurses():
    schema: dict = {"type": "string"}
    for _ in range(20_000):
        schema = {"type": "object", "properties": {"x": schema}}
    result = import_document([_function("get_thing", {"x": schema})], location="deep.json")
    assert result.specs == [] and "nests deeper than 64 levels" in _reasons(result)[0]


def test_huge_integers_are_left_out_of_json_and_python_input(tmp_path):
    digits = "9" * 5000
    path = tmp_path / "huge.json"
    path.write_text(json.dumps(_notes(count={"type": "integer"}))
                    .replace('"type": "integer"}', f'"type": "integer", "maximum": {digits}}}'))
    from_text = import_spec_file(path)
    from_objects = import_document(_notes(count={"type": "integer", "maximum": 10**5000}), location="huge.json")
    for result in (from_text, from_objects):
        spec = _only_spec(result)
        assert "maximum" not in spec.tool("create_note").parameter_properties()["count"]
        assert "integers with too many digits left out (2 times; the first is shown)" in _reasons(result)
    _assert_buildable(spec)


def test_list_valued_type_on_a_search_tool_builds():
    spec = _only_spec(import_document(_notes(tag={"type": ["string", "null"]}), location="notes.json"))
    search = spec.tool("search_notes")
    assert search.effect is Effect.SEARCH and search.parameter_properties()["tag"]["type"] == ["string", "null"]
    assert wrong_type_value(["string", "null"]) == 12345
    assert wrong_type_value(["integer", "boolean"]) == "not a number"
    _assert_buildable(spec)


def test_minimum_above_maximum_is_left_out_and_the_tool_still_gets_values():
    result = import_document(_notes(count={"type": "integer", "minimum": 10, "maximum": 1}), location="n.json")
    spec = _only_spec(result)
    assert spec.tool("create_note").parameter_properties()["count"] == {"type": "integer"}
    assert "contradictory numeric bounds left out (2 times; the first is shown)" in _reasons(result)
    _assert_buildable(spec)


def test_openapi_30_boolean_exclusive_bounds_become_numbers():
    result = import_document(_notes(rate={"type": "number", "minimum": 0, "exclusiveMinimum": True,
                                          "maximum": 1, "exclusiveMaximum": False}), location="n.json")
    rate = _only_spec(result).tool("create_note").parameter_properties()["rate"]
    assert rate == {"type": "number", "exclusiveMinimum": 0, "maximum": 1}


def test_lone_surrogates_are_replaced_so_the_spec_hashes():
    result = import_document(_notes(**{"n\udc00te": {"type": "string", "description": "bad \ud800 text"}}),
                             location="s.json")
    spec = _only_spec(result)
    assert "n\ufffdte" in spec.tool("create_note").parameter_properties()
    assert len(spec.content_hash()) == 64
    assert "lone surrogates replaced by U+FFFD" in _reasons(result)[0]


def test_unicode_is_nfc_normalised():
    decomposed = "cafe\u0301"
    spec = _only_spec(import_document(_notes(**{decomposed: {"type": "string"}}), location="u.json"))
    assert "caf\u00e9" in spec.tool("create_note").parameter_properties()


def test_property_named_like_python_internals_is_a_record_field():
    names = ("__init__", "model_config", "_private", "class")
    spec = _only_spec(import_document(_notes(**{n: {"type": "string"} for n in names}), location="d.json"))
    note = spec.entity("Note")
    model = record_model(spec.id, note.model_dump_json())
    record = {"id": "note_1", "title": "t", **dict.fromkeys(names, "v")}
    assert model.model_validate(record)
    with pytest.raises(ValueError):
        model.model_validate({**record, "__init__": 5})
    _assert_buildable(spec)


def test_non_string_format_is_left_out():
    result = import_document(_notes(when={"type": "string", "format": 5}), location="f.json")
    assert _only_spec(result).tool("create_note").parameter_properties()["when"] == {"type": "string"}
    assert "invalid 'format' values left out (2 times; the first is shown)" in _reasons(result)


def test_twenty_thousand_parameters_are_quarantined_not_built():
    wide = {f"p{i}": {"type": "string"} for i in range(20_000)}
    result = import_document([*_notes(), _function("configure", wide)], location="wide.json")
    spec = _only_spec(result)
    assert "configure" not in {t.name for t in spec.tools}
    assert "tool 'configure' has 20000 parameters (the limit is 1024)" in _reasons(result)


def test_a_nested_object_of_twenty_thousand_properties_is_quarantined_too():
    wide = {"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(20_000)}}
    result = import_document([*_notes(), _function("configure", {"settings": wide})], location="wide.json")
    assert "configure" not in {t.name for t in _only_spec(result).tools}
    assert "a schema has 20000 properties (the limit is 1024)" in _reasons(result)


def test_tools_beyond_the_tool_limit_are_left_out():
    tools = [_function(f"do_{i}", {}) for i in range(5)]
    result = import_document(tools, location="many.json", limits=ImportLimits(max_tools=3))
    assert [t.name for t in _only_spec(result).tools] == ["do_0", "do_1", "do_2"]
    assert "tools beyond the limit of 3 per service left out" in _reasons(result)


def test_long_strings_are_cut():
    result = import_document(_notes(), location="long.json", limits=ImportLimits(max_string_chars=4))
    assert any(r.startswith("strings longer than 4 characters cut") for r in _reasons(result))


def test_non_finite_numbers_are_left_out(tmp_path):
    path = tmp_path / "nan.json"
    path.write_text(json.dumps(_notes(score={"type": "number", "minimum": 0})).replace('"minimum": 0', '"minimum": NaN'))
    result = import_spec_file(path)
    assert _only_spec(result).tool("create_note").parameter_properties()["score"] == {"type": "number"}
    assert any(r.startswith("non-finite numbers (NaN, Infinity) left out") for r in _reasons(result))


def test_yaml_alias_bomb_and_self_referencing_anchor_are_rejected(tmp_path):
    bomb = tmp_path / "bomb.yaml"
    levels = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    levels += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]
    bomb.write_text("\n".join(levels) + "\n")
    loop = tmp_path / "loop.yaml"
    loop.write_text("tools: &t\n  - *t\n")
    assert "holds more than 4000000 values" in import_spec_file(bomb).quarantined[0].reason
    assert "nests deeper than 64 levels" in import_spec_file(loop).quarantined[0].reason


def test_yaml_dates_become_iso_strings(tmp_path):
    path = tmp_path / "dated.yaml"
    path.write_text("openapi: 3.0.0\ninfo: {title: Dated, version: 2024-01-02}\npaths:\n  /ping:\n"
                    "    get: {operationId: ping, responses: {'200': {description: ok}}}\n")
    assert _only_spec(import_spec_file(path)).version == "2024-01-02"


def test_unresolved_refs_and_identifiers_are_left_out():
    result = import_document(_notes(owner={"$ref": "#/$defs/Owner"}, tags={
        "$schema": ["not", "a", "string"], "$id": 5, "type": "array", "items": {"type": "string"}}), location="r.json")
    properties = _only_spec(result).tool("create_note").parameter_properties()
    assert properties["owner"] == {} and properties["tags"] == {"type": "array", "items": {"type": "string"}}
    assert "unresolved $ref left out (2 times; the first is shown)" in _reasons(result)


def test_impossible_generated_sizes_are_left_out():
    result = import_document(_notes(text={"type": "string", "minLength": 10**9}), location="n.json")
    assert _only_spec(result).tool("create_note").parameter_properties()["text"] == {"type": "string"}


def test_an_importer_bug_becomes_a_quarantine_row(monkeypatch):
    from compoworld_assets.engine.specs.importers import openai_functions

    def broken(*args, **kwargs):
        raise KeyError("surprise")

    monkeypatch.setattr(openai_functions, "build_function_service", broken)
    [row] = import_document(_notes(), location="bug.json").quarantined
    assert row.reason == "internal error while importing: KeyError: 'surprise'"


def test_the_time_limit_quarantines_the_document():
    [row] = import_document(_notes(), location="slow.json", limits=ImportLimits(time_limit_s=0.0)).quarantined
    assert row.reason == "importing slow.json exceeded its time limit of 0 s"


def test_generated_cases_cover_every_parameter_of_a_wide_tool_once():
    wide = {f"p{i}": {"type": ["integer", "null"]} for i in range(200)}
    spec = _only_spec(import_document(_notes(**wide), location="w.json"))
    create = spec.tool("create_note")
    cases = generate_cases(spec, create, ServiceState.empty(spec), seed=1)
    assert sum(c.name.startswith("wrong_type[") for c in cases) == len(create.parameter_properties()) == 201


def test_an_openapi_body_with_a_malformed_allof_part_is_repaired_before_merging():
    body = {"allOf": [{"allOf": 5, "properties": {"title": {"type": "string"}}}, {"required": ["title"]}]}
    document = {"openapi": "3.0.3", "info": {"title": "Notes", "version": "1"}, "paths": {"/notes": {"post": {
        "operationId": "create_note", "requestBody": {"content": {"application/json": {"schema": body}}},
        "responses": {"201": {"description": "made"}}}}}}
    result = import_document(document, location="allof.json")
    assert "title" in _only_spec(result).tool("create_note").parameter_properties()
    assert "'allOf' values that are not lists left out" in _reasons(result)


def test_a_response_listing_properties_without_a_type_is_an_object():
    """Without the type any value passes it, and the world model answered a phrase where fields were promised."""
    response = {"properties": {"device_code": {"type": "string"}, "verification_uri": {"type": "string"},
                               "scopes": {"items": {"type": "string"}}},
                "required": ["device_code", "verification_uri"]}
    document = {"openapi": "3.0.0", "info": {"title": "Devices", "version": "1"}, "paths": {"/device": {"post": {
        "operationId": "generateDeviceCode", "responses": {"200": {"description": "ok", "content": {
            "application/json": {"schema": response}}}}}}}}
    result = import_document(document, location="d.json")
    tool = _only_spec(result).tool("generate_device_code")
    assert tool.returns["type"] == "object" and tool.returns["properties"]["scopes"]["type"] == "array"
    assert any("'type: object' implied by its keywords" in r for r in _reasons(result))
    from compoworld_assets.engine.specs.importers.schema_repair import repair_schema

    nullable = repair_schema({"properties": {"a": {"type": "string"}}, "nullable": True}, "d.json")
    assert "type" not in nullable  # an OpenAPI 3.0 nullable object also takes null
    simulation = OfflineWorldModel().simulate(result.specs[0], tool, {},
                                              ServiceState(service_id=result.specs[0].id, tables={}))
    # read as an object, its fields are named (offline, nothing holds a device code to give)
    assert "$.device_code" in simulation.result["error"]["message"]
