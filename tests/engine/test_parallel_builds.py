"""Builds in worker processes: the outcomes of one process, in order; a dying worker costs one service."""

from __future__ import annotations

from pathlib import Path

from compoworld_assets.engine import tables
from compoworld_assets.engine.backends import BackendRecipe, LLMSettings
from compoworld_assets.engine.library import builtin_spec
from compoworld_assets.engine.parallel_builds import BuildSettings, build_services, build_workers
from compoworld_assets.engine.runtime.executor import SandboxLimits
from compoworld_assets.engine.service_build import ServiceBuild, ServiceFailure

SERVICES = ("crm", "mail", "helpdesk", "calendar")


def _rows(outcomes):
    return [tables.service_rows([o]).to_dicts() if isinstance(o, ServiceBuild) else o for o in outcomes]


def test_builds_in_workers_equal_the_builds_of_one_process(tmp_path):
    specs = [builtin_spec(s) for s in SERVICES]
    settings = BuildSettings(seed=3)
    one = build_services(specs, BackendRecipe(LLMSettings(), SandboxLimits(), str(tmp_path / "a.sqlite")), settings)
    two = build_services(specs, BackendRecipe(LLMSettings(), SandboxLimits(), str(tmp_path / "b.sqlite")), settings,
                         workers=2)
    assert [o.spec.id for o in two] == list(SERVICES)
    assert _rows(two) == _rows(one)


def test_a_build_that_kills_its_worker_is_quarantined_and_the_others_are_built(monkeypatch):
    monkeypatch.syspath_prepend(str(Path(__file__).parent))  # the workers import the recipe's module by name
    from worker_faults import DyingRecipe

    specs = [builtin_spec(s) for s in SERVICES]
    outcomes = build_services(specs, DyingRecipe(victim="mail"), BuildSettings(seed=3), workers=2)
    failure = outcomes[1]
    assert isinstance(failure, ServiceFailure) and failure.stage == "worker" and failure.service_id == "mail"
    assert failure.spec_hash == specs[1].content_hash()
    assert [o.spec.id for o in outcomes if isinstance(o, ServiceBuild)] == ["crm", "helpdesk", "calendar"]


def test_workers_follow_the_cores_and_are_worth_their_start():
    assert build_workers(3, cores=16) == 1
    assert build_workers(37, cores=2) == 2
    assert build_workers(500, cores=64) == 8
    assert build_workers(40, cores=16) == 5


def _summary(outcome):
    if isinstance(outcome, ServiceFailure):
        return ("quarantined", outcome.service_id, outcome.stage)
    return ("built", outcome.spec.id, len(outcome.verified_tools) > 0)


def test_what_is_kept_of_each_build_replaces_it_failures_included(monkeypatch):
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    from worker_faults import DyingRecipe

    specs = [builtin_spec(s) for s in SERVICES]
    kept = build_services(specs, DyingRecipe(victim="mail"), BuildSettings(seed=3), workers=2, keep=_summary)
    assert kept == [("built", "crm", True), ("quarantined", "mail", "worker"), ("built", "helpdesk", True),
                    ("built", "calendar", True)]
