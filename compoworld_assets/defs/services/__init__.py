"""Stage: services."""
