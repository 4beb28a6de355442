"""Snapshot of the whole code location: every asset key, check, job and sensor."""

import dagster as dg

from compoworld_assets.definitions import defs

EXPECTED_ASSETS = {"service_specs", "quarantined_specs", "services", "tool_catalog"}
EXPECTED_CHECKS = {
    ("service_specs", "service_ids_unique"),
    ("service_specs", "specs_revalidate"),
    ("quarantined_specs", "quarantine_entries_explained"),
    ("services", "modules_intact"),
    ("services", "verified_share"),
    ("tool_catalog", "qualified_names_unique"),
    ("tool_catalog", "tools_usable"),
    ("tool_catalog", "no_unusable_tools"),
}


def test_definitions_snapshot():
    definitions = defs()
    definitions.validate_loadable(definitions)
    graph = definitions.resolve_asset_graph()
    assets = {key.to_user_string() for key in graph.get_all_asset_keys()}
    assert assets == EXPECTED_ASSETS
    checks = {(k.asset_key.to_user_string(), k.name) for k in graph.asset_check_keys}
    assert checks == EXPECTED_CHECKS
    assert {j.name for j in definitions.resolve_all_job_defs()} >= {
        "import_specs_job", "build_services_job", "tool_catalog_job"}
    assert {s.name for s in definitions.sensors} == {"spec_drop_folder_sensor"}


def test_every_asset_has_a_check():
    graph = defs().resolve_asset_graph()
    checked = {k.asset_key for k in graph.asset_check_keys}
    assert set(graph.get_all_asset_keys()) <= checked


def test_services_are_dynamically_partitioned_per_service():
    graph = defs().resolve_asset_graph()
    partitions = graph.get(dg.AssetKey("services")).partitions_def
    assert isinstance(partitions, dg.DynamicPartitionsDefinition)
    assert partitions.name == "service"
