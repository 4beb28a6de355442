"""Jobs that sensors, schedules and the command line launch.

One job cannot mix partitions definitions, so the pipeline is cut where they change: specs
(unpartitioned) → services (``service`` partitions) → catalog and graph (unpartitioned) → a task
round (``task_round`` partitions) → datasets and dbt marts (unpartitioned) → training.
"""

import dagster as dg

TASK_ROUND_ASSETS = ("sampled_tasks", "quarantined_tasks", "rubrics", "trajectories", "verified_trajectories")

# The import also observes the per-service ``service_spec`` view; its check runs in the same job.
IMPORT_SPECS = (dg.AssetSelection.assets("service_specs", "quarantined_specs")
                | dg.AssetSelection.checks_for_assets("service_spec"))

import_specs_job = dg.define_asset_job(
    "import_specs_job", selection=IMPORT_SPECS,
    description="Import every spec source and register new service partitions.",
)

build_services_job = dg.define_asset_job(
    "build_services_job", selection=dg.AssetSelection.assets("services"),
    description="Synthesize and verify the selected service partitions.",
)

tool_catalog_job = dg.define_asset_job(
    "tool_catalog_job", selection=dg.AssetSelection.assets("tool_catalog"),
    description="Rebuild the tool catalog from every built service.",
)

catalog_and_graph_job = dg.define_asset_job(
    "catalog_and_graph_job",
    selection=dg.AssetSelection.assets("tool_catalog", "dependency_graph", "dependency_graph_nodes"),
    description="Rebuild the tool catalog and the tool dependency graph from every built service.",
)

task_round_job = dg.define_asset_job(
    "task_round_job", selection=dg.AssetSelection.assets(*TASK_ROUND_ASSETS),
    description="Sample one round of cross-service tasks, roll agents out on them and verify the trajectories.",
)

# The dbt models over evaluation results (the leaderboard) wait for the evaluation run, not the datasets.
PIPELINE_REPORTING = dg.AssetSelection.groups("reporting") - dg.AssetSelection.assets("benchmark_scores").downstream()

datasets_job = dg.define_asset_job(
    "datasets_job",
    selection=dg.AssetSelection.assets("sft_dataset", "rl_tasks") | PIPELINE_REPORTING,
    description="Write the SFT and RL datasets from every round, then the dbt models over the pipeline tables.",
)

training_job = dg.define_asset_job(
    "training_job", selection=dg.AssetSelection.groups("training"),
    description="Retrain on the current datasets: every asset in the 'training' group.",
)

ALL_JOBS = [import_specs_job, build_services_job, tool_catalog_job, catalog_and_graph_job, task_round_job,
            datasets_job, training_job]
