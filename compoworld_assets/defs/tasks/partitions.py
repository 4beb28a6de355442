"""One dynamic partition per task generation round (the nightly schedule adds a new one)."""

import dagster as dg

task_rounds = dg.DynamicPartitionsDefinition(name="task_round")
