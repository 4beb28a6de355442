"""Bring your own initial state: a spec's data file, mapped to entities, validated and used as its seed world."""

from __future__ import annotations

import json
from pathlib import Path

from compoworld_assets.engine.library.seeding import Population, seed_service_state
from compoworld_assets.engine.runtime.sandbox import trusted_executor
from compoworld_assets.engine.service_build import build_service
from compoworld_assets.engine.specs.importers import import_spec_dir, import_spec_file
from compoworld_assets.engine.synthesis.offline import OfflineSynthesizer
from compoworld_assets.engine.world_model.offline import OfflineWorldModel

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "seed_data"


def test_a_nested_document_seeds_the_service_and_bad_records_are_quarantined():
    result = import_spec_file(FIXTURES / "shop.json")
    [spec] = result.specs
    # collections map by name (orders → Order) or become entities (users → User)
    assert sorted(spec.seed_records) == ["Order", "User"]
    assert sorted(spec.seed_records["Order"]) == ["#W1001", "#W1002"]  # ids are the document's keys
    assert spec.seed_records["User"]["u1"]["name"] == "Ada Berg"  # ids from <entity>_id
    # fields the records hold are added, typed from their values
    order = spec.entity("Order")
    assert order.field("placed_at").type == "datetime" and order.field("total").json_type == "number"
    reasons = {q.location.split(".data.json#", 1)[-1]: q.reason for q in result.quarantined}
    assert "must be one of" in reasons["Order/#W1003"]  # an enum value the spec does not allow
    assert "must be a list or an object of records" in reasons["notes"]
    assert all(q.source_kind == "seed_data" for q in result.quarantined)


def test_a_folder_of_csv_files_seeds_by_schema_and_types():
    result = import_spec_file(FIXTURES / "retail.json")
    [spec] = result.specs
    products = spec.seed_records["Product"]
    assert sorted(products) == ["p1", "p2"]
    assert products["p1"] == {"id": "p1", "name": "Desk lamp", "price": 24.9, "in_stock": True}
    [rejected] = result.quarantined
    assert rejected.location.endswith("#Product/p3") and "name" in rejected.reason  # a required field missing


def test_data_files_are_not_imported_as_specs():
    result = import_spec_dir(FIXTURES)
    assert sorted(s.id for s in result.specs) == ["retail", "shop"]
    assert not any("could not" in q.reason or q.source_kind != "seed_data" for q in result.quarantined)


def test_the_seed_world_is_the_data_and_the_data_is_in_the_spec_hash():
    [spec] = import_spec_file(FIXTURES / "shop.json").specs
    state = seed_service_state(spec, Population.generate(3), seed=3)
    assert state.tables["Order"] == spec.seed_records["Order"]
    assert set(state.tables["Message"])  # entities without data are generated as before
    without = spec.model_copy(update={"seed_records": None})
    assert without.content_hash() != spec.content_hash()
    assert "seed_records" not in json.loads(without.model_dump_json())


def test_a_service_built_on_its_data_verifies_its_transitions():
    [spec] = import_spec_file(FIXTURES / "shop.json").specs
    build = build_service(spec, OfflineSynthesizer(), trusted_executor, OfflineWorldModel(), seed=1)
    assert build.seed_state.tables["Order"]["#W1001"]["status"] == "pending"
    assert {"cancel_pending_order", "get_order_details"} <= set(build.verified_tools)


def test_a_record_whose_value_has_another_type_is_quarantined_and_the_field_is_kept(tmp_path):
    """One record with text where the others (or as many) hold a number loses nothing but itself."""
    spec = {"type": "function", "function": {"name": "list_orders", "description": "List orders.",
                                             "parameters": {"type": "object", "properties": {}}}}
    (tmp_path / "shop.json").write_text(json.dumps([spec]))
    (tmp_path / "shop.data.json").write_text(json.dumps({"orders": [
        {"order_id": "o1", "total": 12.5}, {"order_id": "o2", "total": "not a number"}]}))
    result = import_spec_file(tmp_path / "shop.json")
    [imported] = result.specs
    assert imported.entity("Order").field("total").json_type == "number"
    assert imported.seed_records["Order"] == {"o1": {"id": "o1", "total": 12.5}}
    [rejected] = result.quarantined
    assert rejected.location.endswith("#Order/o2") and "total" in rejected.reason
