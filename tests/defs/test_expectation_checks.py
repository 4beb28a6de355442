"""The Great Expectations checks inside the pipeline: scoped to the partition, and blocking."""

import polars as pl
import pytest

from compoworld_assets.engine import tables

pytestmark = pytest.mark.slow


def _evaluation(result, check_name: str):
    return next(e for e in result.get_asset_check_evaluations() if e.check_name == check_name)


def test_services_check_validates_the_materialized_partition(pipeline):
    pipeline.materialize("service_specs", "quarantined_specs")
    pipeline.materialize("services", partition_key="crm")
    result = pipeline.materialize("services", partition_key="mail")
    evaluation = _evaluation(result, "services_expectations")
    assert evaluation.passed
    assert evaluation.metadata["rows"].value == 1
    assert evaluation.metadata["partitions"].value == "mail"
    assert evaluation.metadata["unsuccessful_expectations"].value == 0
    assert pipeline.query("select count(*) from pipeline.services")[0][0] == 2


def test_a_multi_partition_build_records_the_check_on_each_partition(pipeline, monkeypatch):
    """One run builds crm and mail; crm's stored row breaks the suite, so only crm's evaluation fails."""
    pipeline.materialize("service_specs", "quarantined_specs")
    real_service_rows = tables.service_rows

    def service_rows_with_too_many_verified(builds):
        frame = real_service_rows(builds)
        too_many = pl.when(pl.col("service_id") == "crm").then(pl.col("n_tools") + 1).otherwise(pl.col("n_verified"))
        return frame.with_columns(n_verified=too_many)

    monkeypatch.setattr(tables, "service_rows", service_rows_with_too_many_verified)
    result = pipeline.materialize("services", raise_on_error=False,
                                  tags={"dagster/asset_partition_range_start": "crm",
                                        "dagster/asset_partition_range_end": "mail"})
    evaluations = {e.partition: e for e in result.get_asset_check_evaluations()
                   if e.check_name == "services_expectations"}
    assert {p: e.passed for p, e in evaluations.items() if p in ("crm", "mail")} == {"crm": False, "mail": True}
    assert all(e.partition is not None for e in evaluations.values()), "no evaluation without a partition"
    crm = evaluations["crm"].metadata
    assert crm["partitions"].value == "crm" and crm["rows"].value == 1
    assert [(f["expectation"], f["column"]) for f in crm["failed_expectations"].value] == [
        ("expect_column_pair_values_a_to_be_greater_than_b", "n_tools")]
    assert not result.success, "the failed partition's blocking check fails the step"


def test_invalid_spec_row_fails_the_blocking_check_and_stops_services(pipeline, monkeypatch):
    pipeline.materialize("service_specs", "quarantined_specs")
    real_spec_rows = tables.spec_rows

    def spec_rows_with_a_toolless_service(specs):
        frame = real_spec_rows(specs)
        toolless = pl.when(pl.col("service_id") == "crm").then(0).otherwise(pl.col("n_tools"))
        return frame.with_columns(n_tools=toolless)

    monkeypatch.setattr(tables, "spec_rows", spec_rows_with_a_toolless_service)
    result = pipeline.materialize("service_specs", "quarantined_specs", raise_on_error=False)
    assert not result.success
    evaluation = _evaluation(result, "service_specs_expectations")
    assert not evaluation.passed
    failures = evaluation.metadata["failed_expectations"].value
    assert [(f["expectation"], f["column"]) for f in failures] == [
        ("expect_column_values_to_be_between", "n_tools")]
    assert failures[0]["failing_rows"] == [{"service_id": "crm", "n_tools": 0}]
    assert {e.check_name for e in result.get_asset_check_evaluations() if not e.passed} == {
        "service_specs_expectations"}, "only the GX suite sees a tool count of 0"

    build = pipeline.materialize("services", partition_key="crm", raise_on_error=False)
    assert not build.success, "a build in a later run refuses the row the blocking check rejected"
    [failure] = [e for e in build.all_events if e.event_type_value == "STEP_FAILURE"]
    assert "n_tools" in failure.step_failure_data.user_failure_data.description
    assert not build.get_asset_materialization_events()
    assert not pipeline.query("select 1 from information_schema.tables where table_name = 'services'")
