"""RPC-style APIs: operation names (``CreateWidget``, ``DescribeWidget``...) say the resource the path does not,
and the resource's tools become typed, stateful code."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compoworld_assets.engine.runtime.sandbox import trusted_executor
from compoworld_assets.engine.runtime.service_runtime import ServiceRuntime
from compoworld_assets.engine.service_build import build_service
from compoworld_assets.engine.specs.importers import import_spec_file
from compoworld_assets.engine.specs.importers.operation_names import key_parameter, named_operation
from compoworld_assets.engine.specs.model import Effect
from compoworld_assets.engine.synthesis.offline import CODE_EFFECTS, OfflineSynthesizer
from compoworld_assets.engine.types import TYPE_KEY
from compoworld_assets.engine.world_model.offline import OfflineWorldModel

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "specs" / "openapi_rpc_widgets.json"


@pytest.mark.parametrize(("name", "tags", "expected"), [
    ("DescribeTrainingJob", (), (Effect.READ, "TrainingJob")),
    ("create_campaign", (), (Effect.CREATE, "Campaign")),
    ("ListEventTrackers", (), (Effect.LIST, "EventTracker")),
    ("get_priorities", (), (Effect.LIST, "Priority")),  # a read of a plural noun lists
    ("search_all_customers_by_email", (), (Effect.SEARCH, "Customer")),
    ("repos_get_branch", ("repos",), (Effect.READ, "Branch")),  # the verb after a tag prefix
    ("UpdateVocabulary", (), (Effect.UPDATE, "Vocabulary")),
    ("delete_a_key", (), (Effect.DELETE, "Key")),
])
def test_a_crud_verb_and_a_noun_name_an_effect_on_an_entity(name, tags, expected):
    assert named_operation(name, tags) == expected


@pytest.mark.parametrize("name", ["cancel_order", "get", "repos_transfer", "get_v2", "describe_x", "ping_server",
                                  "get_by_id", "remove_user_from_group", "add_tags_to_resource"])
def test_other_names_say_nothing(name):
    """No CRUD verb, no noun, or a link between records (added to / removed from) rather than a record."""
    assert named_operation(name, ("repos",)) is None


def test_the_key_is_the_required_parameter_named_after_the_entity():
    assert key_parameter("Campaign", ["campaignArn", "name"], ["campaignArn", "name"]) == "campaignArn"
    assert key_parameter("TrainingJob", ["TrainingJobName"], ["TrainingJobName"]) == "TrainingJobName"
    assert key_parameter("DataQualityJobDefinition", ["JobDefinitionName"], ["JobDefinitionName"]) == (
        "JobDefinitionName")  # the entity's last words
    assert key_parameter("Campaign", ["id"], ["id"]) == "id"  # a bare id when it is the only one
    assert key_parameter("Campaign", ["campaignArn"], []) is None  # optional: it does not name one record
    assert key_parameter("Campaign", ["id", "name"], ["id", "name"]) is None  # two bare candidates: ambiguous


@pytest.fixture(scope="module")
def spec():
    return import_spec_file(FIXTURE).specs[0]


def test_rpc_operations_become_crud_tools_of_the_entity_their_names_say(spec):
    effects = {t.name: (t.effect, t.entity) for t in spec.tools}
    assert effects == {
        "create_widget": (Effect.CREATE, "Widget"), "describe_widget": (Effect.READ, "Widget"),
        "list_widgets": (Effect.LIST, "Widget"), "update_widget": (Effect.UPDATE, "Widget"),
        "delete_widget": (Effect.DELETE, "Widget"),
        "pause_widget": (Effect.UPDATE, "Widget"),  # a status transition on the record its key names
        # no record: the health check reads a record of nothing the service stores (a query), rotate_keys is no CRUD verb
        "get_service_health": (Effect.QUERY, None), "rotate_keys": (Effect.ACTION, None),
    }
    assert [e.name for e in spec.entities] == ["Widget"]


def test_the_entity_comes_from_the_component_and_its_wrapped_properties_keep_their_types(spec):
    fields = {f.name: f for f in spec.entity("Widget").fields}
    # pause_widget's ``reason`` is stored with the paused record, as transitions store their other parameters;
    # ``widgetArn`` names the record in every keyed operation: it is the record's id, not a field beside it
    assert set(fields) == {"name", "status", "ownerEmail", "capacity", "reason"}
    assert fields["status"].enum == ["ACTIVE", "PAUSED", "RETIRED"]  # through allOf [$ref Status, description]
    assert fields["ownerEmail"].type == "email"
    assert fields["name"].description == "The widget's name."


def test_request_properties_written_as_allof_keep_their_types(spec):
    """A request body's ``{"allOf": [{"$ref": Name}, {"description"}]}`` property is one typed parameter, so
    the values drawn for it (and the arguments checked against it) see its type, pattern and bounds."""
    name = spec.tool("create_widget").parameter_properties()["name"]
    assert (name["type"], name["maxLength"], name["description"]) == ("string", 63, "A name for the widget.")
    assert name["pattern"] == "^[a-zA-Z0-9][a-zA-Z0-9\\-_]*"


def test_a_field_named_like_another_entitys_key_refers_to_it(tmp_path):
    """``Gadget.widgetArn`` holds a Widget's key, so it is typed as a reference to Widget records."""
    document = json.loads(FIXTURE.read_text())
    schemas = document["components"]["schemas"]
    schemas["Gadget"] = {"type": "object", "properties": {"widgetArn": {"type": "string"}, "size": {"type": "integer"}}}
    schemas["ListGadgetsResponse"] = {"type": "object", "properties": {
        "gadgets": {"type": "array", "items": {"$ref": "#/components/schemas/Gadget"}}}}
    document["paths"]["/#X-Target=WidgetService.ListGadgets"] = {"post": {"operationId": "ListGadgets", "responses": {
        "200": {"description": "ok", "content": {"application/json": {"schema": {
            "$ref": "#/components/schemas/ListGadgetsResponse"}}}}}}}
    path = tmp_path / "gadgets.json"
    path.write_text(json.dumps(document))
    spec = import_spec_file(path).specs[0]
    assert spec.entity("Gadget").field("widgetArn").type == "widget_service.Widget.id"


