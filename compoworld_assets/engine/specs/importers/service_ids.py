"""One service id per distinct API: a second API whose title gives an id already in use is renamed, not dropped.

Real corpora reuse titles ("Account API" from several vendors, two versions of one product, a
client and a server spec), so the id a title gives is not unique. The rules, applied in import
order so the same files always give the same ids:

- an id not in use is kept (so built-in and earlier services never change id);
- a spec whose content (everything but its source) equals one already kept is the same API listed
  twice: it is quarantined as a duplicate;
- any other spec is renamed to ``<id>_<qualifier>``, the qualifier being the words of its location
  (parent folder, then file stem; a dotted name loses its last label, ``ebay.com`` → ``ebay``) that
  the id does not already have; when those give nothing new, or a taken id, a short hash of the
  location is appended instead. The rename rewrites the spec's references to its own entities.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection, Iterable
from pathlib import PurePosixPath
from typing import Any

from compoworld_assets.engine.canonical import content_hash
from compoworld_assets.engine.specs.importers.naming import MAX_SERVICE_ID
from compoworld_assets.engine.specs.infer import snake_name
from compoworld_assets.engine.specs.model import ServiceSpec
from compoworld_assets.engine.types import is_entity_ref, parse_entity_ref

_HASH_CHARS = 6


def spec_fingerprint(spec: ServiceSpec) -> str:
    """The content hash of everything but the spec's source: equal fingerprints are the same API."""
    return content_hash(spec.model_dump(mode="json", exclude={"source"}))


def location_words(location: str) -> list[str]:
    """Distinguishing words of a location: its parent folder's, then its file stem's."""
    path = PurePosixPath(location.split("#", 1)[0].replace("\\", "/"))
    parts = [path.parent.name, path.stem]
    words: list[str] = []
    for part in parts:
        labels = part.split(".")
        stem = ".".join(labels[:-1]) if len(labels) > 1 and labels[-1] else part
        words.extend(w for w in snake_name(stem).split("_") if w and w not in words)
    return words


def distinct_service_id(base: str, location: str, taken: Collection[str]) -> str:
    """``base`` qualified by the words of ``location`` it lacks, else by a hash of ``location``; never in ``taken``."""
    own = set(base.split("_"))
    qualifier = "_".join(w for w in location_words(location) if w not in own)
    digest = hashlib.sha1(location.encode("utf-8", "surrogatepass")).hexdigest()
    for suffix in ([qualifier] if qualifier else []) + [digest[:_HASH_CHARS], digest]:
        candidate = _joined(base, suffix)
        if candidate not in taken:
            return candidate
    raise ValueError(f"no free service id for {base!r} at {location!r}")  # a full SHA-1 collision


def _joined(base: str, suffix: str) -> str:
    """``base_suffix`` within the id length, cutting ``base`` (the suffix is what tells the two apart)."""
    head = base[: max(1, MAX_SERVICE_ID - len(suffix) - 1)].rstrip("_")
    return f"{head}_{suffix}"[:MAX_SERVICE_ID].rstrip("_")


def assign_service_ids(entries: Iterable[tuple[str, str, str]], taken: Iterable[str] = ()) -> list[str | None]:
    """For each (id, location, fingerprint) in order: the id it gets, or ``None`` for a duplicate.

    Only a spec with the id and the fingerprint (:func:`spec_fingerprint`) of an earlier one is a duplicate.

    ``taken`` holds ids already in use (the built-in library's): a spec with one of them is renamed.
    """
    used = set(taken)
    kept: set[tuple[str, str]] = set()
    assigned: list[str | None] = []
    for service_id, location, fingerprint in entries:
        if (service_id, fingerprint) in kept:
            assigned.append(None)
            continue
        kept.add((service_id, fingerprint))
        final = service_id if service_id not in used else distinct_service_id(service_id, location, used)
        used.add(final)
        assigned.append(final)
    return assigned


def with_service_id(spec: ServiceSpec, service_id: str) -> ServiceSpec:
    """``spec`` renamed to ``service_id``, its references to its own entities rewritten."""
    if service_id == spec.id:
        return spec
    own = {entity.name for entity in spec.entities}
    data = _renamed(spec.model_dump(mode="json"), spec.id, service_id, own)
    data["id"] = service_id
    return ServiceSpec.model_validate(data)


def _renamed(value: Any, old: str, new: str, own: set[str]) -> Any:
    if isinstance(value, dict):
        return {key: _renamed(item, old, new, own) for key, item in value.items()}
    if isinstance(value, list):
        return [_renamed(item, old, new, own) for item in value]
    if isinstance(value, str) and is_entity_ref(value):
        service, entity = parse_entity_ref(value)
        if service == old and entity in own:
            return re.sub(rf"^{re.escape(old)}\.", f"{new}.", value)
    return value
