"""Turn a Great Expectations validation (``compoworld_assets.quality``) into a Dagster check result.

A failed ``critical`` expectation gives severity ERROR, which stops the assets below a blocking
check; when only ``warning`` expectations (distribution bounds) fail, the check fails with WARN.
"""

import time

import dagster as dg
import polars as pl

from compoworld_assets.quality.expectations import QualityResult, validate_table


def expectations_result(context: dg.AssetCheckExecutionContext, table: str,
                        frame: pl.DataFrame) -> dg.AssetCheckResult:
    """Validate ``frame`` (the partitions of ``table`` this run materialized) against its suite."""
    started = time.perf_counter()
    result = validate_table(table, frame)
    elapsed = time.perf_counter() - started
    metadata: dict[str, object] = {
        "rows": len(frame),
        "evaluated_expectations": result.statistics["evaluated_expectations"],
        "unsuccessful_expectations": result.statistics["unsuccessful_expectations"],
        "validation_seconds": round(elapsed, 3),
        "failed_expectations": dg.MetadataValue.json(result.failed_expectations),
        "failures": dg.MetadataValue.md(_markdown(result)),
    }
    if context.has_partition_key:
        metadata["partitions"] = context.partition_key
    elif context.has_partition_key_range:
        metadata["partitions"] = f"{context.partition_key_range.start}…{context.partition_key_range.end}"
    severity = dg.AssetCheckSeverity.ERROR if result.critical_failures else dg.AssetCheckSeverity.WARN
    return dg.AssetCheckResult(passed=result.success, severity=severity, metadata=metadata)


def _markdown(result: QualityResult) -> str:
    if not result.failed_expectations:
        return "_every expectation met_"
    lines = ["| expectation | column | severity | unexpected | sample |", "|---|---|---|---|---|"]
    for failure in result.failed_expectations:
        sample = failure["failing_rows"] or failure["partial_unexpected_list"] or failure["observed_value"]
        cell = str(sample)[:160].replace("|", "/")
        count = "" if failure["unexpected_count"] is None else failure["unexpected_count"]
        lines.append(f"| {failure['expectation']} | {failure['column'] or ''} | {failure['severity']} "
                     f"| {count} | {cell} |")
    return "\n".join(lines)
