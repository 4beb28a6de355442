"""A resource without a component schema named after it (described inline, or by a component named otherwise)
still becomes a typed entity whose CRUD tools verify."""

from __future__ import annotations

import json

from compoworld_assets.engine.runtime.sandbox import trusted_executor
from compoworld_assets.engine.runtime.service_runtime import ServiceRuntime
from compoworld_assets.engine.service_build import build_service
from compoworld_assets.engine.specs.importers import import_spec_file
from compoworld_assets.engine.specs.model import Effect
from compoworld_assets.engine.synthesis.offline import CODE_EFFECTS, OfflineSynthesizer
from compoworld_assets.engine.world_model.offline import OfflineWorldModel

ORDER = {"type": "object", "properties": {
    "id": {"type": "string"}, "status": {"type": "string", "enum": ["open", "shipped", "cancelled"]},
    "total": {"type": "number"}, "customer_email": {"type": "string", "format": "email"}}}


def _json(schema: dict) -> dict:
    return {"description": "ok", "content": {"application/json": {"schema": schema}}}


def _document(list_schema: dict) -> dict:
    return {
        "openapi": "3.0.0", "info": {"title": "Inline Shop", "version": "1"},
        "paths": {
            "/orders": {
                "get": {"operationId": "listOrders", "responses": {"200": _json(list_schema)}},
                "post": {"operationId": "createOrder", "requestBody": {"required": True, "content": {
                    "application/json": {"schema": {"type": "object", "properties": {
                        "status": ORDER["properties"]["status"], "total": {"type": "number"}}}}}},
                         "responses": {"201": _json(ORDER)}},
            },
            "/orders/{orderId}": {
                "parameters": [{"name": "orderId", "in": "path", "required": True, "schema": {"type": "string"}}],
                "get": {"operationId": "getOrder", "responses": {"200": _json(ORDER)}},
                "delete": {"operationId": "deleteOrder", "responses": {"204": {"description": "gone"}}},
            },
        },
    }


def _import(tmp_path, document: dict):
    path = tmp_path / "inline_shop.json"
    path.write_text(json.dumps(document))
    return import_spec_file(path).specs[0]


def test_an_inline_record_schema_becomes_the_resources_entity(tmp_path):
    spec = _import(tmp_path, _document({"type": "object", "properties": {
        "orders": {"type": "array", "items": ORDER}, "next_page": {"type": "string"}}}))
    [entity] = spec.entities
    assert entity.name == "Order"
    assert {"status", "total", "customer_email"} <= {f.name for f in entity.fields}
    effects = {t.name: t.effect for t in spec.tools}
    assert effects == {"list_orders": Effect.LIST, "create_order": Effect.CREATE, "get_order": Effect.READ,
                       "delete_order": Effect.DELETE}
    build = build_service(spec, OfflineSynthesizer(), trusted_executor, OfflineWorldModel(), seed=7)
    assert sorted(build.verified_tools) == sorted(t.name for t in spec.tools if t.effect in CODE_EFFECTS)


def test_the_list_alone_describes_the_record_when_no_item_read_does(tmp_path):
    document = _document({"type": "array", "items": ORDER})
    document["paths"]["/orders/{orderId}"]["get"]["responses"] = {"200": {"description": "ok"}}
    [entity] = _import(tmp_path, document).entities
    assert {"status", "total"} <= {f.name for f in entity.fields}


def test_a_response_without_a_record_gives_no_entity(tmp_path):
    document = _document({"type": "object", "properties": {"count": {"type": "integer"}}})
    document["paths"]["/orders/{orderId}"]["get"]["responses"] = {"200": _json({"type": "string"})}
    del document["paths"]["/orders"]["post"]  # a create body would describe the record too
    spec = _import(tmp_path, document)
    assert spec.entities == [] and {t.effect for t in spec.tools} == {Effect.ACTION, Effect.QUERY}  # GETs: queries


def test_a_component_named_otherwise_becomes_the_resources_entity(tmp_path):
    document = _document({"type": "array", "items": {"$ref": "#/components/schemas/PurchaseDetails"}})
    document["paths"]["/orders/{orderId}"]["get"]["responses"] = {
        "200": _json({"$ref": "#/components/schemas/PurchaseDetails"})}
    document["components"] = {"schemas": {"PurchaseDetails": ORDER}}
    spec = _import(tmp_path, document)
    [entity] = spec.entities
    assert entity.name == "Order"  # named after the resource, built from the component
    assert {"status", "total", "customer_email"} <= {f.name for f in entity.fields}
    assert {t.name: t.effect for t in spec.tools}["get_order"] == Effect.READ
    build = build_service(spec, OfflineSynthesizer(), trusted_executor, OfflineWorldModel(), seed=7)
    assert sorted(build.verified_tools) == sorted(t.name for t in spec.tools if t.effect in CODE_EFFECTS)


