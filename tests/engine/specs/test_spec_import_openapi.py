"""OpenAPI importer on real APIs.guru specs and broken documents."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from compoworld_assets.engine.specs.importers.openapi import import_openapi, schema_matches_noun
from compoworld_assets.engine.specs.model import Effect
from compoworld_assets.engine.types import TYPE_KEY

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "specs"
ONEPASSWORD = FIXTURES / "openapi_1password_connect.json"


@pytest.fixture(scope="module")
def onepassword():
    result = import_openapi(ONEPASSWORD)
    assert result.quarantined == [] and len(result.specs) == 1
    return result.specs[0]


def test_service_metadata_comes_from_info(onepassword):
    assert onepassword.id == "api_1_password_connect"
    assert onepassword.domain == "security"
    assert onepassword.version == "1.5.7"
    assert onepassword.source.kind == "openapi" and onepassword.source.location == str(ONEPASSWORD)


def test_resources_become_entities_with_fields(onepassword):
    assert [e.name for e in onepassword.entities] == ["Activity", "File", "Item", "Vault"]
    vault = onepassword.entity("Vault")
    assert vault.field("id") is None
    assert vault.field("createdAt").type == "datetime"
    assert vault.field("name").json_type == "string"


def test_effects_follow_method_and_path_shape(onepassword):
    effects = {t.name: (t.effect, t.entity) for t in onepassword.tools}
    assert effects["create_vault_item"] == (Effect.CREATE, "Item")
    assert effects["get_vault_item_by_id"] == (Effect.READ, "Item")
    assert effects["update_vault_item"] == (Effect.UPDATE, "Item")  # PUT item
    assert effects["patch_vault_item"] == (Effect.UPDATE, "Item")  # PATCH item
    assert effects["delete_vault_item"] == (Effect.DELETE, "Item")
    assert effects["get_vaults"] == (Effect.SEARCH, "Vault")  # has a ``filter`` query parameter
    assert effects["get_item_files"] == (Effect.LIST, "File")
    assert effects["get_api_activity"] == (Effect.LIST, "Activity")  # /activity returns APIRequest records
    assert effects["get_heartbeat"] == (Effect.QUERY, None)
    assert effects["download_file_by_id"] == (Effect.QUERY, None)  # GET on a sub-resource without a schema: a query


def test_path_ids_are_string_references_to_their_entities(onepassword):
    tool = onepassword.tool("delete_vault_item")
    assert tool.input_types() == {
        "vaultUuid": "api_1_password_connect.Vault.id",
        "itemUuid": "api_1_password_connect.Item.id",
    }
    assert tool.parameter_properties()["itemUuid"]["type"] == "string"
    assert onepassword.key_parameter(tool) == "itemUuid"
    assert set(tool.required_parameters()) == {"vaultUuid", "itemUuid"}


def test_action_returns_come_from_the_success_response(onepassword):
    returns = onepassword.tool("get_server_health").returns
    assert returns["type"] == "object" and returns["required"] == ["name", "version"]
    assert set(returns["properties"]["dependencies"]["items"]["properties"]) == {"message", "service", "status"}
    assert onepassword.tool("get_heartbeat").returns == {"type": "string", "example": "."}


def test_crud_returns_follow_the_entity_record_not_the_response(onepassword):
    """The response's id ``pattern`` and non-nullable optional attributes would reject stored records."""
    vault = onepassword.entity("Vault")
    record = vault.record_schema(onepassword.id)
    read = onepassword.tool("get_vault_by_id").returns
    assert read == record
    assert read["properties"]["id"] == {"type": "string", TYPE_KEY: "api_1_password_connect.Vault.id"}
    assert {"type": "null"} in read["properties"]["description"]["anyOf"]
    page = onepassword.tool("get_vaults").returns
    assert page["required"] == ["items", "count"] and page["properties"]["items"]["items"] == record
    item_record = onepassword.entity("Item").record_schema(onepassword.id)
    assert onepassword.tool("create_vault_item").returns == item_record
    assert onepassword.tool("patch_vault_item").returns == item_record
    assert onepassword.tool("delete_vault_item").returns["properties"]["deleted"] == {
        "type": "string",
        TYPE_KEY: "api_1_password_connect.Item.id",
    }


def test_array_fields_keep_their_item_schemas(onepassword):
    urls = onepassword.entity("Item").field("urls")
    assert urls.items is not None and urls.items["required"] == ["href"]
    assert set(urls.items["properties"]) == {"href", "label", "primary"}
    assert onepassword.entity("Item").field("tags").items == {"type": "string"}
    stored = onepassword.entity("Item").record_schema(onepassword.id)["properties"]["urls"]["anyOf"][0]
    assert stored["items"] == urls.items


def test_all_of_request_bodies_become_field_parameters(onepassword):
    params = onepassword.tool("create_vault_item").parameter_properties()
    assert "body" not in params
    assert {"category", "vault", "tags", "urls", "fields", "files"} <= set(params)


def test_yaml_document_and_operation_ids():
    result = import_openapi(FIXTURES / "openapi_xero_files.yaml")
    spec = result.specs[0]
    assert spec.id == "xero_files_api" and spec.domain == "financial"
    assert spec.tool("create_folder").effect is Effect.CREATE
    assert spec.tool("get_folder").input_types() == {"FolderId": "xero_files_api.Folder.id"}
    assert spec.tool("get_folder").output_types()["Email"] == "email"
    # named after its resource /Files, not its component FileObject
    assert spec.entity("File").field("FolderId").type == "xero_files_api.Folder.id"
    assert spec.entity("Folder").field("Id") is None


