"""Format detection, directory import and multi-source loading with de-duplication."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from compoworld_assets.engine.specs.importers import detect_kind, import_spec_dir, import_spec_file
from compoworld_assets.engine.specs.sources import SpecSource, load_sources

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "specs"


def test_detect_kind():
    assert detect_kind({"openapi": "3.0.0"}) == "openapi"
    assert detect_kind({"tools": [{"name": "a", "inputSchema": {}}]}) == "mcp"
    assert detect_kind({"jsonrpc": "2.0", "result": {"tools": [{"name": "a", "inputSchema": {}}]}}) == "mcp"
    assert detect_kind({"services": {"x": {}}, "tools": []}) == "compoworld"
    assert detect_kind({"tools": [{"type": "function", "function": {"name": "a"}}]}) == "functions"
    assert detect_kind([{"name": "a"}]) == "functions"


def test_each_fixture_is_detected_as_its_format():
    kinds = {p.name: {s.source.kind for s in import_spec_file(p).specs} for p in sorted(FIXTURES.iterdir())}
    assert kinds["bfcl_message_api.json"] == {"bfcl"}
    assert kinds["openapi_xero_files.yaml"] == {"openapi"}
    assert kinds["mcp_github_rpc.json"] == {"mcp"}
    assert kinds["compoworld_gateway.json"] == {"compoworld"}
    assert kinds["malformed_tools.json"] == {"openai"}
    assert kinds["malformed_invalid.json"] == set()


def test_explicit_kind_overrides_detection():
    [spec] = import_spec_file(FIXTURES / "malformed_tools.json", "bfcl").specs
    assert spec.source.kind == "bfcl"
    result = import_spec_file(FIXTURES / "malformed_tools.json", "compoworld")
    assert {s.id for s in result.specs} == {"get", "send"}


def test_directory_import_quarantines_unreadable_files_and_goes_on():
    result = import_spec_dir(FIXTURES)
    ids = [s.id for s in result.specs]
    assert len(ids) == len(set(ids)) == 13
    [invalid] = [q for q in result.quarantined if q.location.endswith("malformed_invalid.json")]
    assert invalid.reason.startswith("invalid JSON") and "missing the closing brace" in invalid.fragment
    assert ids.index("bfcl_message_api") < ids.index("xero_files_api")  # sorted file order


def test_load_sources_dedupes_service_ids(tmp_path):
    copy = tmp_path / "again"
    copy.mkdir()
    shutil.copy(FIXTURES / "bfcl_ticket_api.json", copy / "bfcl_ticket_api.json")
    result = load_sources(
        [
            SpecSource(kind="bfcl", path=str(FIXTURES / "bfcl_ticket_api.json")),
            SpecSource(kind="auto", path=str(copy)),
            SpecSource(kind="openapi", path=str(FIXTURES / "openapi_1password_connect.json")),
        ]
    )
    assert [s.id for s in result.specs] == ["bfcl_ticket_api", "api_1_password_connect"]
    [dupe] = result.quarantined
    assert dupe.reason.startswith("duplicate of service 'bfcl_ticket_api'")
    assert dupe.location == str(copy / "bfcl_ticket_api.json")


def test_missing_source_is_quarantined_not_raised(tmp_path):
    result = load_sources([SpecSource(kind="auto", path=str(tmp_path / "nope.json"))])
    assert result.specs == [] and result.quarantined[0].reason.startswith("unreadable file")


def test_non_object_top_level_is_quarantined(tmp_path):
    path = tmp_path / "numbers.json"
    path.write_text(json.dumps(42))
    result = import_spec_file(path)
    assert result.specs == []
    assert [q.reason for q in result.quarantined] == [
        "tool entry is not an object (got int)",
        "no importable tools",
    ]


def test_files_imported_in_worker_processes_give_what_one_process_gives(tmp_path):
    """A corpus's files are imported in worker processes (a paper-scale sample's 430 took 14.8 s in one); the rows
    are the same, in file order, malformed files quarantined as before."""
    from compoworld_assets.engine import tables
    from compoworld_assets.engine.specs.importers import import_spec_files

    files = sorted(FIXTURES.iterdir())
    alone = import_spec_files(files, workers=1)
    spread = import_spec_files(files, workers=2)
    assert all(tables.spec_rows(r.specs).equals(tables.spec_rows(s.specs))
               and tables.quarantine_rows(r.quarantined).equals(tables.quarantine_rows(s.quarantined))
               for r, s in zip(alone, spread, strict=True))
    assert any(r.specs for r in spread) and any(r.quarantined for r in spread)


def test_a_file_whose_import_is_lost_is_quarantined_with_why(tmp_path):
    from compoworld_assets.engine.specs.importers import _lost
    from compoworld_assets.engine.workers import WorkerLost

    path = tmp_path / "huge.json"
    path.write_text('{"openapi": "3.0.0"}')
    result = _lost(path, "auto", WorkerLost("BrokenProcessPool", "the worker process died (killed or out of memory)"))
    [row] = result.quarantined
    assert not result.specs and row.location.endswith("huge.json") and row.source_kind == "auto"
    assert row.reason == "the import failed: BrokenProcessPool: the worker process died (killed or out of memory)"
    assert '"openapi"' in row.fragment