def test_an_array_that_is_part_of_one_record_is_not_a_list_of_records(tmp_path):
    status = {"type": "object", "properties": {"name": {"type": "string"}, "version": {"type": "string"},
                                               "dependencies": {"type": "array", "items": ORDER}}}
    document = {"openapi": "3.0.0", "info": {"title": "Status", "version": "1"},
                "paths": {"/health": {"get": {"operationId": "getHealth", "responses": {"200": _json(status)}}}}}
    spec = _import(tmp_path, document)
    assert spec.entities == [] and spec.tools[0].effect == Effect.QUERY


def test_a_resource_no_read_describes_holds_what_its_writes_send(tmp_path):
    """No response schema at all (as in many hand-written specs): the create's and updates' bodies say
    what an order holds; a read-only property is the service's, not the caller's."""
    document = _document({"type": "object", "properties": {"count": {"type": "integer"}}})
    document["paths"]["/orders/{orderId}"]["get"]["responses"] = {"200": {"description": "ok"}}
    document["paths"]["/orders"]["post"]["responses"] = {"201": {"description": "made"}}
    document["paths"]["/orders"]["post"]["requestBody"]["content"]["application/json"]["schema"] = {
        "type": "object", "required": ["total"], "properties": {
            "status": ORDER["properties"]["status"], "total": {"type": "number"},
            "created": {"type": "string", "readOnly": True}}}
    document["paths"]["/orders/{orderId}"]["patch"] = {"operationId": "patchOrder", "requestBody": {"content": {
        "application/json": {"schema": {"type": "object", "properties": {"note": {"type": "string"}}}}}},
        "responses": {"200": {"description": "ok"}}}
    spec = _import(tmp_path, document)
    [entity] = spec.entities
    assert entity.name == "Order"
    assert {f.name: f.required for f in entity.fields} == {"status": False, "total": True, "note": False}
    effects = {t.name: t.effect for t in spec.tools}
    assert effects == {"list_orders": Effect.LIST, "create_order": Effect.CREATE, "get_order": Effect.READ,
                       "patch_order": Effect.UPDATE, "delete_order": Effect.DELETE}
    build = build_service(spec, OfflineSynthesizer(), trusted_executor, OfflineWorldModel(), seed=7)
    assert sorted(build.verified_tools) == sorted(effects)



def test_an_update_that_names_no_field_gives_the_record_the_fields_it_writes(tmp_path):
    """The read describes an order as {status, total, customer_email}; ``PUT /orders/{id}`` takes other names
    (the API's writable view). Without those fields the update would succeed and change nothing."""
    document = _document({"type": "array", "items": ORDER})
    document["paths"]["/orders/{orderId}"]["put"] = {"operationId": "replaceOrder", "requestBody": {"content": {
        "application/json": {"schema": {"type": "object", "required": ["shippingNote"], "properties": {
            "shippingNote": {"type": "string"}, "giftWrap": {"type": "boolean"}}}}}},
        "responses": {"200": _json(ORDER)}}
    spec = _import(tmp_path, document)
    [entity] = spec.entities
    added = {f.name: (f.json_type, f.required) for f in entity.fields if f.name in ("shippingNote", "giftWrap")}
    assert added == {"shippingNote": ("string", False), "giftWrap": ("boolean", False)}
    assert "giftWrap" in spec.tool("get_order").returns["properties"]  # the reads show what the update wrote
    build = build_service(spec, OfflineSynthesizer(), trusted_executor, OfflineWorldModel(), seed=7)
    assert "replace_order" in build.verified_tools
    order_id = min(build.seed_state.tables["Order"])
    runtime = ServiceRuntime(spec, build.module, world_model=OfflineWorldModel())
    try:
        runtime.reset(build.seed_state)
        assert runtime.call("replace_order", {"orderId": order_id, "shippingNote": "leave at door"})["success"]
        assert runtime.call("get_order", {"orderId": order_id})["data"]["shippingNote"] == "leave at door"
    finally:
        runtime.close()