def test_broken_ref_quarantines_only_its_operation():
    path = FIXTURES / "malformed_openapi_broken_ref.json"
    result = import_openapi(path)
    spec = result.specs[0]
    assert spec.id == "broken_pets" and spec.domain == "entertainment"
    assert [t.name for t in spec.tools] == ["list_pets", "create_pet", "show_pet_by_id", "create_owner"]
    [bad] = result.quarantined
    assert bad.reason == "broken $ref '#/components/parameters/MissingPetId'"
    assert bad.location == f"{path}#/paths/~1pets~1{{petId}}/delete"
    assert "deletePet" in bad.fragment


def test_recursive_schemas_are_cut_not_looped():
    spec = import_openapi(FIXTURES / "malformed_openapi_broken_ref.json").specs[0]
    pets = spec.entity("Owner").field("pets").items
    nested_pet = pets["properties"]["owner"]["properties"]["pets"]["items"]
    assert nested_pet["type"] == "object" and "not expanded" in nested_pet["description"]
    assert spec.tool("show_pet_by_id").parameter_properties()["petId"] == {
        "type": "string",
        TYPE_KEY: "broken_pets.Pet.id",
    }


def test_service_id_override_and_fallback_names():
    doc = json.loads((FIXTURES / "malformed_openapi_broken_ref.json").read_text())
    del doc["paths"]["/pets"]["get"]["operationId"]
    spec = import_openapi(doc, location="mem", service_id="Pet Store").specs[0]
    assert spec.id == "pet_store"
    assert spec.tool("get_pets").effect is Effect.LIST


def test_search_effect_from_query_parameter():
    doc = json.loads((FIXTURES / "malformed_openapi_broken_ref.json").read_text())
    doc["paths"]["/pets"]["get"]["parameters"] = [{"name": "q", "in": "query", "schema": {"type": "string"}}]
    assert import_openapi(doc, location="mem").specs[0].tool("list_pets").effect is Effect.SEARCH


@pytest.mark.parametrize(
    ("document", "reason"),
    [
        ([1, 2], "OpenAPI document is not an object"),
        ({"swagger": "2.0", "paths": {}}, "unsupported OpenAPI version '2.0' (3.x required)"),
        ({"openapi": "3.0.0", "info": {"title": "x"}}, "OpenAPI document has no paths object"),
        ({"openapi": "3.0.0", "info": {"title": "x"}, "paths": {}}, "no importable operations"),
    ],
)
def test_unusable_documents_are_quarantined_whole(document, reason):
    result = import_openapi(document, location="doc.json")
    assert result.specs == [] and [q.reason for q in result.quarantined] == [reason]


def test_unreadable_path_is_quarantined(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("openapi: [unclosed")
    result = import_openapi(bad)
    assert result.specs == [] and result.quarantined[0].reason.startswith("invalid YAML")


def test_duplicate_operation_ids_are_renamed():
    doc = json.loads((FIXTURES / "malformed_openapi_broken_ref.json").read_text())
    doc["paths"]["/owners"]["post"]["operationId"] = "createPet"
    names = [t.name for t in import_openapi(copy.deepcopy(doc), location="mem").specs[0].tools]
    assert names == ["list_pets", "create_pet", "show_pet_by_id", "create_pet_2"]


def test_schema_noun_matching():
    assert schema_matches_noun("Pet", "pets")
    assert schema_matches_noun("PublicUser", "users")
    assert schema_matches_noun("CreditCardResponse", "credit-cards")
    assert not schema_matches_noun("Error", "pets")
    assert not schema_matches_noun("Petition", "pets")


def test_decorated_schema_names_still_name_their_resource():
    assert schema_matches_noun("ResourceBlockViewModel", "blocks")
    assert schema_matches_noun("CompanyDomainViewModel", "domains")
    assert schema_matches_noun("UserTaskListCompact", "user_task_lists")
    assert schema_matches_noun("organization-simple", "organizations")
    assert not schema_matches_noun("CompanyDomainListViewModel", "domains"), "a list wrapper is not one item"
    assert not schema_matches_noun("PetitionView", "pets")


def test_a_bodyless_success_answers_with_where_the_resource_is():
    """A ``202 Accepted`` job tells the client only its ``Operation-Location``; a resolver answers ``302 Found``."""
    from compoworld_assets.engine.specs.importers import import_document

    accepted = {"202": {"description": "Accepted.", "headers": {
        "Operation-Location": {"description": "URL to poll.", "schema": {"type": "string"}},
        "x-request-id": {"schema": {"type": "string"}}}}, "default": {"description": "Error."}}
    found = {"302": {"description": "Found", "content": {"application/json": {"schema": {
        "type": "object", "properties": {"location": {"type": "string"}}}}}}}
    document = {"openapi": "3.0.0", "info": {"title": "Reader", "version": "1"}, "paths": {
        "/read": {"post": {"operationId": "batchReadFile", "responses": accepted}},
        "/resolve": {"get": {"operationId": "resolveLink", "responses": found}}}}
    [spec] = import_document(document, location="reader.json").specs
    returns = spec.tool("batch_read_file").returns
    assert returns["required"] == ["Operation-Location"] and list(returns["properties"]) == ["Operation-Location"]
    assert returns["properties"]["Operation-Location"][TYPE_KEY] == "url"
    assert spec.tool("resolve_link").returns["properties"] == {"location": {"type": "string"}}

    broken = {"201": {"description": "Created.", "headers": {"Location": {"$ref": "#/components/headers/Nope"}}}}
    document["paths"]["/links"] = {"post": {"operationId": "shortenLink", "responses": broken}}
    result = import_document(document, location="reader.json")
    assert result.specs[0].tool("shorten_link").returns["properties"]["Location"]["description"] == ""
