import ast

import pytest
from toy_service import InProcessExecutor, helpdesk_seed_state, helpdesk_spec

from compoworld_assets.engine.synthesis.offline import OFFLINE_SYNTHESIZER_VERSION, OfflineSynthesizer

ALLOWED_IMPORTS = {"copy", "json", "re", "math", "datetime"}


@pytest.fixture
def service(offline_module, seed_state):
    executor = InProcessExecutor(offline_module.source)
    executor.reset(seed_state)
    return executor


def error_code(result):
    assert result["success"] is False, result
    return result["error"]["code"]


def test_module_lists_code_tools_and_world_model_tools(offline_module):
    assert offline_module.synthesizer == "offline"
    assert offline_module.synthesizer_version == OFFLINE_SYNTHESIZER_VERSION
    assert offline_module.unimplemented_tools == ["escalate_ticket"]
    assert "escalate_ticket" not in offline_module.implemented_tools
    assert len(offline_module.implemented_tools) == 9


def test_source_is_byte_stable_and_independent_of_tool_order(helpdesk):
    first = OfflineSynthesizer().synthesize(helpdesk).source
    assert OfflineSynthesizer().synthesize(helpdesk_spec()).source == first
    reordered = helpdesk.model_copy(update={"tools": list(reversed(helpdesk.tools))})
    body = first.split("\n", 3)[3]
    assert OfflineSynthesizer().synthesize(reordered).source.split("\n", 3)[3] == body


def test_source_changes_with_the_spec(helpdesk):
    changed = helpdesk.model_copy(deep=True)
    changed.tools[0].description = "Register a customer."
    assert OfflineSynthesizer().synthesize(changed).source != OfflineSynthesizer().synthesize(helpdesk).source


def test_source_imports_only_the_allowed_modules(offline_module):
    tree = ast.parse(offline_module.source)
    imported = {
        alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    }
    imported |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert imported <= ALLOWED_IMPORTS


def test_create_stores_a_record_under_the_next_id(service):
    result = service.call(
        "create_customer", {"name": "Zoe Xu", "email": "zoe@hooli.example.com", "tier": "pro"}
    )
    assert result == {
        "success": True,
        "data": {
            "id": "cus_0003",
            "name": "Zoe Xu",
            "email": "zoe@hooli.example.com",
            "tier": "pro",
            "active": False,
            "visits": None,
        },
    }
    state = service.state()
    assert state.counters["Customer"] == 3
    assert state.tables["Customer"]["cus_0003"] == result["data"]


@pytest.mark.parametrize(
    "args",
    [
        {"name": "Zoe", "email": "not-an-email", "tier": "pro"},
        {"name": "Zoe", "email": "zoe@hooli.example.com", "tier": "gold"},
        {"name": "Zoe", "email": "zoe@hooli.example.com", "tier": "pro", "visits": True},
        {"name": "Zoe", "email": "zoe@hooli.example.com", "tier": "pro", "visits": 1.5},
        {"name": "Zoe", "tier": "pro"},
        {"name": 7, "email": "zoe@hooli.example.com", "tier": "pro"},
    ],
)
def test_create_rejects_invalid_arguments_without_storing(service, args):
    assert error_code(service.call("create_customer", args)) == "invalid_arguments"
    assert sorted(service.state().tables["Customer"]) == ["cus_0001", "cus_0002"]


def test_create_applies_sets_and_checks_references(service):
    opened = service.call("open_ticket", {"customer_id": "cus_0002", "subject": "Refund", "priority": 1})
    assert opened["data"]["status"] == "open" and opened["data"]["id"] == "tic_0002"
    assert (
        error_code(service.call("open_ticket", {"customer_id": "cus_0404", "subject": "x", "priority": 1}))
        == "not_found"
    )
    assert (
        error_code(
            service.call(
                "open_ticket", {"customer_id": "cus_0001", "subject": "x", "priority": 1, "colour": "red"}
            )
        )
        == "invalid_arguments"
    )
    assert (
        error_code(
            service.call(
                "open_ticket", {"customer_id": "cus_0001", "subject": "x", "priority": 1, "due": "2026-13-40"}
            )
        )
        == "invalid_arguments"
    )
    assert sorted(service.state().tables["Ticket"]) == ["tic_0001", "tic_0002"]


