"""Data quality: Great Expectations suites over the pipeline tables (no Dagster here)."""
