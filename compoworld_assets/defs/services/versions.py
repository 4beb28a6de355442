"""Data versions of ``services`` partitions that change only when a partition's content changes.

Dagster records one data version per step output, so every partition of a single-run build gets
the same one (dagster-io/dagster#18649, #34013: there is no ``DataVersionsByPartition`` for
materializations). Hashing the run's content would then give an unchanged partition a new version
whenever it is rebuilt with other partitions than before (alone, or beside a changed one), and mark everything
downstream Unsynced although nothing it reads changed.

So each partition's content is hashed (its stored row, or its quarantine record) and kept in its
materialization metadata under :data:`CONTENT_KEY`, and a run's version is chosen by
:func:`run_data_version`: a run whose partitions all hold the content they held at their latest
materialization, under one shared version, keeps that version; a run of one partition gets its
own content's hash; any other run gets the hash of all its partitions' contents. A partition's
version therefore changes only when that partition, or a partition built in the same run, changed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import dagster as dg

from compoworld_assets.engine.canonical import content_hash

CONTENT_KEY = "content_hash"
DATA_VERSION_TAG = "dagster/data_version"
VERSION_LENGTH = 16


@dataclass(frozen=True)
class Materialized:
    """A partition's latest materialization: the content hash it recorded and its data version."""

    content: str | None
    version: str


def run_data_version(contents: Mapping[str, str], previous: Mapping[str, Materialized]) -> str:
    """The data version for a run that stores ``contents`` (partition → content hash).

    ``previous`` holds each partition's latest materialization, where there is one.
    """
    if not contents:
        raise ValueError("a run stores at least one partition")
    before = [previous.get(key) for key in contents]
    unchanged = all(b is not None and b.content == contents[key] for key, b in zip(contents, before, strict=True))
    if unchanged and len({b.version for b in before if b is not None}) == 1:
        return before[0].version
    if len(contents) == 1:
        return next(iter(contents.values()))[:VERSION_LENGTH]
    return content_hash(sorted(contents.items()))[:VERSION_LENGTH]


def latest_materializations(instance: dg.DagsterInstance, asset_key: dg.AssetKey,
                            partitions: list[str]) -> dict[str, Materialized]:
    """Each partition's latest materialization of ``asset_key``, where it has one."""
    found: dict[str, Materialized] = {}
    for partition in partitions:
        records = instance.fetch_materializations(
            dg.AssetRecordsFilter(asset_key=asset_key, asset_partitions=[partition]), limit=1).records
        if not records:
            continue
        materialization = records[0].asset_materialization
        content = materialization.metadata.get(CONTENT_KEY)
        found[partition] = Materialized(content=None if content is None else str(content.value),
                                        version=materialization.tags.get(DATA_VERSION_TAG, ""))
    return found
