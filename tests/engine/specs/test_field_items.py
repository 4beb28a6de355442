"""``FieldSpec.items``: array item schemas on entity fields, absent from dumps when unset."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from compoworld_assets.engine.specs.model import EntitySpec, FieldSpec

URL_ITEMS = {"type": "object", "properties": {"href": {"type": "string"}}, "required": ["href"]}


def test_unset_items_leave_dumps_and_schemas_as_before():
    tags = FieldSpec(name="tags", json_type="array")
    assert "items" not in tags.model_dump() and '"items"' not in tags.model_dump_json()
    assert tags.json_schema() == {"type": "array", "items": {}}


def test_item_schema_reaches_the_record_schema_and_survives_a_round_trip():
    urls = FieldSpec(name="urls", json_type="array", required=False, items=URL_ITEMS)
    assert urls.json_schema() == {"type": "array", "items": URL_ITEMS}
    entity = EntitySpec(name="Item", id_prefix="item", fields=[urls])
    assert entity.record_schema("vault")["properties"]["urls"]["anyOf"][0]["items"] == URL_ITEMS
    assert EntitySpec.model_validate_json(entity.model_dump_json()) == entity


def test_items_only_on_array_fields():
    with pytest.raises(ValidationError, match="only array fields"):
        FieldSpec(name="title", json_type="string", items={"type": "string"})
