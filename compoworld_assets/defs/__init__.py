"""Dagster adapters over the engine: one folder per pipeline stage (assets.py, checks.py)."""
