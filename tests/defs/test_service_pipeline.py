"""Materialize the service stages on a temporary DuckDB file."""

import json

import pytest

pytestmark = pytest.mark.slow


def test_specs_import_registers_partitions_and_quarantines(pipeline):
    result = pipeline.materialize("service_specs", "quarantined_specs")
    assert all(e.passed for e in result.get_asset_check_evaluations())
    partitions = set(pipeline.instance.get_dynamic_partitions("service"))
    assert {"crm", "mail", "invoicing", "bfcl_message_api"} <= partitions
    stored = {row[0] for row in pipeline.query("select service_id from pipeline.service_specs")}
    assert stored == partitions
    reasons = [row[0] for row in pipeline.query("select reason from pipeline.quarantined_specs")]
    assert any("has no name" in r for r in reasons), reasons


def test_one_service_partition_then_catalog(pipeline):
    pipeline.materialize("service_specs", "quarantined_specs")
    for service_id in ("crm", "bfcl_message_api"):
        result = pipeline.materialize("services", partition_key=service_id)
        assert all(e.passed for e in result.get_asset_check_evaluations() if e.check_name == "modules_intact")
    rows = pipeline.query("select service_id, n_tools, n_verified, module_hash, verdicts_json from pipeline.services")
    assert {r[0] for r in rows} == {"crm", "bfcl_message_api"}
    crm = next(r for r in rows if r[0] == "crm")
    assert crm[2] == crm[1], "every CRM tool is CRUD and verifies"
    assert len(json.loads(crm[4])) == crm[1]
    assert (pipeline.root / "data" / "modules" / "crm" / f"{crm[3]}.py").exists()

    result = pipeline.materialize("tool_catalog")
    failed = [(e.check_name, e.metadata) for e in result.get_asset_check_evaluations() if not e.passed]
    assert not failed
    catalog = pipeline.query("select qualified_name, implementation, verdict from pipeline.tool_catalog")
    names = {r[0] for r in catalog}
    assert "crm_create_contact" in names
    assert all(r[1] in ("code", "world_model") for r in catalog)
    # BFCL's login tools answer nothing the state holds: offline they say so (unavailable), never unusable
    assert {r[2] for r in catalog} <= {"verified", "simulated", "unavailable"}


def test_rebuilding_one_service_leaves_the_others(pipeline):
    pipeline.materialize("service_specs", "quarantined_specs")
    pipeline.materialize("services", partition_key="crm")
    pipeline.materialize("services", partition_key="mail")
    before = dict(pipeline.query("select service_id, module_hash from pipeline.services"))
    pipeline.materialize("services", partition_key="crm")
    after = dict(pipeline.query("select service_id, module_hash from pipeline.services"))
    assert before == after
    assert pipeline.query("select count(*) from pipeline.services")[0][0] == 2


def test_failed_step_leaves_table_untouched(pipeline, monkeypatch):
    """A failure of the step itself (not of one service's build, which is quarantined) writes nothing."""
    pipeline.materialize("service_specs", "quarantined_specs")
    pipeline.materialize("services", partition_key="crm")
    before = pipeline.query("select service_id, module_hash from pipeline.services")

    from compoworld_assets.engine import tables

    def broken_rows(*args, **kwargs):
        raise RuntimeError("table building crashed half-way")

    monkeypatch.setattr(tables, "service_rows", broken_rows)
    result = pipeline.materialize("services", partition_key="crm", raise_on_error=False)
    assert not result.success
    assert pipeline.query("select service_id, module_hash from pipeline.services") == before
