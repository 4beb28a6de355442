"""The suites themselves, without running Great Expectations."""

from pathlib import Path

from compoworld_assets.quality.suites import CRITICAL, SUITES, WARNING

DOC = Path(__file__).resolve().parents[2] / "docs" / "data-quality.md"

PIPELINE_TABLES = {
    "service_specs", "quarantined_specs", "services", "quarantined_services", "tool_catalog", "dependency_graph",
    "dependency_graph_nodes",
    "sampled_tasks", "quarantined_tasks", "rubrics", "trajectories", "verified_trajectories", "sft_dataset",
    "rl_tasks",
}


def _required(suite) -> set[str]:
    head = suite.expectations[0]
    assert head.expectation == "ExpectTableColumnsToMatchSet"
    return set(head.kwargs["column_set"])


def test_one_suite_per_pipeline_table():
    assert set(SUITES) == PIPELINE_TABLES


def test_keys_are_required_columns():
    for suite in SUITES.values():
        assert set(suite.key) <= _required(suite), suite.table


def test_every_expectation_explains_itself_and_has_a_known_severity():
    for suite in SUITES.values():
        for expectation in suite.expectations:
            assert expectation.why.strip(), (suite.table, expectation)
            assert expectation.severity in (CRITICAL, WARNING)


def test_distribution_bounds_are_warnings_and_use_known_columns():
    for suite in SUITES.values():
        for expectation in suite.expectations:
            if expectation.expectation == "ExpectColumnMeanToBeBetween":
                assert expectation.severity == WARNING
                assert expectation.column in _required(suite) | set(suite.derived), suite.table


def test_doc_lists_every_table_and_expectation():
    text = DOC.read_text()
    for suite in SUITES.values():
        section = text.split(f"### {suite.table}\n", 1)[1].split("\n### ", 1)[0]
        for expectation in suite.expectations:
            assert expectation.expectation in section, (suite.table, expectation.expectation)
