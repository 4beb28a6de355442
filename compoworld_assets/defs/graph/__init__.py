"""Stage: graph."""
