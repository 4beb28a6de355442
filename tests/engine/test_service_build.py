"""try_build_service: any stage's exception, the time limit included, comes back as a ServiceFailure."""

from __future__ import annotations

import pytest

from compoworld_assets.engine.deadline import DeadlineExceeded, check_deadline, time_limit
from compoworld_assets.engine.library import builtin_spec
from compoworld_assets.engine.service_build import ServiceBuild, ServiceFailure, try_build_service
from compoworld_assets.engine.synthesis.offline import OfflineSynthesizer
from compoworld_assets.engine.world_model.offline import OfflineWorldModel


def _no_sandbox(source: str):
    """An executor factory that cannot start: verification leaves every tool to the world model."""
    raise RuntimeError("no sandbox in this test")


class _RaisingSynthesizer(OfflineSynthesizer):
    def synthesize(self, spec):
        raise MemoryError("the coding agent ran out of memory")


class _RaisingWorldModel(OfflineWorldModel):
    def simulate(self, spec, tool, args, state):
        raise KeyError("the world model lost its cache")


def _build(**overrides):
    arguments = {"synthesizer": OfflineSynthesizer(), "executor_factory": _no_sandbox,
                 "world_model": OfflineWorldModel(), "seed": 1, **overrides}
    return try_build_service(builtin_spec("crm"), **arguments)


def test_a_build_without_failures_is_a_service_build():
    build = _build()
    assert isinstance(build, ServiceBuild) and build.world_model_tools


@pytest.mark.parametrize(("overrides", "stage", "error_type"), [
    ({"synthesizer": _RaisingSynthesizer()}, "synthesis", "MemoryError"),
    ({"world_model": _RaisingWorldModel()}, "world_model_probe", "KeyError"),
    ({"time_limit_s": 0.0}, "seed", "DeadlineExceeded"),
])
def test_each_stage_failure_is_attributed_to_its_stage(overrides, stage, error_type):
    failure = _build(**overrides)
    assert isinstance(failure, ServiceFailure)
    assert (failure.service_id, failure.stage, failure.error_type) == ("crm", stage, error_type)
    assert failure.message and failure.spec_hash == builtin_spec("crm").content_hash()


def test_a_seeding_failure_is_attributed_to_the_seed_stage(monkeypatch):
    from compoworld_assets.engine import service_build

    def broken_seeding(*args, **kwargs):
        raise ValueError("no population fits this spec")

    monkeypatch.setattr(service_build, "seed_service_state", broken_seeding)
    failure = _build()
    assert (failure.stage, failure.error_type, failure.message) == ("seed", "ValueError", "no population fits this spec")


def test_time_limits_nest_and_the_earliest_wins():
    with time_limit(None, "outer without a limit"):
        check_deadline()
    with time_limit(3600, "outer"), time_limit(0, "inner"), pytest.raises(DeadlineExceeded, match="inner"):
        check_deadline()
    with time_limit(0, "outer"), time_limit(3600, "inner"), pytest.raises(DeadlineExceeded, match="outer"):
        check_deadline()
    check_deadline()
