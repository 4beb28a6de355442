"""Stage: specs."""
