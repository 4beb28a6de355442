"""Cross-service tasks: the dependency graph, walks, task instances, rubrics and trajectories."""
