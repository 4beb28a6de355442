"""The sensor that evaluates the assets' declarative automation conditions.

``tool_catalog``, ``dependency_graph`` and the datasets are ``AutomationCondition.eager()``: once
this sensor is on, they rebuild after their inputs update (and never while an input is missing or
in progress). It starts stopped, like the drop-folder sensor, so runs stay deliberate until an
operator turns automation on.
"""

import dagster as dg

automation_sensor = dg.AutomationConditionSensorDefinition(
    "automation_sensor", target=dg.AssetSelection.all(), minimum_interval_seconds=60,
    default_status=dg.DefaultSensorStatus.STOPPED,
)
