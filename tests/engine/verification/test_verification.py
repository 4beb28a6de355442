import textwrap

import pytest
from toy_service import InProcessExecutor

from compoworld_assets.engine.runtime.state import ServiceState
from compoworld_assets.engine.verification import generate_cases, verify_service

SEED = 11


def broken(module, override: str):
    """The offline module with one tool replaced by ``override`` (which re-registers it in TOOLS)."""
    return module.model_copy(update={"source": module.source + "\n\n" + textwrap.dedent(override)})


def verify(helpdesk, module, seed_state):
    return verify_service(helpdesk, module, InProcessExecutor, seed_state, SEED)


def failed_checks(verification, tool):
    return [c.name for c in verification.verdict(tool).failures()]


def test_cases_use_stored_ids_and_cover_invalid_arguments(helpdesk, seed_state):
    cases = generate_cases(helpdesk, helpdesk.tool("open_ticket"), seed_state, SEED)
    valid = [c for c in cases if c.kind == "valid"]
    assert {c.name for c in valid} == {"valid[required]", "valid[all]"}
    assert all(c.args["customer_id"] in seed_state.tables["Customer"] for c in valid)
    assert valid[0].args["customer_id"] != valid[1].args["customer_id"]
    names = {c.name for c in cases if c.kind == "invalid"}
    assert {
        "missing_required[customer_id]",
        "missing_required[subject]",
        "wrong_type[priority]",
        "unknown_id[customer_id]",
        "unknown_parameter",
    } <= names
    assert generate_cases(helpdesk, helpdesk.tool("open_ticket"), seed_state, SEED) == cases


def test_list_filters_come_from_a_stored_record(helpdesk, seed_state):
    cases = generate_cases(helpdesk, helpdesk.tool("list_customers"), seed_state, SEED)
    full = next(c for c in cases if c.name == "valid[all]").args
    assert any(
        all(r[k] == full[k] for k in ("tier", "active")) for r in seed_state.tables["Customer"].values()
    )
    assert not any(c.name.startswith("unknown_id") for c in cases)


def test_a_correct_module_passes_and_action_tools_go_to_the_world_model(helpdesk, offline_module, seed_state):
    verification = verify(helpdesk, offline_module, seed_state)
    assert verification.world_model_tools == ["escalate_ticket"]
    assert verification.code_tools == offline_module.implemented_tools
    assert verification.verified_share == pytest.approx(0.9)
    assert all(v.checks for v in verification.verdicts)


def test_no_seed_records_means_no_verified_code(helpdesk, offline_module):
    verification = verify(helpdesk, offline_module, ServiceState.empty(helpdesk))
    assert verification.verdict("get_customer").implementation == "world_model"
    assert "valid_call" in failed_checks(verification, "get_customer")
    assert verification.verdict("create_customer").implementation == "code"


def test_create_that_does_not_store_is_caught(helpdesk, offline_module, seed_state):
    module = broken(
        offline_module,
        """
        def _create_without_storing(state, args):
            return _ok({"id": "cus_0003", "name": args.get("name", ""), "email": args.get("email", ""),
                        "tier": args.get("tier", "free"), "active": False, "visits": None})
        TOOLS["create_customer"] = _create_without_storing
    """,
    )
    verification = verify(helpdesk, module, seed_state)
    assert verification.verdict("create_customer").implementation == "world_model"
    assert "valid[required].effect" in failed_checks(verification, "create_customer")
    assert verification.verdict("get_customer").implementation == "code"


def test_update_touching_other_fields_is_caught(helpdesk, offline_module, seed_state):
    module = broken(
        offline_module,
        """
        _plain_update = TOOLS["update_customer"]
        def _update_and_deactivate(state, args):
            result = _plain_update(state, args)
            if result["success"]:
                state["tables"]["Customer"][args["customer_id"]]["active"] = False
            return result
        TOOLS["update_customer"] = _update_and_deactivate
    """,
    )
    verdict = verify(helpdesk, module, seed_state).verdict("update_customer")
    assert verdict.implementation == "world_model"
    assert any("not asked to: ['active']" in c.detail for c in verdict.failures())


def test_raising_tool_is_caught(helpdesk, offline_module, seed_state):
    module = broken(
        offline_module,
        """
        def _lookup_without_checks(state, args):
            return _ok(state["tables"]["Customer"][args["customer_id"]])
        TOOLS["get_customer"] = _lookup_without_checks
    """,
    )
    verification = verify(helpdesk, module, seed_state)
    failures = verification.verdict("get_customer").failures()
    assert {c.name for c in failures} == {
        "missing_required[customer_id]",
        "unknown_id[customer_id]",
        "wrong_type[customer_id]",
    }
    assert all(c.detail.startswith("internal_error: KeyError") for c in failures)
    assert verification.verdict("get_ticket").implementation == "code"


