"""Snapshot of the whole code location: every asset key, check, job and sensor."""

import dagster as dg
import pytest

from compoworld_assets.definitions import all_asset_checks, all_assets, defs
from resources import PARTITIONS_IO_MANAGER

# Ops that run for minutes to hours (training jobs, serving a model) and touch no DuckDB file.
LONG_JOB_OPS = {"prepare_base_model_folder", "train", "evaluate_benchmark"}

PIPELINE_TABLES = [
    "service_specs", "quarantined_specs", "services", "quarantined_services", "tool_catalog", "dependency_graph",
    "dependency_graph_nodes", "sampled_tasks", "quarantined_tasks", "rubrics", "trajectories",
    "verified_trajectories", "sft_dataset", "rl_tasks",
]
EXPECTED_ASSETS = {
    *PIPELINE_TABLES, "service_spec",
    "staging/stg_dependency_graph", "staging/stg_dependency_graph_nodes", "staging/stg_quarantined_specs",
    "staging/stg_quarantined_tasks", "staging/stg_rl_tasks", "staging/stg_rubrics",
    "staging/stg_sampled_tasks", "staging/stg_service_specs", "staging/stg_services",
    "staging/stg_sft_dataset", "staging/stg_tool_catalog", "staging/stg_trajectories",
    "staging/stg_verified_trajectories",
    "marts/catalog_by_domain", "marts/criterion_pass_rates", "marts/graph_edges_by_kind",
    "marts/graph_service_degrees", "marts/task_difficulty", "marts/verification_funnel",
    "base_model", "sft_checkpoint", "rl_checkpoint", "benchmark_scores",
    "staging/stg_benchmark_scores", "marts/leaderboard",
}
EXPECTED_GX_CHECKS = {(table, f"{table}_expectations") for table in PIPELINE_TABLES}
EXPECTED_CHECKS = EXPECTED_GX_CHECKS | {
    ("base_model", "base_model_hash_matches"),
    ("sft_checkpoint", "sft_checkpoint_hash_matches"),
    ("sft_checkpoint", "sft_loss_finite"),
    ("rl_checkpoint", "rl_checkpoint_hash_matches"),
    ("rl_checkpoint", "rl_reward_finite"),
    ("benchmark_scores", "benchmark_intervals_ordered"),
    ("benchmark_scores", "benchmark_self_tests_pass"),
    ("marts/leaderboard", "not_null_leaderboard_leaderboard_id"),
    ("marts/leaderboard", "not_null_leaderboard_score"),
    ("marts/leaderboard", "not_null_leaderboard_score_ci_high"),
    ("marts/leaderboard", "not_null_leaderboard_score_ci_low"),
    ("marts/leaderboard", "not_null_leaderboard_self_tests_passed"),
    ("marts/leaderboard", "unique_leaderboard_leaderboard_id"),
    ("staging/stg_benchmark_scores", "accepted_values_stg_benchmark_scores_benchmark__compoworld_heldout__bfcl__tau2"),
    ("staging/stg_benchmark_scores", "not_null_stg_benchmark_scores_benchmark"),
    ("staging/stg_benchmark_scores", "not_null_stg_benchmark_scores_ci_width"),
    ("staging/stg_benchmark_scores", "not_null_stg_benchmark_scores_metric"),
    ("staging/stg_benchmark_scores", "not_null_stg_benchmark_scores_model"),
    ("dependency_graph", "edges_join_known_tools"),
    ("dependency_graph_nodes", "node_names_unique"),
    ("marts/catalog_by_domain", "not_null_catalog_by_domain_n_tools"),
    ("marts/catalog_by_domain", "not_null_catalog_by_domain_service_id"),
    ("marts/catalog_by_domain", "unique_catalog_by_domain_service_id"),
    ("marts/criterion_pass_rates", "accepted_values_criterion_pass_rates_kind__state__answer__negative"),
    ("marts/criterion_pass_rates", "not_null_criterion_pass_rates_kind"),
    ("marts/criterion_pass_rates", "not_null_criterion_pass_rates_pass_rate"),
    ("marts/criterion_pass_rates", "unique_criterion_pass_rates_kind"),
    ("marts/graph_edges_by_kind", "accepted_values_graph_edges_by_kind_kind__type__state"),
    ("marts/graph_edges_by_kind", "not_null_graph_edges_by_kind_kind"),
    ("marts/graph_edges_by_kind", "not_null_graph_edges_by_kind_n_edges"),
    ("marts/graph_edges_by_kind", "unique_graph_edges_by_kind_kind"),
    ("marts/graph_service_degrees", "not_null_graph_service_degrees_n_tools"),
    ("marts/graph_service_degrees", "not_null_graph_service_degrees_service_id"),
    ("marts/graph_service_degrees",
     "relationships_graph_service_degrees_service_id__service_id__ref_stg_services_"),
    ("marts/graph_service_degrees", "unique_graph_service_degrees_service_id"),
    ("marts/task_difficulty", "accepted_values_task_difficulty_split__train__rl__heldout__transfer"),
    ("marts/task_difficulty", "not_null_task_difficulty_bucket"),
    ("marts/task_difficulty", "not_null_task_difficulty_n_tasks"),
    ("marts/task_difficulty", "unique_task_difficulty_bucket"),
    ("marts/verification_funnel", "not_null_verification_funnel_n"),
    ("marts/verification_funnel", "not_null_verification_funnel_stage"),
    ("marts/verification_funnel", "not_null_verification_funnel_stage_order"),
    ("marts/verification_funnel", "unique_verification_funnel_stage"),
    ("marts/verification_funnel", "unique_verification_funnel_stage_order"),
    ("quarantined_specs", "quarantine_entries_explained"),
    ("quarantined_tasks", "quarantined_tasks_explained"),
    ("rl_tasks", "rl_tasks_have_rubrics"),
    ("rubrics", "rubrics_well_formed"),
    ("sampled_tasks", "gate_pass_share"),
    ("sampled_tasks", "heldout_combinations_unseen"),
    ("sampled_tasks", "plan_hashes_unique"),
    ("sampled_tasks", "service_spread"),
    ("sampled_tasks", "tasks_cross_services"),
    ("service_specs", "service_ids_unique"),
    ("service_specs", "specs_revalidate"),
    ("service_spec", "service_spec_versions_match"),
    ("services", "modules_intact"),
    ("services", "no_quarantined_services"),
    ("services", "verified_share"),
    ("sft_dataset", "sft_samples_complete"),
    ("staging/stg_dependency_graph", "accepted_values_stg_dependency_graph_kind__type__state"),
    ("staging/stg_dependency_graph", "not_null_stg_dependency_graph_source"),
    ("staging/stg_dependency_graph", "not_null_stg_dependency_graph_target"),
    ("staging/stg_dependency_graph",
     "relationships_stg_dependency_graph_source__qualified_name__ref_stg_dependency_graph_nodes_"),
    ("staging/stg_dependency_graph",
     "relationships_stg_dependency_graph_target__qualified_name__ref_stg_dependency_graph_nodes_"),
    ("staging/stg_dependency_graph_nodes", "not_null_stg_dependency_graph_nodes_qualified_name"),
    ("staging/stg_dependency_graph_nodes",
     "relationships_stg_dependency_graph_nodes_qualified_name__qualified_name__ref_stg_tool_catalog_"),
    ("staging/stg_dependency_graph_nodes", "unique_stg_dependency_graph_nodes_qualified_name"),
    ("staging/stg_quarantined_specs", "not_null_stg_quarantined_specs_reason"),
    ("staging/stg_quarantined_tasks", "accepted_values_stg_quarantined_tasks_stage__instantiate__gate__error__worker"),
    ("staging/stg_rl_tasks", "not_null_stg_rl_tasks_task_id"),
    ("staging/stg_rl_tasks", "relationships_stg_rl_tasks_task_id__task_id__ref_stg_sampled_tasks_"),
    ("staging/stg_rl_tasks", "unique_stg_rl_tasks_task_id"),
    ("staging/stg_rubrics", "accepted_values_stg_rubrics_kind__state__answer__negative"),
    ("staging/stg_rubrics", "not_null_stg_rubrics_criterion_key"),
    ("staging/stg_rubrics", "relationships_stg_rubrics_task_id__task_id__ref_stg_sampled_tasks_"),
    ("staging/stg_rubrics", "unique_stg_rubrics_criterion_key"),
    ("staging/stg_sampled_tasks", "accepted_values_stg_sampled_tasks_split__train__rl__heldout__transfer"),
    ("staging/stg_sampled_tasks", "not_null_stg_sampled_tasks_task_id"),
    ("staging/stg_sampled_tasks", "unique_stg_sampled_tasks_task_id"),
    ("staging/stg_service_specs", "not_null_stg_service_specs_domain"),
    ("staging/stg_service_specs", "not_null_stg_service_specs_service_id"),
    ("staging/stg_service_specs", "unique_stg_service_specs_service_id"),
    ("staging/stg_services", "not_null_stg_services_service_id"),
    ("staging/stg_services", "relationships_stg_services_service_id__service_id__ref_stg_service_specs_"),
    ("staging/stg_services", "unique_stg_services_service_id"),
    ("staging/stg_sft_dataset", "not_null_stg_sft_dataset_trajectory_id"),
    ("staging/stg_sft_dataset",
     "relationships_stg_sft_dataset_trajectory_id__trajectory_id__ref_stg_verified_trajectories_"),
    ("staging/stg_sft_dataset", "unique_stg_sft_dataset_trajectory_id"),
    ("staging/stg_tool_catalog", "accepted_values_stg_tool_catalog_implementation__code__world_model"),
    ("staging/stg_tool_catalog", "not_null_stg_tool_catalog_qualified_name"),
    ("staging/stg_tool_catalog",
     "relationships_stg_tool_catalog_service_id__service_id__ref_stg_service_specs_"),
    ("staging/stg_tool_catalog", "unique_stg_tool_catalog_qualified_name"),
    ("staging/stg_trajectories", "not_null_stg_trajectories_trajectory_id"),
    ("staging/stg_trajectories", "relationships_stg_trajectories_task_id__task_id__ref_stg_sampled_tasks_"),
    ("staging/stg_trajectories", "unique_stg_trajectories_trajectory_id"),
    ("staging/stg_verified_trajectories", "not_null_stg_verified_trajectories_trajectory_id"),
    ("staging/stg_verified_trajectories",
     "relationships_stg_verified_trajectories_trajectory_id__trajectory_id__ref_stg_trajectories_"),
    ("staging/stg_verified_trajectories", "unique_stg_verified_trajectories_trajectory_id"),
    ("tool_catalog", "no_unusable_tools"),
    ("tool_catalog", "qualified_names_unique"),
    ("tool_catalog", "tools_usable"),
    ("trajectories", "calls_name_known_tools"),
    ("trajectories", "simulated_values_grounded"),
    ("verified_trajectories", "kept_means_verified"),
    ("verified_trajectories", "verification_yield"),
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
        "import_specs_job", "build_services_job", "tool_catalog_job", "catalog_and_graph_job",
        "task_round_job", "datasets_job", "training_job", "benchmark_job"}
    assert {s.name for s in definitions.sensors} == {
        "spec_drop_folder_sensor", "run_failure_recorder", "dead_run_reaper", "automation_sensor",
        "sft_checkpoint_sensor", "rl_checkpoint_sensor"}
    assert {s.name for s in definitions.schedules} == {"nightly_task_round_schedule", "weekly_training_schedule"}


