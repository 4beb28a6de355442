"""The agent interface: tools shown per mode, meta tools, envelopes, records and the final answer."""

import json

import pytest
from toy_world import InProcessWorld, toy_task, toy_world_factory

from compoworld_assets.engine.agents.interface import (
    GATEWAY_TOOLS,
    SUBMIT_ANSWER,
    AgentInterface,
    strip_types,
)
from compoworld_assets.engine.agents.world import environment_versions, services_to_mount


def names(tools):
    return [t["function"]["name"] for t in tools]


@pytest.fixture
def task():
    return toy_task()


def test_gateway_mode_shows_four_meta_tools_and_submit(task):
    interface = AgentInterface(task, toy_world_factory(task), "gateway")
    assert names(interface.tools) == [*GATEWAY_TOOLS, SUBMIT_ANSWER]


def test_direct_mode_lists_needed_and_distractor_tools_without_type_annotations(task):
    world = toy_world_factory(task)
    interface = AgentInterface(task.model_copy(update={"distractor_services": []}), world, "direct")
    tool_names = names(interface.tools)
    assert "crm_search_contacts" in tool_names and "helpdesk_open_ticket" in tool_names
    assert not any(n.startswith("mail_") for n in tool_names)
    assert tool_names[-1] == SUBMIT_ANSWER
    assert "x-cw-type" not in json.dumps(interface.tools)
    with_distractors = names(AgentInterface(task, world, "direct").tools)
    assert "mail_send_email" in with_distractors


def test_gateway_discovery_and_calls(task):
    world = toy_world_factory(task)
    interface = AgentInterface(task, world, "gateway")
    services = interface.execute("list_services", {}).result
    assert [s["id"] for s in services["data"]] == ["crm", "helpdesk", "mail"]
    listed = interface.execute("list_tools", {"service": "crm"}).result["data"]
    assert {"name", "description"} == set(listed[0]) and "crm_search_contacts" in [t["name"] for t in listed]
    described = interface.execute("describe_tool", '{"tool": "helpdesk_open_ticket"}').result["data"]
    assert "customer_email" in described["parameters"]["properties"]
    assert "x-cw-type" not in json.dumps(described)
    outcome = interface.execute("call_tool", {"tool_name": "crm_search_contacts",
                                              "arguments": {"query": "zzz-nobody"}})
    assert outcome.result["success"] and outcome.result["data"]["items"] == []
    assert outcome.record is not None and (outcome.record.service_id, outcome.record.tool) == \
        ("crm", "search_contacts")
    assert outcome.record.result == outcome.result


@pytest.mark.parametrize("name,arguments,code", [
    ("list_tools", {"service": "nope"}, "unknown_tool"),
    ("describe_tool", {"tool": "crm_nope"}, "unknown_tool"),
    ("call_tool", {"tool_name": "nope_tool", "arguments": {}}, "unknown_tool"),
    ("call_tool", {"tool_name": "crm_get_contact", "arguments": [1]}, "invalid_arguments"),
    ("crm_get_contact", {"contact_id": "x"}, "unknown_tool"),
    ("list_services", "{not json", "invalid_arguments"),
    (SUBMIT_ANSWER, {"answer": "text"}, "invalid_arguments"),
])
def test_gateway_errors_are_envelopes_and_run_nothing(task, name, arguments, code):
    outcome = AgentInterface(task, toy_world_factory(task), "gateway").execute(name, arguments)
    assert outcome.result["success"] is False and outcome.result["error"]["code"] == code
    assert outcome.record is None and outcome.answer is None


def test_direct_calls_record_and_unlisted_tools_are_unknown(task):
    interface = AgentInterface(task.model_copy(update={"distractor_services": []}), toy_world_factory(task),
                               "direct")
    outcome = interface.execute("crm_get_contact", {"contact_id": "cont_0001"})
    assert outcome.result["success"] and outcome.record.arguments == {"contact_id": "cont_0001"}
    assert interface.execute("mail_send_email", {}).result["error"]["code"] == "unknown_tool"
    assert interface.execute("call_tool", {"tool_name": "crm_get_contact"}).result["error"]["code"] == \
        "unknown_tool"


