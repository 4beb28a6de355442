"""The declarative service builder."""

from __future__ import annotations

import pytest

from compoworld_assets.engine.library.builder import ServiceBuilder, field, plural_of, snake_case
from compoworld_assets.engine.specs.model import Effect


def small_builder() -> ServiceBuilder:
    b = ServiceBuilder("shop", "Shop", "commerce", "A test shop.", "test")
    b.entity("LineItem", "li", "A line.", field("sku"), field("status", enum=["open", "done"]),
             field("buyer", "email"), field("note", required=False))
    return b


def test_field_infers_json_type_from_shared_type() -> None:
    assert field("amount", "money").json_type == "number"
    assert field("owner", "crm.Contact.id").json_type == "string"
    assert field("count", "integer").type is None
    with pytest.raises(ValueError):
        field("x", "not_a_type")


def test_names() -> None:
    assert snake_case("LeaveRequest") == "leave_request"
    assert [plural_of(n) for n in ("category", "day", "address", "task")] == \
        ["categories", "days", "addresses", "tasks"]


def test_crud_builds_the_conventional_tools() -> None:
    b = small_builder()
    b.crud("LineItem")
    spec = b.build()
    effects = {t.name: t.effect for t in spec.tools}
    assert effects == {"create_line_item": Effect.CREATE, "get_line_item": Effect.READ,
                       "list_line_items": Effect.LIST, "search_line_items": Effect.SEARCH,
                       "update_line_item": Effect.UPDATE, "delete_line_item": Effect.DELETE}
    create = spec.tool("create_line_item")
    assert create.required_parameters() == ["sku", "status", "buyer"]
    assert spec.key_parameter(spec.tool("update_line_item")) == "line_item_id"
    assert set(spec.tool("list_line_items").parameter_properties()) == {"status", "buyer", "limit"}
    assert spec.source.location == "compoworld_assets.engine.library:test"


def test_setters_take_only_the_key_and_named_params() -> None:
    b = small_builder()
    b.update_as("finish", "LineItem", "Finish.", sets={"status": "done"}, params=("note",))
    b.update_as("rename", "LineItem", "Rename.", params=("sku",), required=("sku",))
    spec = b.build()
    finish, rename = spec.tool("finish"), spec.tool("rename")
    assert set(finish.parameter_properties()) == {"line_item_id", "note"}
    assert finish.sets == {"status": "done"}
    assert rename.required_parameters() == ["line_item_id", "sku"]


def test_sets_outside_the_enum_are_rejected() -> None:
    b = small_builder()
    b.update_as("bad", "LineItem", "Bad.", sets={"status": "archived"})
    with pytest.raises(ValueError, match="archived"):
        b.build()


def test_unknown_update_param_is_rejected() -> None:
    b = small_builder()
    with pytest.raises(ValueError, match="no field"):
        b.update_as("bad", "LineItem", "Bad.", params=("colour",))


def test_query_tools_default_to_the_world_model_and_change_nothing() -> None:
    b = small_builder()
    b.query("quote", "Live quote.", [field("sku")], [field("price", "money")])
    tool = b.build().tool("quote")
    assert tool.effect == Effect.QUERY and not tool.implementable and not tool.changes_state
    assert tool.output_types() == {"price": "money"}