def test_keyed_tools_take_a_reference_to_the_record(spec):
    for name in ("describe_widget", "update_widget", "delete_widget"):
        tool = spec.tool(name)
        assert spec.key_parameter(tool) == "widgetArn"
        assert tool.parameter_properties()["widgetArn"][TYPE_KEY] == "widget_service.Widget.id"


def test_an_action_finds_its_record_through_the_entitys_key_name(spec):
    """``widgetArn`` names a Widget in the reads, so ``pause_widget(widgetArn)`` pauses that Widget."""
    pause = spec.tool("pause_widget")
    assert pause.parameter_properties()["widgetArn"][TYPE_KEY] == "widget_service.Widget.id"
    assert (pause.transition.kind, pause.transition.field, pause.transition.value) == ("status", "status", "PAUSED")


def test_every_crud_tool_verifies_and_writes_change_the_state(spec):
    build = build_service(spec, OfflineSynthesizer(), trusted_executor, OfflineWorldModel(), seed=7)
    assert sorted(build.verified_tools) == sorted(t.name for t in spec.tools if t.effect in CODE_EFFECTS)
    runtime = ServiceRuntime(spec, build.module, {v.tool: v.implementation for v in build.verdicts},
                             OfflineWorldModel())
    runtime.reset(build.seed_state)
    created = runtime.call("create_widget", {"name": "blue-widget", "capacity": 5})
    assert created["success"], created
    arn = created["data"]["id"]
    assert runtime.call("describe_widget", {"widgetArn": arn})["data"]["capacity"] == 5
    assert runtime.call("update_widget", {"widgetArn": arn, "capacity": 9})["success"]
    assert runtime.state().tables["Widget"][arn]["capacity"] == 9
    assert runtime.call("pause_widget", {"widgetArn": arn})["success"]
    assert runtime.state().tables["Widget"][arn]["status"] == "PAUSED"
    assert runtime.call("pause_widget", {"widgetArn": arn})["error"]["code"] == "conflict"  # already paused
    assert runtime.call("delete_widget", {"widgetArn": arn})["success"]
    assert not runtime.call("describe_widget", {"widgetArn": arn})["success"]


def test_a_method_the_path_gives_no_meaning_is_read_by_its_name(tmp_path):
    """``PUT /profiles`` (a collection) named ``UpdateProfile``, the profile's id in the body, updates that Profile;
    the entity is named after the resource, not after its component ``ProfileResponse``."""
    profile = {"$ref": "#/components/schemas/ProfileResponse"}
    ok = {"description": "ok", "content": {"application/json": {"schema": profile}}}
    body = {"required": True, "content": {"application/json": {"schema": {"type": "object", "required": ["ProfileId"],
            "properties": {"ProfileId": {"type": "string"}, "Email": {"type": "string", "format": "email"}}}}}}
    document = {
        "openapi": "3.0.0", "info": {"title": "Profiles", "version": "1"},
        "paths": {"/profiles": {
            "post": {"operationId": "CreateProfile", "requestBody": body, "responses": {"200": ok}},
            "put": {"operationId": "UpdateProfile", "requestBody": body, "responses": {"200": ok}}}},
        "components": {"schemas": {"ProfileResponse": {"type": "object", "properties": {
            "ProfileId": {"type": "string"}, "Email": {"type": "string", "format": "email"},
            "Name": {"type": "string"}}}}},
    }
    path = tmp_path / "profiles.json"
    path.write_text(json.dumps(document))
    spec = import_spec_file(path).specs[0]
    assert [e.name for e in spec.entities] == ["Profile"]
    update = spec.tool("update_profile")
    assert (update.effect, update.entity, spec.key_parameter(update)) == (Effect.UPDATE, "Profile", "ProfileId")
    assert spec.tool("create_profile").effect is Effect.CREATE


def test_a_component_too_thin_for_a_record_makes_no_entity(tmp_path):
    """A ``Widget`` component holding only its ARN describes no Widget record, nor does the list response
    around it: the widget reads stay actions. (``create_widget`` still makes Widget records of its own
    parameters, as any creating verb does.)"""
    document = json.loads(FIXTURE.read_text())
    schemas = document["components"]["schemas"]
    schemas["Widget"] = {"type": "object", "properties": {"widgetArn": schemas["Widget"]["properties"]["widgetArn"]}}
    del schemas["WidgetSummary"]["properties"]["status"], schemas["WidgetSummary"]["properties"]["name"]
    path = tmp_path / "thin.json"
    path.write_text(json.dumps(document))
    spec = import_spec_file(path).specs[0]
    [widget] = spec.entities
    assert {f.name for f in widget.fields} == {"name", "ownerEmail", "capacity"}  # create_widget's parameters
    assert spec.tool("create_widget").transition.kind == "create"
    assert {t.name for t in spec.tools if t.effect is Effect.QUERY} >= {"describe_widget", "list_widgets"}
