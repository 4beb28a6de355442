"""The drop-folder sensor: import on a folder change, then build exactly the stale service partitions."""

import dagster as dg

from resources import SpecSourcesResource
from sensors.lineage import NEVER_BUILT, SPEC_CHANGED, stale_services
from sensors.spec_drop_folder import folder_fingerprint, spec_drop_folder_sensor


def evaluate(instance, definitions, folder, cursor=None):
    context = dg.build_sensor_context(instance=instance, cursor=cursor, repository_def=definitions.get_repository_def(),
                                      resources={"spec_sources": SpecSourcesResource(drop_folder=str(folder))})
    with dg.partition_loading_context(dynamic_partitions_store=instance):
        data = spec_drop_folder_sensor.evaluate_tick(context)
    return data, context.cursor


def record_import(instance, spec_hashes: dict[str, str]) -> None:
    """What a successful ``import_specs_job`` leaves behind: partitions and per-service spec hashes."""
    instance.add_dynamic_partitions("service", sorted(spec_hashes))
    instance.report_runless_asset_event(dg.AssetMaterialization(
        "service_specs", metadata={"spec_hashes": dg.MetadataValue.json(spec_hashes)}))


def record_build(instance, service_id: str, spec_hash: str) -> None:
    instance.report_runless_asset_event(dg.AssetMaterialization(
        "services", partition=service_id, metadata={"spec_hash": spec_hash}))


def test_new_files_request_an_import_once(drop_folder, instance, definitions):
    data, cursor = evaluate(instance, definitions, drop_folder)
    assert [r.job_name for r in data.run_requests] == ["import_specs_job"]
    assert cursor == folder_fingerprint(drop_folder)
    record_import(instance, {"a": "h1", "b": "h2"})
    data, _ = evaluate(instance, definitions, drop_folder, cursor)
    assert all(r.job_name == "build_services_job" for r in data.run_requests)


def test_changed_file_changes_the_fingerprint(drop_folder):
    before = folder_fingerprint(drop_folder)
    path = drop_folder / "bfcl_ticket_api.json"
    path.write_text(path.read_text().replace("Close a ticket.", "Close a support ticket."))
    assert folder_fingerprint(drop_folder) != before


def test_follow_up_builds_only_new_and_changed_services(drop_folder, instance, definitions):
    cursor = folder_fingerprint(drop_folder)
    record_import(instance, {"a": "h1", "b": "h2", "c": "h3"})
    record_build(instance, "a", "h1")
    record_build(instance, "b", "h2")
    data, _ = evaluate(instance, definitions, drop_folder, cursor)
    assert [(r.partition_key, r.tags["compoworld/reason"]) for r in data.run_requests] == [("c", NEVER_BUILT)]

    record_build(instance, "c", "h3")
    data, _ = evaluate(instance, definitions, drop_folder, cursor)
    assert data.run_requests == [] and data.skip_message

    record_import(instance, {"a": "h1", "b": "h2-edited", "c": "h3"})
    assert stale_services(instance) == {"b": SPEC_CHANGED}
    data, _ = evaluate(instance, definitions, drop_folder, cursor)
    assert [(r.job_name, r.partition_key) for r in data.run_requests] == [("build_services_job", "b")]
    assert data.run_requests[0].run_key == "build-b-h2-edited"