def test_every_asset_has_a_check():
    graph = defs().resolve_asset_graph()
    checked = {k.asset_key for k in graph.asset_check_keys}
    assert set(graph.get_all_asset_keys()) <= checked


def test_services_are_dynamically_partitioned_per_service():
    graph = defs().resolve_asset_graph()
    partitions = graph.get(dg.AssetKey("services")).partitions_def
    assert isinstance(partitions, dg.DynamicPartitionsDefinition)
    assert partitions.name == "service"


DELTA_TABLES = {"services", "quarantined_services", "sampled_tasks", "quarantined_tasks", "rubrics", "trajectories",
                "verified_trajectories"}


def test_every_duckdb_step_and_only_those_hold_the_duckdb_pool():
    """DuckDB allows one writer (and the IO manager opens the file read-write even to load): every step that
    writes a table of the file is in pool ``duckdb`` (one slot, dagster.yaml). The long jobs between their reads
    and writes are not, nor the steps that write partitions of Delta tables and their checks: those only read
    the file for a moment (waiting for its lock) and commit their partitions side by side."""
    stored_in_delta = {key.to_user_string() for definition in all_assets()
                       if isinstance(definition, dg.AssetsDefinition) and definition.is_executable
                       for key in definition.keys
                       if definition.get_io_manager_key_for_asset_key(key) == PARTITIONS_IO_MANAGER}
    assert stored_in_delta == DELTA_TABLES - {"quarantined_services"}  # that one the services step writes itself
    pools, writes_delta = {}, set()
    for definition in [*all_assets(), *all_asset_checks()]:
        if not (isinstance(definition, dg.AssetsDefinition) and definition.is_executable):
            continue
        targets = {key.to_user_string() for key in definition.keys}
        targets |= {check.asset_key.to_user_string() for check in definition.check_keys}
        for op in definition.node_def.iterate_op_defs():
            pools[op.name] = op.pool
            if targets and targets <= DELTA_TABLES:
                writes_delta.add(op.name)
    assert LONG_JOB_OPS <= set(pools) and {"services", "sample_tasks", "rubrics"} <= writes_delta
    unpooled = LONG_JOB_OPS | writes_delta
    wrong = sorted(name for name, pool in pools.items() if (pool == "duckdb") == (name in unpooled))
    assert wrong == []


def test_the_step_executor_is_chosen_by_name_and_an_unknown_one_is_refused(monkeypatch):
    from dagster_k8s import k8s_job_executor

    from compoworld_assets import definitions

    monkeypatch.delenv("COMPOWORLD_EXECUTOR", raising=False)
    assert definitions.step_executor() is definitions.EXECUTOR  # the default
    assert definitions.step_executor("k8s") is k8s_job_executor
    monkeypatch.setenv("COMPOWORLD_EXECUTOR", "k8s")
    assert definitions.defs().get_job_def("build_services_job").executor_def is k8s_job_executor
    monkeypatch.setenv("COMPOWORLD_EXECUTOR", "slurm")
    with pytest.raises(ValueError, match="COMPOWORLD_EXECUTOR='slurm': use one of forkserver, k8s"):
        definitions.step_executor()