def test_submit_answer_carries_the_answer(task):
    outcome = AgentInterface(task, toy_world_factory(task), "direct").execute(
        SUBMIT_ANSWER, {"answer": {"ticket_id": "tkt_0005"}})
    assert outcome.result["success"] and outcome.answer == {"ticket_id": "tkt_0005"}


def test_prompts_state_today_rules_and_report_fields(task):
    messages = AgentInterface(task, toy_world_factory(task), "gateway").initial_messages()
    assert [m["role"] for m in messages] == ["system", "user"]
    assert task.today in messages[0]["content"] and SUBMIT_ANSWER in messages[0]["content"]
    assert task.instruction in messages[1]["content"]
    assert task.house_rules[0] in messages[1]["content"] and "ticket_id" in messages[1]["content"]


def test_needed_services_must_be_mounted(task):
    with pytest.raises(ValueError, match="not mounted"):
        AgentInterface(task, InProcessWorld(("crm", "mail")), "gateway")


def test_strip_types_removes_only_the_type_keyword():
    schema = {"type": "object", "properties": {"a": {"type": "string", "x-cw-type": "email"}},
              "anyOf": [{"x-cw-type": "date", "type": "string"}]}
    assert strip_types(schema) == {"type": "object", "properties": {"a": {"type": "string"}},
                                   "anyOf": [{"type": "string"}]}


def test_mounts_pad_deterministically_with_the_task_services_first(task):
    available = [f"svc{i:02d}" for i in range(30)] + ["crm", "helpdesk", "mail"]
    mounted = services_to_mount(task, available, mount_size=15)
    assert len(mounted) == 15 and {"crm", "helpdesk", "mail"} <= set(mounted)
    assert mounted == services_to_mount(task, list(reversed(available)), mount_size=15)
    other = services_to_mount(task.model_copy(update={"task_id": "toy-2"}), available, mount_size=15)
    assert other != mounted
    assert services_to_mount(task, ["crm"], mount_size=15) == ["crm", "helpdesk", "mail"]


def test_environment_versions_name_module_hashes(task):
    versions = environment_versions(toy_world_factory(task))
    assert sorted(versions) == ["crm", "helpdesk", "mail"]
    assert len(versions["crm"]["module_hash"]) == 64 and versions["crm"]["version"]


def test_qualified_names_are_each_specs_tools_and_a_clash_between_services_is_refused():
    """Names are worked out once per spec object (a gateway episode names every mounted service's tools); what an
    episode sees is still checked across its services."""
    from compoworld_assets.engine.agents.interface import _qualified_names
    from compoworld_assets.engine.library import builtin_spec

    crm, mail = builtin_spec("crm"), builtin_spec("mail")
    names = _qualified_names({"crm": crm, "mail": mail})
    assert names == {f"{s.id}_{t.name}": (s.id, t.name) for s in (crm, mail) for t in s.tools}
    names["crm_extra"] = ("crm", "extra")  # an episode's own dict: the next one is not changed by it
    assert "crm_extra" not in _qualified_names({"crm": crm, "mail": mail})
    tool = crm.tools[0]
    first = crm.model_copy(update={"tools": [tool.model_copy(update={"name": "a_b"})]})
    second = mail.model_copy(update={"id": "crm_a", "tools": [tool.model_copy(update={"name": "b"})]})
    with pytest.raises(ValueError, match=r"'crm_a_b' is ambiguous: \('crm', 'a_b'\) and \('crm_a', 'b'\)"):
        _qualified_names({"crm": first, "crm_a": second})
    renamed = _qualified_names({"other": crm})  # mounted under another id: named as that service's tools
    assert set(renamed.values()) == {("other", t.name) for t in crm.tools}
