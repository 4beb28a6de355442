"""Changing one service spec makes exactly that service (and what reads every service) stale.

Dagster's own staleness cannot say it: ``service_specs`` is one unpartitioned table, so its new
data version marks every ``services`` partition stale. The test pins both answers down: the
per-service one from :func:`sensors.lineage.stale_services`, and Dagster's coarser one.
"""

import dagster as dg
import pytest
from dagster._core.definitions.data_version import CachingStaleStatusResolver, StaleStatus
from dagster._core.loader import LoadingContextForTest

from sensors.lineage import SPEC_CHANGED, stale_services
from sensors.spec_drop_folder import folder_fingerprint, spec_drop_folder_sensor

pytestmark = pytest.mark.slow

CHANGED, UNCHANGED = "bfcl_ticket_api", "bfcl_message_api"


def status(instance, definitions, key: str, partition: str | None = None) -> StaleStatus:
    resolver = CachingStaleStatusResolver(instance, definitions.resolve_asset_graph(),
                                          LoadingContextForTest(instance))
    return resolver.get_status(dg.AssetKey(key), partition)


def test_one_changed_spec_makes_only_its_service_stale(drop_folder, instance, definitions, materialize):
    materialize("service_specs", "quarantined_specs")
    assert sorted(instance.get_dynamic_partitions("service")) == sorted([CHANGED, UNCHANGED])
    for service_id in (CHANGED, UNCHANGED):
        materialize("services", partition_key=service_id)
    materialize("tool_catalog")
    assert stale_services(instance) == {}
    assert status(instance, definitions, "services", CHANGED) == StaleStatus.FRESH
    assert status(instance, definitions, "tool_catalog") == StaleStatus.FRESH

    spec_file = drop_folder / f"{CHANGED}.json"
    spec_file.write_text(spec_file.read_text().replace("Close a ticket.", "Close a support ticket."))
    materialize("service_specs", "quarantined_specs")

    assert stale_services(instance) == {CHANGED: SPEC_CHANGED}
    assert status(instance, definitions, "tool_catalog") == StaleStatus.STALE
    # Dagster's coarser view: the unpartitioned parent changed, so both partitions read as stale.
    assert status(instance, definitions, "services", CHANGED) == StaleStatus.STALE
    assert status(instance, definitions, "services", UNCHANGED) == StaleStatus.STALE

    context = dg.build_sensor_context(instance=instance, cursor=folder_fingerprint(drop_folder),
                                      repository_def=definitions.get_repository_def())
    with dg.partition_loading_context(dynamic_partitions_store=instance):
        requests = spec_drop_folder_sensor.evaluate_tick(context).run_requests
    assert [(r.job_name, r.partition_key) for r in requests] == [("build_services_job", CHANGED)]

    materialize("services", partition_key=CHANGED)
    assert stale_services(instance) == {}
    assert status(instance, definitions, "services", CHANGED) == StaleStatus.FRESH


def test_services_data_version_follows_the_built_module(instance, materialize):
    materialize("service_specs", "quarantined_specs")
    materialize("services", partition_key=UNCHANGED)
    first = instance.get_latest_data_version_record(dg.AssetKey("services"), partition_key=UNCHANGED)
    materialize("services", partition_key=UNCHANGED)
    again = instance.get_latest_data_version_record(dg.AssetKey("services"), partition_key=UNCHANGED)
    version = first.asset_materialization.tags["dagster/data_version"]
    assert again.asset_materialization.tags["dagster/data_version"] == version, "same spec, same module"
    metadata = again.asset_materialization.metadata
    assert metadata["spec_hash"].value and metadata["module_hash"].value
