"""Imported OpenAPI services: CRUD tools verify against the seeded typed state."""

from __future__ import annotations

from pathlib import Path

import pytest

from compoworld_assets.engine.runtime.sandbox import trusted_executor
from compoworld_assets.engine.service_build import build_service
from compoworld_assets.engine.specs.importers import import_spec_file
from compoworld_assets.engine.synthesis.offline import CODE_EFFECTS, OfflineSynthesizer
from compoworld_assets.engine.world_model.offline import OfflineWorldModel

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "specs"


@pytest.mark.parametrize(
    "name", ["openapi_1password_connect.json", "openapi_xero_files.yaml", "malformed_openapi_broken_ref.json"]
)
def test_every_crud_tool_verifies_and_every_fallback_probe_answers_or_says_it_cannot(name):
    """A fallback tool whose answer nothing in the state holds (a file's content, a server's health) fails its
    probe by saying so, never by a crash or an answer of the wrong type."""
    spec = import_spec_file(FIXTURES / name).specs[0]
    build = build_service(spec, OfflineSynthesizer(), trusted_executor, OfflineWorldModel(), seed=7)
    crud = sorted(t.name for t in spec.tools if t.effect in CODE_EFFECTS)
    assert crud and sorted(build.verified_tools) == crud
    assert [p.detail for p in build.world_model_probes
            if not p.passed and "offline world model cannot answer" not in p.detail] == []
