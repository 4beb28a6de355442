"""Stage: datasets."""
