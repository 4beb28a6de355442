"""Stage: tasks."""