def test_nondeterministic_tool_is_caught(helpdesk, offline_module, seed_state):
    module = broken(
        offline_module,
        """
        _calls = [0]
        _plain_search = TOOLS["search_customers"]
        def _search_counting_calls(state, args):
            _calls[0] += 1
            result = _plain_search(state, args)
            if result["success"] and _calls[0] % 2 == 0:
                result["data"]["items"] = result["data"]["items"][:0]
                result["data"]["count"] = 0
            return result
        TOOLS["search_customers"] = _search_counting_calls
    """,
    )
    verdict = verify(helpdesk, module, seed_state).verdict("search_customers")
    assert verdict.implementation == "world_model"
    assert "valid[required].determinism" in [c.name for c in verdict.failures()]


def test_returns_violating_the_schema_are_caught(helpdesk, offline_module, seed_state):
    module = broken(
        offline_module,
        """
        _plain_get_ticket = TOOLS["get_ticket"]
        def _get_ticket_with_text_priority(state, args):
            result = _plain_get_ticket(state, args)
            if result["success"]:
                result["data"]["priority"] = "high"
            return result
        TOOLS["get_ticket"] = _get_ticket_with_text_priority
    """,
    )
    verdict = verify(helpdesk, module, seed_state).verdict("get_ticket")
    assert verdict.implementation == "world_model"
    returns = next(c for c in verdict.failures() if c.name.endswith(".returns"))
    assert "priority" in returns.detail


def test_delete_that_keeps_the_record_is_caught(helpdesk, offline_module, seed_state):
    module = broken(
        offline_module,
        """
        def _pretend_delete(state, args):
            return _ok({"deleted": args.get("customer_id")})
        TOOLS["delete_customer"] = _pretend_delete
    """,
    )
    verdict = verify(helpdesk, module, seed_state).verdict("delete_customer")
    assert verdict.implementation == "world_model"
    assert any(c.name.endswith(".effect") for c in verdict.failures())


def test_read_that_writes_is_caught(helpdesk, offline_module, seed_state):
    module = broken(
        offline_module,
        """
        _plain_list = TOOLS["list_customers"]
        def _list_and_count_visits(state, args):
            for record in state["tables"]["Customer"].values():
                record["visits"] = (record["visits"] or 0) + 1
            return _plain_list(state, args)
        TOOLS["list_customers"] = _list_and_count_visits
    """,
    )
    verdict = verify(helpdesk, module, seed_state).verdict("list_customers")
    assert verdict.implementation == "world_model"
    assert any("changed the state" in c.detail for c in verdict.failures())


def test_a_module_that_does_not_load_leaves_everything_to_the_world_model(
    helpdesk, offline_module, seed_state
):
    def refuse(source):
        raise SyntaxError("invalid syntax")

    verification = verify_service(helpdesk, offline_module, refuse, seed_state, SEED)
    assert verification.code_tools == []
    assert all(v.checks[0].name == "load" for v in verification.verdicts)


def test_a_rejected_call_that_writes_first_is_caught(helpdesk, offline_module, seed_state):
    module = broken(
        offline_module,
        """
        _plain_get = TOOLS["get_customer"]
        def _get_and_log_failures(state, args):
            result = _plain_get(state, args)
            if not result["success"]:
                state["counters"]["Customer"] += 1
            return result
        TOOLS["get_customer"] = _get_and_log_failures
    """,
    )
    failures = verify(helpdesk, module, seed_state).verdict("get_customer").failures()
    assert failures and all(c.detail == "a rejected call changed the state" for c in failures)


class CountingExecutor(InProcessExecutor):
    """Counts the resets that send a whole state and the states read back."""

    resets = 0
    reads = 0

    def reset(self, state: ServiceState) -> None:
        CountingExecutor.resets += 1
        super().reset(state)

    def state(self) -> ServiceState:
        CountingExecutor.reads += 1
        return super().state()


class ReadingExecutor(InProcessExecutor):
    """Claims every call changed the state, so the runner reads every state back."""

    @property
    def changed(self) -> bool:
        return True


def test_the_seed_state_is_sent_once_and_read_back_only_after_a_change(helpdesk, offline_module, seed_state):
    CountingExecutor.resets = CountingExecutor.reads = 0
    counted = verify_service(helpdesk, offline_module, CountingExecutor, seed_state, SEED)
    assert counted == verify_service(helpdesk, offline_module, ReadingExecutor, seed_state, SEED)
    cases = [c for t in helpdesk.tools for c in generate_cases(helpdesk, t, seed_state, SEED)]
    writes = [c for c in cases if c.kind == "valid" and helpdesk.tool(c.tool).effect not in ("read", "list", "search")]
    assert CountingExecutor.resets == 1
    assert 0 < CountingExecutor.reads <= 2 * len(writes) < len(cases)
