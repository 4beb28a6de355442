"""Logistics: parcel shipments and their tracking history."""

from __future__ import annotations

from compoworld_assets.engine.library.builder import ServiceBuilder, field
from compoworld_assets.engine.specs.model import ServiceSpec

MODULE = "logistics"


def shipping() -> ServiceSpec:
    b = ServiceBuilder("shipping", "Shipping", "logistics", "Parcel shipments, carriers and tracking events.",
                       MODULE)
    b.entity("Shipment", "shp", "A parcel sent to a recipient.",
             field("order_id", "orders.Order.id"),
             field("recipient_name", "person_name"),
             field("recipient_email", "email"),
             field("address", "address"),
             field("city", "city"),
             field("country", "country"),
             field("carrier", enum=["dhl", "ups", "fedex", "postal"]),
             field("tracking_number"),
             field("weight_kg", "number"),
             field("status", enum=["label_created", "in_transit", "delivered", "returned", "lost"]),
             field("shipped_at", "datetime", required=False),
             field("estimated_delivery", "date"))
    b.entity("TrackingEvent", "trk", "A scan of a shipment along its route.",
             field("shipment_id", "shipping.Shipment.id"),
             field("status"),
             field("city", "city"),
             field("occurred_at", "datetime"))
    b.create_as("create_shipment", "Shipment", "Create a shipment and its label.",
                sets={"status": "label_created"})
    b.crud("Shipment", "RLSUD")
    b.update_as("mark_in_transit", "Shipment", "Record that the carrier picked up a shipment.",
                sets={"status": "in_transit"}, params=("shipped_at",), required=("shipped_at",))
    b.update_as("mark_delivered", "Shipment", "Record that a shipment was delivered.",
                sets={"status": "delivered"})
    b.update_as("mark_lost", "Shipment", "Record that a shipment was lost.", sets={"status": "lost"})
    b.create_as("add_tracking_event", "TrackingEvent", "Record a scan of a shipment.")
    b.crud("TrackingEvent", "L")
    b.query("get_shipping_quote", "Quote the carrier's live price for sending a parcel.",
             [field("carrier", enum=["dhl", "ups", "fedex", "postal"]), field("weight_kg", "number"),
              field("origin", "city"), field("destination", "city")],
             [field("price", "money"), field("currency", "currency"), field("transit_days", "integer")])
    b.query("geocode_address", "Resolve a postal address to coordinates.",
             [field("address", "address"), field("city", "city"), field("country", "country")],
             [field("latitude", "number"), field("longitude", "number")])
    return b.build()


def services() -> list[ServiceSpec]:
    return [shipping()]
