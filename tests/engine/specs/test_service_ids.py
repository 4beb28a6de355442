"""Distinct APIs that share a title get distinct, stable service ids; the same API twice is one service."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from compoworld_assets.engine.library import builtin_specs
from compoworld_assets.engine.specs.importers import dedupe_service_ids, import_spec_dir
from compoworld_assets.engine.specs.importers.service_ids import (
    assign_service_ids,
    distinct_service_id,
    location_words,
)
from compoworld_assets.engine.specs.model import SERVICE_ID_RE, ImportResult
from compoworld_assets.engine.types import TYPE_KEY, is_entity_ref, parse_entity_ref

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "specs"
OPENAPI = FIXTURES / "openapi_1password_connect.json"


def _write_variant(path: Path, description: str) -> None:
    doc = json.loads(OPENAPI.read_text())
    doc["info"]["description"] = description
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))


def _entity_refs(value):
    if isinstance(value, dict):
        for key, item in value.items():
            if key == TYPE_KEY and isinstance(item, str) and is_entity_ref(item):
                yield item
            yield from _entity_refs(item)
    elif isinstance(value, list):
        for item in value:
            yield from _entity_refs(item)


def test_two_apis_with_one_title_become_two_services_with_their_own_entities(tmp_path):
    _write_variant(tmp_path / "acme.com" / "connect.json", "Acme's server.")
    _write_variant(tmp_path / "globex.io" / "connect-v2.json", "Globex's fork, another API.")
    result = import_spec_dir(tmp_path)
    first, second = result.specs
    assert first.id == "api_1_password_connect"
    assert second.id == "api_1_password_connect_globex_v2"
    assert not result.quarantined
    refs = {parse_entity_ref(r)[0] for r in _entity_refs(second.model_dump(mode="json"))}
    assert refs == {second.id}, "the renamed spec still points at the other service's entities"
    assert second.key_parameter(second.tools[0]) is None or second.entities


def test_the_same_api_listed_twice_is_one_service_and_a_quarantine_row(tmp_path):
    _write_variant(tmp_path / "a" / "connect.json", "Same.")
    _write_variant(tmp_path / "b" / "connect.json", "Same.")
    result = import_spec_dir(tmp_path)
    assert [s.id for s in result.specs] == ["api_1_password_connect"]
    [dupe] = result.quarantined
    assert dupe.location.endswith("b/connect.json") and dupe.reason.startswith("duplicate of service")


def test_an_import_named_like_a_builtin_is_renamed_and_the_builtin_keeps_its_id(tmp_path):
    builtin = {s.id for s in builtin_specs()}
    spec = import_spec_dir(FIXTURES).specs[0].model_copy(update={"id": "crm"})
    renamed = dedupe_service_ids(ImportResult(specs=[spec]), seen=builtin).specs[0]
    assert renamed.id not in builtin and renamed.id.startswith("crm_")


def test_ids_are_stable_across_runs(tmp_path):
    _write_variant(tmp_path / "acme.com" / "connect.json", "one")
    _write_variant(tmp_path / "globex.io" / "connect.json", "two")
    assert [s.id for s in import_spec_dir(tmp_path).specs] == [s.id for s in import_spec_dir(tmp_path).specs]


def test_location_words_drop_the_top_level_label_and_keep_folder_then_stem():
    assert location_words("api/ebay.com/sell-account.json") == ["ebay", "sell", "account"]
    assert location_words("specs/v2/openapi.yaml#/paths") == ["v2", "openapi"]
    assert location_words("amazonaws.com/sesv2.json") == ["amazonaws", "sesv2"]


def test_a_qualifier_that_adds_nothing_falls_back_to_a_hash_of_the_location():
    renamed = distinct_service_id("account_api", "account/api.json", {"account_api"})
    assert renamed.startswith("account_api_") and len(renamed) == len("account_api_") + 6
    assert distinct_service_id("account_api", "x/nexmo.com/account.json", {"account_api"}) == "account_api_nexmo"


_ids = st.from_regex(r"[a-z][a-z0-9_]{0,62}", fullmatch=True)
_locations = st.from_regex(r"[a-z0-9./_-]{1,40}", fullmatch=True)


@given(st.lists(st.tuples(_ids, _locations, st.sampled_from("abc")), max_size=30),
       st.sets(_ids, max_size=5))
def test_assigned_ids_are_valid_unique_and_deterministic(entries, taken):
    assigned = assign_service_ids(entries, taken)
    kept = [a for a in assigned if a is not None]
    assert len(kept) == len(set(kept)) and not set(kept) & taken
    assert all(SERVICE_ID_RE.match(a) for a in kept)
    assert assign_service_ids(entries, taken) == assigned
    fingerprints = [(sid, fp) for sid, _, fp in entries]
    for index, value in enumerate(assigned):
        assert (value is None) == (fingerprints[index] in fingerprints[:index])
