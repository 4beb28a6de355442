"""Stage: catalog."""
