"""Each table's GX suite passes on a well-formed frame and names what a broken one violates."""

import polars as pl
import pytest

from compoworld_assets.quality.expectations import validate_table
from compoworld_assets.quality.suites import SUITES, WARNING

pytestmark = pytest.mark.slow

# table -> (a required column to null out, (column, out-of-range value, expectation it violates))
BREAKAGE = {
    "service_specs": ("spec_json", ("n_tools", 0, "expect_column_values_to_be_between")),
    "quarantined_specs": ("reason", ("source_kind", None, "expect_column_values_to_not_be_null")),
    "services": ("module_source", ("n_verified", 9, "expect_column_pair_values_a_to_be_greater_than_b")),
    "quarantined_services": ("message", ("stage", "rollout", "expect_column_values_to_be_in_set")),
    "tool_catalog": ("implementation", ("verdict", "great", "expect_column_values_to_be_in_set")),
    "dependency_graph": ("kind", ("cross_service", False, "expect_column_pair_values_to_be_equal")),
    "dependency_graph_nodes": ("tool", ("in_degree", -1, "expect_column_values_to_be_between")),
    "sampled_tasks": ("task_json", ("n_services", 1, "expect_column_values_to_be_between")),
    "quarantined_tasks": ("reason", ("stage", "rollout", "expect_column_values_to_be_in_set")),
    "rubrics": ("check_json", ("weight", 0.0, "expect_column_values_to_be_between")),
    "trajectories": ("trajectory_json", ("n_messages", 0, "expect_column_values_to_be_between")),
    "verified_trajectories": ("criteria_json", ("rubric_score", 1.5, "expect_column_values_to_be_between")),
    "sft_dataset": ("sample_json", ("sample_json", "{not json", "expect_column_values_to_be_in_set")),
    "rl_tasks": ("task_hash", ("task_hash", "not-a-hash", "expect_column_values_to_match_regex")),
}


def _failed(result) -> set[tuple[str, object]]:
    return {(f["expectation"], f["column"] if isinstance(f["column"], str) else tuple(f["column"] or ()))
            for f in result.failed_expectations}


def _with_value(frame: pl.DataFrame, column: str, value: object) -> pl.DataFrame:
    values = frame[column].to_list()
    values[0] = value
    return frame.with_columns(pl.Series(column, values, dtype=frame.schema[column]))


def test_every_table_has_breakage_cases(good_frames):
    assert set(BREAKAGE) == set(SUITES) == set(good_frames)


@pytest.mark.parametrize("table", sorted(SUITES))
def test_good_frame_passes(table, good_frames):
    result = validate_table(table, good_frames[table]())
    assert result.success, result.failed_expectations
    assert result.statistics["unsuccessful_expectations"] == 0
    assert result.statistics["evaluated_expectations"] == len(SUITES[table].expectations)


@pytest.mark.parametrize("table", sorted(SUITES))
def test_duplicated_key_fails_on_the_key(table, good_frames):
    frame = good_frames[table]()
    result = validate_table(table, pl.concat([frame, frame.head(1)]))
    key = SUITES[table].key
    expected = ("expect_column_values_to_be_unique", key[0]) if len(key) == 1 else \
        ("expect_compound_columns_to_be_unique", key)
    assert not result.success
    assert expected in _failed(result)
    assert result.critical_failures


@pytest.mark.parametrize("table", sorted(SUITES))
def test_null_in_required_column_fails(table, good_frames):
    column = BREAKAGE[table][0]
    result = validate_table(table, _with_value(good_frames[table](), column, None))
    assert ("expect_column_values_to_not_be_null", column) in _failed(result)
    failure = next(f for f in result.failed_expectations
                   if f["expectation"] == "expect_column_values_to_not_be_null")
    assert failure["unexpected_count"] == 1
    assert failure["why"]


@pytest.mark.parametrize("table", sorted(SUITES))
def test_out_of_range_value_fails_with_the_named_expectation(table, good_frames):
    column, value, expectation = BREAKAGE[table][1]
    frame = good_frames[table]()
    result = validate_table(table, _with_value(frame, column, value))
    assert not result.success
    assert expectation in {f["expectation"] for f in result.failed_expectations}, result.failed_expectations
    failure = next(f for f in result.failed_expectations if f["expectation"] == expectation)
    first_key = {k: frame[k][0] for k in SUITES[table].key}
    assert any(first_key.items() <= row.items() for row in failure["failing_rows"]), failure


def test_distribution_bound_fails_as_a_warning_only(good_frames):
    catalog = good_frames["tool_catalog"]().with_columns(
        implementation=pl.lit("world_model"), verdict=pl.lit("simulated"))
    result = validate_table("tool_catalog", catalog)
    assert not result.success
    assert [(f["expectation"], f["severity"]) for f in result.failed_expectations] == [
        ("expect_column_mean_to_be_between", WARNING)]
    assert result.failed_expectations[0]["observed_value"] == 1.0
    assert not result.critical_failures


def test_a_task_lost_to_a_defect_fails_a_warning_only(good_frames):
    tasks = _with_value(good_frames["quarantined_tasks"](), "stage", "error")
    result = validate_table("quarantined_tasks", tasks)
    assert [(f["expectation"], f["severity"]) for f in result.failed_expectations] == [
        ("expect_column_values_to_be_in_set", WARNING)]
    assert not result.critical_failures


def test_mean_steps_out_of_bounds_is_reported(good_frames):
    tasks = good_frames["sampled_tasks"]().with_columns(n_steps=pl.lit(13, dtype=pl.Int64))
    result = validate_table("sampled_tasks", tasks)
    assert ("expect_column_mean_to_be_between", "n_steps") in _failed(result)


def test_missing_column_fails_the_column_set(good_frames):
    result = validate_table("rubrics", good_frames["rubrics"]().drop("weight"))
    assert "expect_table_columns_to_match_set" in {f["expectation"] for f in result.failed_expectations}


def test_empty_table_fails_where_rows_are_required(good_frames):
    result = validate_table("service_specs", good_frames["service_specs"]().clear())
    assert "expect_table_row_count_to_be_between" in {f["expectation"] for f in result.failed_expectations}
    assert validate_table("quarantined_specs", good_frames["quarantined_specs"]().clear()).success


def test_pandas_frames_are_validated_too(good_frames):
    result = validate_table("rubrics", good_frames["rubrics"]().with_columns(weight=pl.lit(-1.0)).to_pandas())
    assert ("expect_column_values_to_be_between", "weight") in _failed(result)


def test_unknown_table_is_refused():
    with pytest.raises(KeyError):
        validate_table("no_such_table", pl.DataFrame({"a": [1]}))


def test_lazy_frames_are_validated_with_their_payloads_read_as_lengths(good_frames):
    tasks = good_frames["sampled_tasks"]()
    assert validate_table("sampled_tasks", tasks.lazy()).success
    emptied = tasks.lazy().with_columns(task_json=pl.lit(None, dtype=pl.String))
    assert ("expect_column_values_to_not_be_null", "task_json") in _failed(validate_table("sampled_tasks", emptied))


def test_a_suite_cannot_read_the_content_of_a_payload_column():
    from compoworld_assets.quality.suites import _json, _suite

    with pytest.raises(ValueError, match="payload columns"):
        _suite("t", "k", ["k", "body"], "why", _json("body", "parsed"), payloads=("body",))
