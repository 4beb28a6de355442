"""Freshness the schedules promise (``sensors/schedules.py``), as Dagster freshness policies.

The nightly schedule samples a new task round at 02:00 UTC, so a task-round asset not
materialized in the 24 hours before 06:00 UTC fails its policy; the weekly schedule retrains on
Sundays at 04:00 UTC, so a training asset older than a week at Sunday noon fails its policy.
"""

from datetime import timedelta

import dagster as dg

NIGHTLY_ROUND = dg.FreshnessPolicy.cron(deadline_cron="0 6 * * *", lower_bound_delta=timedelta(hours=24))
WEEKLY_TRAINING = dg.FreshnessPolicy.cron(deadline_cron="0 12 * * 0", lower_bound_delta=timedelta(days=7))
