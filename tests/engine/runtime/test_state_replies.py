"""What a child sends back after a call that changed its state: the tables the call changed, whole, and the
counters; the whole state only when the call changed the set or order of tables or the service id. The parent
builds the new state from the one it holds and checks what it is sent as strictly as a whole state."""

from __future__ import annotations

import pytest

from compoworld_assets.engine.runtime.executor import SandboxLimits
from compoworld_assets.engine.runtime.sandbox import SandboxedExecutor
from compoworld_assets.engine.runtime.state import ServiceState

SOURCE = """
import typing


def rename(tables, args):
    tables["Item"]["it_1"]["name"] = args["name"]


def rename_to_end(tables, args):  # changed and moved to the end of its table
    tables["Item"]["it_1"] = dict(tables["Item"].pop("it_1"), name="Lamp, oak")


def add_table(tables, args):
    tables["Extra"] = {"ex_1": {"id": "ex_1"}}


def drop_table(tables, args):
    del tables["Order"]


def forge(change):
    # Service code can reach the worker's functions: what it sends back is checked by the parent, not trusted.
    def forged(tables, args):
        typing.sys.modules["__main__"].changed_tables = lambda before, after: change
        tables["Item"]["it_1"]["name"] = "forged"
    return forged


TOOLS = {"rename": rename, "rename_to_end": rename_to_end, "add_table": add_table, "drop_table": drop_table,
         "forge_unknown_table": forge({"Ghost": {}}), "forge_bad_record": forge({"Item": {"it_1": 7}})}


def handle(state, tool, args):
    if tool == "dump":
        return {"success": True, "data": state}
    TOOLS[tool](state["tables"], args)
    state["counters"]["Item"] += 1
    return {"success": True, "data": None}
"""


def start_state() -> ServiceState:
    return ServiceState(service_id="shop", tables={
        "Item": {"it_1": {"id": "it_1", "name": "Lamp"}, "it_2": {"id": "it_2", "name": "Desk"}},
        "Order": {"or_1": {"id": "or_1", "item_id": "it_2"}}}, counters={"Item": 2, "Order": 1})


@pytest.fixture
def executor(tmp_path):
    with SandboxedExecutor(SOURCE, SandboxLimits(call_timeout_s=5.0, memory_mb=256, scratch_root=tmp_path),
                           service_id="shop") as ex:
        ex.reset(start_state())
        yield ex


def hosted(executor: SandboxedExecutor) -> dict:
    """The child's own state, as a tool returns it."""
    return executor.call("dump", {})["data"]


@pytest.mark.parametrize("tool", ["rename", "rename_to_end", "add_table", "drop_table"])
def test_the_state_built_from_a_reply_is_the_child_state_in_its_order(executor, tool):
    before = executor.state()
    assert executor.call(tool, {"name": "Lamp, brass"})["success"]
    after = executor.state()
    child = hosted(executor)
    assert after.model_dump(mode="json") == child
    assert [list(after.tables)] + [list(t) for t in after.tables.values()] == \
        [list(child["tables"])] + [list(t) for t in child["tables"].values()]
    assert before == start_state()  # the state the executor was reset with is a value, left as it was
    if tool == "rename":  # only the changed table came back: the other is the very table the executor held
        assert after.tables["Order"] is before.tables["Order"]
    assert after.counters["Item"] == 3


def test_the_state_after_a_change_is_the_one_a_restart_and_a_restore_give_back(executor):
    assert executor.call("rename", {"name": "Lamp, brass"})["success"]
    changed = executor.state()
    executor.restore()
    assert executor.state() == start_state() and hosted(executor)["tables"]["Item"]["it_1"]["name"] == "Lamp"
    assert executor.call("rename", {"name": "Lamp, brass"})["success"]
    assert executor.state() == changed
    executor._stop_child()  # a child lost after a change restarts holding the last good state
    assert hosted(executor) == changed.model_dump(mode="json")


@pytest.mark.parametrize("tool", ["forge_unknown_table", "forge_bad_record"])
def test_a_forged_change_is_a_protocol_violation(executor, tool):
    result = executor.call(tool, {})
    assert not result["success"] and result["error"]["code"] == "sandbox_violation"
    assert executor.violations and executor.state() == start_state()
    assert hosted(executor)["tables"]["Item"]["it_1"]["name"] == "Lamp"  # restarted with the last good state
