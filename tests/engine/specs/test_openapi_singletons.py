"""Singleton sub-resources (``/branches/{branch}/protection``): one record per parent, read, updated and
deleted by code that verifies against the seeded state; lists, pages and writes of nothing stay out."""

from __future__ import annotations

import json

import pytest

from compoworld_assets.engine.runtime.sandbox import trusted_executor
from compoworld_assets.engine.service_build import build_service
from compoworld_assets.engine.specs.importers import import_spec_file
from compoworld_assets.engine.specs.model import Effect
from compoworld_assets.engine.synthesis.offline import CODE_EFFECTS, OfflineSynthesizer
from compoworld_assets.engine.types import TYPE_KEY
from compoworld_assets.engine.world_model.offline import OfflineWorldModel

BRANCH = {"type": "object", "properties": {"name": {"type": "string"}, "sha": {"type": "string"}}}
PROTECTION = {"type": "object", "properties": {
    "enforce_admins": {"type": "boolean"}, "required_reviews": {"type": "integer", "minimum": 0},
    "mode": {"type": "string", "enum": ["strict", "loose"]}}}
BRANCH_PARAM = [{"name": "branch", "in": "path", "required": True, "schema": {"type": "string"}}]


def _json(schema: dict) -> dict:
    return {"description": "ok", "content": {"application/json": {"schema": schema}}}


def _body(schema: dict) -> dict:
    return {"required": True, "content": {"application/json": {"schema": schema}}}


DOCUMENT = {
    "openapi": "3.0.0", "info": {"title": "Code Host", "version": "1"},
    "paths": {
        "/branches": {"get": {"operationId": "listBranches",
                              "responses": {"200": _json({"type": "array", "items": BRANCH})}}},
        "/branches/{branch}": {"parameters": BRANCH_PARAM,
                               "get": {"operationId": "getBranch", "responses": {"200": _json(BRANCH)}}},
        "/branches/{branch}/protection": {
            "parameters": BRANCH_PARAM,
            "get": {"operationId": "getBranchProtection", "responses": {"200": _json(PROTECTION)}},
            "put": {"operationId": "updateBranchProtection", "requestBody": _body(PROTECTION),
                    "responses": {"200": _json(PROTECTION)}},
            "delete": {"operationId": "deleteBranchProtection", "responses": {"204": {"description": "gone"}}},
        },
        "/branches/{branch}/protection/contexts": {
            "parameters": BRANCH_PARAM,
            # A write of a bare list names no field of the record: it would change nothing as code.
            "get": {"operationId": "getContexts", "responses": {"200": _json(PROTECTION)}},
            "put": {"operationId": "contextsPut", "requestBody": _body({"type": "array", "items": {"type": "string"}}),
                    "responses": {"200": _json(PROTECTION)}},
        },
        "/branches/{branch}/comments": {
            "parameters": BRANCH_PARAM,
            # One page of a list (an array and a paging token) is no record of the branch.
            "get": {"operationId": "listComments", "responses": {"200": _json({"type": "object", "properties": {
                "comments": {"type": "array", "items": {"type": "string"}}, "nextToken": {"type": "string"}}})}},
        },
        "/branches/{branch}/merge": {
            "parameters": BRANCH_PARAM,
            "post": {"operationId": "mergeBranch", "responses": {"200": _json(BRANCH)}},
        },
    },
}


@pytest.fixture(scope="module")
def code_host(tmp_path_factory):
    path = tmp_path_factory.mktemp("specs") / "code_host.json"
    path.write_text(json.dumps(DOCUMENT))
    result = import_spec_file(path)
    assert result.quarantined == []
    return result.specs[0]


def test_a_singleton_sub_resource_is_an_entity_sharing_its_parents_ids(code_host):
    entities = {e.name for e in code_host.entities}
    assert "BranchComment" not in entities  # a page of a list
    protection = code_host.entity("BranchProtection")
    assert [f.name for f in protection.fields] == ["enforce_admins", "required_reviews", "mode"]
    assert protection.id_prefix == code_host.entity("Branch").id_prefix


def test_its_methods_read_update_and_delete_the_record_the_parent_key_names(code_host):
    effects = {t.name: (t.effect, t.entity) for t in code_host.tools}
    assert effects["get_branch_protection"] == (Effect.READ, "BranchProtection")
    assert effects["update_branch_protection"] == (Effect.UPDATE, "BranchProtection")
    assert effects["delete_branch_protection"] == (Effect.DELETE, "BranchProtection")
    assert effects["contexts_put"] == (Effect.ACTION, None)
    assert effects["list_comments"] == (Effect.QUERY, None)
    assert effects["merge_branch"] == (Effect.ACTION, None)
    key = code_host.tool("get_branch_protection").parameter_properties()["branch"]
    assert key[TYPE_KEY] == "code_host.BranchProtection.id"
    assert code_host.key_parameter(code_host.tool("update_branch_protection")) == "branch"


def test_singleton_tools_verify_against_the_seeded_state(code_host):
    build = build_service(code_host, OfflineSynthesizer(), trusted_executor, OfflineWorldModel(), seed=3)
    singleton = {t.name for t in code_host.tools if t.entity == "BranchProtection"}
    assert singleton <= set(build.verified_tools)
    assert sorted(build.verified_tools) == sorted(t.name for t in code_host.tools if t.effect in CODE_EFFECTS)
    seeded = build.seed_state.tables
    assert set(seeded["BranchProtection"]) <= set(seeded["Branch"])
