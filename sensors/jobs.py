"""Jobs that sensors, schedules and the command line launch."""

import dagster as dg

import_specs_job = dg.define_asset_job(
    "import_specs_job", selection=dg.AssetSelection.assets("service_specs", "quarantined_specs"),
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

ALL_JOBS = [import_specs_job, build_services_job, tool_catalog_job]
