"""Shared helpers of the dispatch tests (imported by name: conftest puts this folder on sys.path)."""

import sys
from pathlib import Path

import dagster as dg

REPO = Path(__file__).resolve().parents[2]
JOB = str(Path(__file__).resolve().parent / "jobs" / "pipes_job.py")


def job_command(*args: str) -> list[str]:
    return [sys.executable, JOB, *args]


def materialization_metadata(result: dg.ExecuteInProcessResult) -> dict:
    [event] = result.get_asset_materialization_events()
    return {key: value.value for key, value in event.materialization.metadata.items()}


def failure_text(result: dg.ExecuteInProcessResult) -> str:
    [failure] = [event for event in result.all_events if event.is_step_failure]
    return failure.step_failure_data.error.to_string()
