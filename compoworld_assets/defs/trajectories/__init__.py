"""Stage: trajectories."""
