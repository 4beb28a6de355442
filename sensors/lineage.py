"""Per-service lineage: which ``services`` partitions need a build, and why.

Dagster's stale status already says which partitions are stale (each reads only its own
``service_spec`` partition, versioned by the spec hash). The drop-folder sensor needs more than a
status: *why* (never built, or spec changed), from public instance APIs only. The
``service_specs`` materialization carries ``spec_hashes`` (service id → spec hash) and every
``services`` partition's materialization carries the ``spec_hash`` it was built from; a partition
needs a build exactly when the two differ, or when it was never built. The lineage test checks
this answer against Dagster's.
"""

from __future__ import annotations

import dagster as dg

SERVICE_SPECS = dg.AssetKey("service_specs")
SERVICES = dg.AssetKey("services")
NEVER_BUILT = "never built"
SPEC_CHANGED = "spec changed"


def current_spec_hashes(instance: dg.DagsterInstance) -> dict[str, str]:
    """Service id → spec hash of the latest ``service_specs`` materialization (empty before the first)."""
    event = instance.get_latest_materialization_event(SERVICE_SPECS)
    if event is None or event.asset_materialization is None:
        return {}
    entry = event.asset_materialization.metadata.get("spec_hashes")
    return dict(entry.value) if entry is not None else {}


def built_spec_hashes(instance: dg.DagsterInstance, partitions: list[str]) -> dict[str, str | None]:
    """Partition → the spec hash its latest ``services`` materialization was built from (None: none)."""
    built: dict[str, str | None] = {}
    for partition in partitions:
        result = instance.fetch_materializations(
            dg.AssetRecordsFilter(asset_key=SERVICES, asset_partitions=[partition]), limit=1)
        if not result.records:
            built[partition] = None
            continue
        entry = result.records[0].asset_materialization.metadata.get("spec_hash")
        built[partition] = str(entry.value) if entry is not None else None
    return built


def stale_services(instance: dg.DagsterInstance) -> dict[str, str]:
    """Registered ``service`` partitions that need a build, each with why (never built / spec changed)."""
    partitions = sorted(instance.get_dynamic_partitions("service"))
    specs = current_spec_hashes(instance)
    stale = {}
    for partition, built_from in built_spec_hashes(instance, partitions).items():
        if built_from is None:
            stale[partition] = NEVER_BUILT
        elif partition in specs and specs[partition] != built_from:
            stale[partition] = SPEC_CHANGED
    return stale
