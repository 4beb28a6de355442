"""MCP tools/list and CompoWorld gateway importers."""

from __future__ import annotations

from pathlib import Path

from compoworld_assets.engine.specs.importers import import_spec_file
from compoworld_assets.engine.specs.importers.compoworld import import_compoworld_tools, split_service_prefix
from compoworld_assets.engine.specs.importers.mcp import import_mcp_tools
from compoworld_assets.engine.specs.model import Effect

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "specs"


def test_mcp_filesystem_annotations_veto_effects():
    result = import_spec_file(FIXTURES / "mcp_filesystem.json")
    [spec] = result.specs
    assert spec.source.kind == "mcp" and result.quarantined == []
    effects = {t.name: t.effect for t in spec.tools}
    assert effects["create_directory"] is Effect.CREATE
    assert effects["write_file"] is Effect.ACTION  # destructive, no entity
    assert effects["list_directory"] is Effect.QUERY  # singular noun: not a collection listing, but a read
    assert effects["read_text_file"] is Effect.QUERY
    assert spec.tool("read_text_file").input_types() == {"path": "file_path"}
    assert spec.tool("get_file_info").output_types() == {"created": "datetime", "modified": "datetime"}


def test_mcp_json_rpc_wrapper_and_entities():
    [spec] = import_spec_file(FIXTURES / "mcp_github_rpc.json").specs
    assert spec.id == "mcp_github_rpc"
    effects = {t.name: (t.effect, t.entity) for t in spec.tools}
    assert effects["create_gist"] == (Effect.CREATE, "Gist")
    assert effects["get_gist"] == (Effect.READ, "Gist")
    assert effects["update_gist"] == (Effect.UPDATE, "Gist")
    assert effects["list_gists"] == (Effect.LIST, "Gist")
    assert effects["get_issue"] == (Effect.QUERY, None)  # numeric issue_number is no entity key: a query
    assert effects["delete_file"] == (Effect.ACTION, None)  # no File entity in this service
    assert spec.description and spec.tool("get_gist").description.startswith("Get gist content")
    assert [f.name for f in spec.entity("Gist").fields] == ["description", "filename", "content", "public"]


def test_read_only_hint_vetoes_a_mutating_verb():
    tools = {
        "tools": [
            {
                "name": "create_note",
                "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
                "annotations": {"readOnlyHint": True},
            },
            {"name": "bad", "inputSchema": "nope"},
            {"inputSchema": {"type": "object"}},
        ]
    }
    result = import_mcp_tools(tools, location="notes.json")
    [spec] = result.specs
    assert spec.tool("create_note").effect is Effect.QUERY  # read-only: it may change nothing
    assert [q.reason for q in result.quarantined] == [
        "tool 'bad': parameters is not an object (got str)",
        "tool has no name",
    ]
    assert result.quarantined[0].location == "notes.json#/tools/1"


def test_compoworld_gateway_splits_services_by_longest_prefix():
    result = import_spec_file(FIXTURES / "compoworld_gateway.json")
    by_id = {s.id: s for s in result.specs}
    assert sorted(by_id) == ["gmail", "service_desk", "servicem8"]
    servicem8 = by_id["servicem8"]
    assert servicem8.domain == "field_service" and servicem8.name == "ServiceM8"
    assert [t.name for t in servicem8.tools] == ["create_job", "get_job", "list_jobs", "create_job_payment"]
    assert servicem8.tool("create_job_payment").entity == "JobPayment"
    assert servicem8.tool("create_job_payment").input_types() == {
        "job_id": "servicem8.Job.id",
        "amount": "money",
        "paid_on": "date",
    }
    assert servicem8.tool("get_job").effect is Effect.READ
    assert servicem8.entity("Job").field("job_address").type == "address"
    assert by_id["service_desk"].tool("delete_ticket").effect is Effect.DELETE
    assert by_id["gmail"].tool("send_email").input_types() == {"to": "email"}
    [orphan] = result.quarantined
    assert orphan.reason == "tool name 'orphan' has no service prefix"
    assert orphan.location.endswith("#/tools/7")


def test_compoworld_list_without_header_uses_first_token_or_known_services():
    tools = [{"name": "acme_crm_add_contact", "parameters": {"type": "object", "properties": {}}}]
    assert import_compoworld_tools(tools, location="l.json").specs[0].id == "acme"
    spec = import_compoworld_tools(tools, location="l.json", known_services=["acme_crm"]).specs[0]
    assert spec.id == "acme_crm" and spec.tools[0].name == "add_contact"
    assert split_service_prefix("nounderscore", []) is None
