"""Snapshot of the whole code location: every asset key, check, job and sensor."""

import dagster as dg

from compoworld_assets.definitions import defs

EXPECTED_ASSETS = {
    "service_specs", "quarantined_specs", "services", "tool_catalog",
    "dependency_graph", "dependency_graph_nodes", "sampled_tasks", "quarantined_tasks", "rubrics",
    "trajectories", "verified_trajectories", "sft_dataset", "rl_tasks",
    "staging/stg_service_specs", "staging/stg_quarantined_specs", "staging/stg_services",
    "staging/stg_tool_catalog", "marts/catalog_by_domain", "marts/verification_funnel",
}
EXPECTED_CHECKS = {
    ("service_specs", "service_ids_unique"),
    ("service_specs", "specs_revalidate"),
    ("quarantined_specs", "quarantine_entries_explained"),
    ("services", "modules_intact"),
    ("services", "verified_share"),
    ("tool_catalog", "qualified_names_unique"),
    ("tool_catalog", "tools_usable"),
    ("tool_catalog", "no_unusable_tools"),
    ("dependency_graph", "edges_join_known_tools"),
    ("dependency_graph_nodes", "node_names_unique"),
    ("quarantined_tasks", "quarantined_tasks_explained"),
    ("rl_tasks", "rl_tasks_have_rubrics"),
    ("rubrics", "rubrics_well_formed"),
    ("sampled_tasks", "gate_pass_share"),
    ("sampled_tasks", "heldout_combinations_unseen"),
    ("sampled_tasks", "plan_hashes_unique"),
    ("sampled_tasks", "tasks_cross_services"),
    ("sft_dataset", "sft_samples_complete"),
    ("trajectories", "calls_name_known_tools"),
    ("verified_trajectories", "kept_means_verified"),
    ("verified_trajectories", "verification_yield"),
    ("marts/catalog_by_domain", "not_null_catalog_by_domain_n_tools"),
    ("marts/catalog_by_domain", "not_null_catalog_by_domain_service_id"),
    ("marts/catalog_by_domain", "unique_catalog_by_domain_service_id"),
    ("marts/verification_funnel", "not_null_verification_funnel_stage"),
    ("marts/verification_funnel", "unique_verification_funnel_stage"),
    ("staging/stg_quarantined_specs", "not_null_stg_quarantined_specs_reason"),
    ("staging/stg_service_specs", "not_null_stg_service_specs_domain"),
    ("staging/stg_service_specs", "not_null_stg_service_specs_service_id"),
    ("staging/stg_service_specs", "unique_stg_service_specs_service_id"),
    ("staging/stg_services", "not_null_stg_services_service_id"),
    ("staging/stg_services", "unique_stg_services_service_id"),
    ("staging/stg_tool_catalog", "accepted_values_stg_tool_catalog_implementation__code__world_model"),
    ("staging/stg_tool_catalog", "not_null_stg_tool_catalog_qualified_name"),
    ("staging/stg_tool_catalog", "relationships_stg_tool_catalog_service_id__service_id__ref_stg_service_specs_"),
    ("staging/stg_tool_catalog", "unique_stg_tool_catalog_qualified_name"),
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
