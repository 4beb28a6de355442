"""Validate a pipeline table against its Great Expectations suite.

GX 1.x runs here on one ephemeral (in-memory) data context per process, with one pandas
datasource and, per table, one dataframe asset and one expectation suite, all built on first use
and reused. GX cannot read polars frames, so frames are converted with ``to_pandas()``. Importing
GX costs 5-12 s, so it happens on the first validation, not on import of this module.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import polars as pl

from compoworld_assets.quality.suites import CRITICAL, SUITES, Expect, TableSuite

if TYPE_CHECKING:
    import pandas as pd

SAMPLE_SIZE = 20
DATASOURCE = "compoworld_frames"

_lock = threading.Lock()
_context: Any = None
_batch_definitions: dict[str, Any] = {}
_suites: dict[str, Any] = {}


@dataclass(frozen=True)
class QualityResult:
    """What a table's validation found; ``failed_expectations`` holds JSON-ready dicts."""

    table: str
    success: bool
    statistics: dict[str, Any]
    failed_expectations: list[dict[str, Any]] = field(default_factory=list)

    @property
    def critical_failures(self) -> list[dict[str, Any]]:
        return [f for f in self.failed_expectations if f["severity"] == CRITICAL]


def validate_table(table_name: str, frame: pl.DataFrame | pl.LazyFrame | pd.DataFrame) -> QualityResult:
    """Run ``table_name``'s suite over ``frame`` (polars, lazy or not, or pandas); unknown tables raise
    ``KeyError``. The suite's payload columns are read as their byte lengths (a lazy frame is then streamed, never
    held with its payloads)."""
    suite = SUITES[table_name]
    if not isinstance(frame, pl.DataFrame | pl.LazyFrame):
        frame = pl.from_pandas(frame)
    lengths = [pl.col(c).str.len_bytes() for c in suite.payloads if c in frame.collect_schema()]
    # Derived columns first: they may read a payload (its JSON's format, say) that is then only measured.
    prepared = frame.lazy().with_columns(**suite.derived).with_columns(lengths).collect(engine="streaming")
    with _lock:
        batch = _batch_definition(suite.table).get_batch(batch_parameters={"dataframe": prepared.to_pandas()})
        result = batch.validate(_gx_suite(suite), result_format=_result_format(suite, prepared))
    failed = [_failure(r, suite) for r in result.results if not r.success]
    statistics = {k: _plain(v) for k, v in result.statistics.items()}
    statistics["rows"] = len(prepared)
    return QualityResult(table=table_name, success=bool(result.success), statistics=statistics,
                         failed_expectations=failed)


def _result_format(suite: TableSuite, frame: pl.DataFrame) -> dict[str, Any]:
    """COMPLETE results give the key values of failing rows; samples are cut to SAMPLE_SIZE later."""
    keys = [k for k in suite.key if k in frame.columns]
    return {"result_format": "COMPLETE", "unexpected_index_column_names": keys,
            "partial_unexpected_count": SAMPLE_SIZE, "return_unexpected_index_query": False}


def _failure(result: Any, suite: TableSuite) -> dict[str, Any]:
    config = result.expectation_config
    declared: Expect = suite.expectations[config.meta["index"]]
    kwargs = {k: _plain(v) for k, v in declared.kwargs.items()}
    details = result.result or {}
    exception = result.exception_info or {}
    failure = {
        "expectation": config.type,
        "column": kwargs.get("column") or kwargs.get("column_list") or kwargs.get("column_A"),
        "kwargs": kwargs,
        "severity": declared.severity,
        "why": declared.why,
        "unexpected_count": details.get("unexpected_count"),
        "partial_unexpected_list": _plain(details.get("partial_unexpected_list", [])[:SAMPLE_SIZE]),
        "failing_rows": _plain(details.get("unexpected_index_list", [])[:SAMPLE_SIZE]),
        "observed_value": _plain(details.get("observed_value")),
    }
    if exception.get("raised_exception"):
        failure["exception"] = str(exception.get("exception_message"))[:500]
    return failure


def _plain(value: Any) -> Any:
    """JSON-ready copies of GX/numpy/pandas values (tuples become lists)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if hasattr(value, "item"):
        return value.item()
    return str(value)


def _batch_definition(table: str) -> Any:
    if table not in _batch_definitions:
        source = _gx_context().data_sources.get(DATASOURCE)
        asset = source.add_dataframe_asset(name=table)
        _batch_definitions[table] = asset.add_batch_definition_whole_dataframe(f"{table}_frame")
    return _batch_definitions[table]


def _gx_suite(suite: TableSuite) -> Any:
    if suite.table not in _suites:
        import great_expectations as gx
        from great_expectations.expectations.metadata_types import FailureSeverity

        _gx_context()
        expectations = [
            getattr(gx.expectations, e.expectation)(**e.kwargs, severity=FailureSeverity(e.severity),
                                                    meta={"index": i})
            for i, e in enumerate(suite.expectations)
        ]
        _suites[suite.table] = gx.ExpectationSuite(name=f"{suite.table}_suite", expectations=expectations)
    return _suites[suite.table]


def _gx_context() -> Any:
    global _context
    if _context is None:
        import great_expectations as gx
        from great_expectations.data_context.types.base import ProgressBarsConfig

        context = gx.get_context(mode="ephemeral")
        context.variables.progress_bars = ProgressBarsConfig(globally=False)
        context.data_sources.add_pandas(DATASOURCE)
        _context = context
    return _context
