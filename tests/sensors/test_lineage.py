"""Changing one service spec makes exactly its downstream stale, in Dagster's own stale status.

A ``services`` partition reads only its ``service_spec`` partition, whose data version is the spec
hash observed at import. The test checks Dagster's resolver (what the UI shows) and our own
metadata-based :func:`sensors.lineage.stale_services` (what the drop-folder sensor uses) agree.
"""

import hashlib

import dagster as dg
import pytest
from dagster._core.definitions.data_version import CachingStaleStatusResolver, StaleStatus
from dagster._core.loader import LoadingContextForTest

from resources import SpecSourcesResource
from sensors.jobs import IMPORT_SPECS
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
    assert status(instance, definitions, "services", CHANGED) == StaleStatus.STALE
    assert status(instance, definitions, "services", UNCHANGED) == StaleStatus.FRESH
    # The catalog lists every service's tools, so it reads the whole spec table and is stale too.
    assert status(instance, definitions, "tool_catalog") == StaleStatus.STALE

    context = dg.build_sensor_context(instance=instance, cursor=folder_fingerprint(drop_folder),
                                      repository_def=definitions.get_repository_def(),
                                      resources={"spec_sources": SpecSourcesResource(drop_folder=str(drop_folder))})
    with dg.partition_loading_context(dynamic_partitions_store=instance):
        requests = spec_drop_folder_sensor.evaluate_tick(context).run_requests
    assert [(r.job_name, r.partition_key) for r in requests] == [("build_services_job", CHANGED)]

    materialize("services", partition_key=CHANGED)
    assert stale_services(instance) == {}
    assert status(instance, definitions, "services", CHANGED) == StaleStatus.FRESH
    assert status(instance, definitions, "services", UNCHANGED) == StaleStatus.FRESH


def test_reimporting_unchanged_specs_leaves_every_service_fresh(instance, definitions, materialize):
    materialize(selection=IMPORT_SPECS)
    for service_id in (CHANGED, UNCHANGED):
        materialize("services", partition_key=service_id)
    result = materialize(selection=IMPORT_SPECS)
    [evaluation] = [e for e in result.get_asset_check_evaluations() if e.asset_key == dg.AssetKey("service_spec")]
    assert evaluation.passed, evaluation.metadata
    for service_id in (CHANGED, UNCHANGED):
        assert status(instance, definitions, "services", service_id) == StaleStatus.FRESH
    recorded = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=dg.AssetKey("service_spec"), asset_partitions=[CHANGED]), limit=2).records
    assert len(recorded) == 2
    assert len({r.asset_materialization.tags["dagster/data_version"] for r in recorded}) == 1


def data_version(instance, key: str, partition: str | None = None) -> str:
    record = instance.get_latest_data_version_record(dg.AssetKey(key), partition_key=partition)
    return record.asset_materialization.tags["dagster/data_version"]


def test_an_unchanged_rebuild_keeps_every_data_version_and_the_catalog_in_sync(instance, definitions, materialize):
    """Build both services in one run, then rebuild each alone and both together: nothing changed, so
    no data version changes and the catalog stays fresh; the batch's check is recorded per partition."""
    materialize(selection=IMPORT_SPECS)
    both = {"dagster/asset_partition_range_start": UNCHANGED, "dagster/asset_partition_range_end": CHANGED}
    result = materialize(selection=dg.AssetSelection.assets("services"), tags=both)
    evaluations = {e.partition: e for e in result.get_asset_check_evaluations()
                   if e.check_name == "services_expectations"}
    assert sorted(evaluations) == sorted([CHANGED, UNCHANGED])
    assert all(e.passed and e.target_materialization_data is not None for e in evaluations.values())
    materialize("tool_catalog")
    versions = {p: data_version(instance, "services", p) for p in (CHANGED, UNCHANGED)}
    catalog = data_version(instance, "tool_catalog")

    materialize("services", partition_key=UNCHANGED)
    again = materialize(selection=dg.AssetSelection.assets("services"), tags=both)
    assert {p: data_version(instance, "services", p) for p in (CHANGED, UNCHANGED)} == versions
    targets = {e.partition: e.target_materialization_data.storage_id for e in again.get_asset_check_evaluations()
               if e.check_name == "services_expectations"}
    assert targets == {p: instance.fetch_materializations(  # each points at its partition's newest build
        dg.AssetRecordsFilter(asset_key=dg.AssetKey("services"), asset_partitions=[p]), limit=1).records[0].storage_id
        for p in (CHANGED, UNCHANGED)}
    assert status(instance, definitions, "tool_catalog") == StaleStatus.FRESH
    materialize("tool_catalog")
    assert data_version(instance, "tool_catalog") == catalog


def test_a_build_records_the_spec_version_it_read(instance, materialize):
    """The input version of a services partition is its spec's (not the hash of nothing)."""
    materialize(selection=IMPORT_SPECS)
    materialize("services", partition_key=CHANGED)
    record = instance.get_latest_data_version_record(dg.AssetKey("services"), partition_key=CHANGED)
    read = record.asset_materialization.tags["dagster/input_data_version/service_spec"]
    assert read == hashlib.sha256(data_version(instance, "service_spec", CHANGED).encode()).hexdigest()


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


def test_version_check_fails_when_an_observed_version_disagrees_with_the_catalog(instance, materialize):
    materialize(selection=IMPORT_SPECS)
    instance.report_runless_asset_event(dg.AssetMaterialization(
        "service_spec", partition=CHANGED, tags={"dagster/data_version": "not-the-spec-hash"}))
    result = materialize(selection=dg.AssetSelection.checks_for_assets("service_spec"))
    [evaluation] = result.get_asset_check_evaluations()
    assert not evaluation.passed
    assert evaluation.metadata["version_mismatches"].value == [CHANGED]
