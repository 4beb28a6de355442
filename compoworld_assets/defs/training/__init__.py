"""Stage: training."""
