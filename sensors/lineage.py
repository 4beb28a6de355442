"""Per-service lineage: which ``services`` partitions are stale because their own spec changed.

``service_specs`` is one unpartitioned table, so Dagster's staleness (the data version of an
unpartitioned parent against each partition's recorded input version) marks *every* ``services``
partition stale when any one spec changes. The precise answer is recorded beside it: the
``service_specs`` materialization carries ``spec_hashes`` (service id → spec hash) and every
``services`` partition's materialization carries the ``spec_hash`` it was built from. A partition
is stale exactly when the two differ, or when it was never built.
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
