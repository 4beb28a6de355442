"""A temporary instance, DuckDB file and drop folder holding two spec files (no built-in library)."""

import shutil
from pathlib import Path

import dagster as dg
import pytest

from compoworld_assets.definitions import all_asset_checks, all_assets, build_resources
from resources import SpecSourcesResource
from sensors.jobs import ALL_JOBS
from sensors.schedules import ALL_SCHEDULES

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "specs"
DROPPED = ("bfcl_message_api.json", "bfcl_ticket_api.json")


@pytest.fixture
def drop_folder(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "specs"
    folder.mkdir()
    for name in DROPPED:
        shutil.copy(FIXTURES / name, folder / name)
    monkeypatch.setenv("COMPOWORLD_SPEC_DIR", str(folder))
    monkeypatch.setenv("COMPOWORLD_DATA_DIR", str(tmp_path / "data"))
    return folder


@pytest.fixture
def instance():
    with dg.instance_for_test() as instance:
        yield instance


@pytest.fixture
def materialize(drop_folder, instance, tmp_path):
    """``materialize(*keys, **kwargs)`` (or ``materialize(selection=...)``) on the drop folder's services only."""
    resources = {**build_resources(str(tmp_path / "data")),
                 "spec_sources": SpecSourcesResource(include_builtin=False, drop_folder=str(drop_folder))}
    everything = [*all_assets(), *all_asset_checks()]

    def run(*keys: str, selection: dg.AssetSelection | None = None, **kwargs) -> dg.ExecuteInProcessResult:
        return dg.materialize(everything, selection=selection or dg.AssetSelection.assets(*keys),
                              resources=resources, instance=instance, **kwargs)

    return run


@pytest.fixture(scope="session")
def definitions(tmp_path_factory) -> dg.Definitions:
    """Every asset, job and schedule; sensors and schedules resolve partitioned run requests against it."""
    return dg.Definitions(assets=all_assets(), jobs=ALL_JOBS, schedules=ALL_SCHEDULES,
                          resources=build_resources(str(tmp_path_factory.mktemp("data"))))
