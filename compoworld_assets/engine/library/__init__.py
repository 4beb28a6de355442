"""The built-in library of hand-designed services, and seeded initial data for any spec.

Services connect through shared interface types (emails, money, dates, file paths...) and
through entity references into each other (an invoice points at a ``crm.Contact.id`` or an
``orders.Order.id``), so tasks can chain tools across services.
"""

from __future__ import annotations

from functools import lru_cache

from compoworld_assets.engine.library import (
    accounting,
    commerce,
    communication,
    crm,
    documents,
    finance,
    it,
    legal,
    logistics,
    marketing,
    people,
    projects,
    scheduling,
    support,
    travel,
)
from compoworld_assets.engine.specs.model import ServiceSpec

DOMAIN_MODULES = (crm, communication, scheduling, documents, support, finance, accounting, commerce,
                  logistics, people, travel, projects, marketing, legal, it)


@lru_cache(maxsize=1)
def _library() -> tuple[ServiceSpec, ...]:
    specs = tuple(spec for module in DOMAIN_MODULES for spec in module.services())
    ids = [spec.id for spec in specs]
    if len(ids) != len(set(ids)):
        raise ValueError(f"duplicate built-in service ids: {sorted(i for i in ids if ids.count(i) > 1)}")
    return specs


def builtin_specs() -> list[ServiceSpec]:
    """Every built-in service, in a stable order (fresh copies: callers may mutate them)."""
    return [spec.model_copy(deep=True) for spec in _library()]


def builtin_spec(service_id: str) -> ServiceSpec:
    for spec in _library():
        if spec.id == service_id:
            return spec.model_copy(deep=True)
    raise KeyError(f"no built-in service {service_id!r}")


def builtin_service_ids() -> list[str]:
    return [spec.id for spec in _library()]
