"""One dynamic partition per service id, so one service can be re-synthesized alone."""

import dagster as dg

service_partitions = dg.DynamicPartitionsDefinition(name="service")
