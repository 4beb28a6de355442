"""Dagster sensors, schedules and the jobs they launch."""