def test_read_finds_records_and_reports_missing_ones(service, seed_state):
    assert (
        service.call("get_customer", {"customer_id": "cus_0001"})["data"]
        == seed_state.tables["Customer"]["cus_0001"]
    )
    assert error_code(service.call("get_customer", {"customer_id": "cus_0404"})) == "not_found"
    assert error_code(service.call("get_customer", {})) == "invalid_arguments"


def test_list_filters_sorts_and_honours_limit(service):
    service.call(
        "create_customer", {"name": "Zoe Xu", "email": "zoe@hooli.example.com", "tier": "pro", "active": True}
    )
    everyone = service.call("list_customers", {})["data"]
    assert [c["id"] for c in everyone["items"]] == ["cus_0001", "cus_0002", "cus_0003"] and everyone[
        "count"
    ] == 3
    pros = service.call("list_customers", {"tier": "pro", "active": True})["data"]
    assert [c["id"] for c in pros["items"]] == ["cus_0001", "cus_0003"]
    assert service.call("list_customers", {"limit": 1})["data"] == {
        "items": [everyone["items"][0]],
        "count": 1,
    }
    assert error_code(service.call("list_customers", {"limit": 0})) == "invalid_arguments"


def test_search_matches_text_fields_case_insensitively(service):
    found = service.call("search_customers", {"query": "GLOBEX"})["data"]
    assert [c["id"] for c in found["items"]] == ["cus_0002"]
    assert service.call("search_customers", {"query": "nobody"})["data"] == {"items": [], "count": 0}


def test_update_changes_only_the_fields_given(service, seed_state):
    result = service.call("update_customer", {"customer_id": "cus_0001", "visits": 9})
    assert result["data"] == {**seed_state.tables["Customer"]["cus_0001"], "visits": 9}
    closed = service.call("close_ticket", {"ticket_id": "tic_0001"})["data"]
    assert closed == {**seed_state.tables["Ticket"]["tic_0001"], "status": "closed"}
    assert (
        error_code(service.call("update_customer", {"customer_id": "cus_0404", "visits": 1})) == "not_found"
    )


def test_delete_removes_the_record(service):
    assert service.call("delete_customer", {"customer_id": "cus_0002"}) == {
        "success": True,
        "data": {"deleted": "cus_0002"},
    }
    assert error_code(service.call("get_customer", {"customer_id": "cus_0002"})) == "not_found"
    assert error_code(service.call("delete_customer", {"customer_id": "cus_0002"})) == "not_found"


def test_action_and_unknown_tools_answer_unknown_tool(service):
    assert error_code(service.call("escalate_ticket", {"ticket_id": "tic_0001"})) == "unknown_tool"
    assert error_code(service.call("no_such_tool", {})) == "unknown_tool"


def test_same_state_and_arguments_give_the_same_result(service, seed_state):
    args = {"name": "Zoe Xu", "email": "zoe@hooli.example.com", "tier": "free"}
    first = service.call("create_customer", args)
    service.reset(seed_state)
    assert service.call("create_customer", args) == first


def test_required_strings_a_create_is_not_given_are_set_by_the_service(helpdesk):
    """A required URL and an untyped code the create does not take get values the service sets (type-valid,
    unique per record), not the empty string no later step could use; the module stays a function of the spec."""
    from compoworld_assets.engine.specs.model import FieldSpec
    from compoworld_assets.engine.types import value_matches_type

    extra = [FieldSpec(name="portal_url", json_type="string", type="url"),
             FieldSpec(name="account_code", json_type="string")]
    entities = [e.model_copy(update={"fields": [*e.fields, *extra]}) if e.name == "Customer" else e
                for e in helpdesk.entities]
    spec = helpdesk.model_copy(update={"entities": entities})
    module = OfflineSynthesizer().synthesize(spec)
    assert module.source == OfflineSynthesizer().synthesize(spec).source
    executor = InProcessExecutor(module.source)
    executor.reset(helpdesk_seed_state())
    made = [executor.call("create_customer", {"name": name, "email": f"{name.lower()}@hooli.example.com",
                                               "tier": "pro"})["data"] for name in ("Zoe", "Ann")]
    for record in made:
        assert record["portal_url"].endswith("/" + record["id"]) and value_matches_type("url", record["portal_url"])
        assert record["account_code"].endswith("-" + record["id"])
        assert executor.state().tables["Customer"][record["id"]] == record
    assert made[0]["portal_url"] != made[1]["portal_url"]
