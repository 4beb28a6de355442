"""Commerce: customer orders, the product inventory and purchasing from vendors."""

from __future__ import annotations

from compoworld_assets.engine.library.builder import ServiceBuilder, field
from compoworld_assets.engine.specs.model import ServiceSpec

MODULE = "commerce"
ORDER_STATUSES = ["pending", "paid", "fulfilled", "shipped", "delivered", "cancelled", "returned"]


def orders() -> ServiceSpec:
    b = ServiceBuilder("orders", "Orders", "commerce", "Customer orders and their line items.", MODULE)
    b.entity("Order", "ord", "A customer's order.",
             field("order_number"),
             field("customer_email", "email"),
             field("customer_name", "person_name"),
             field("shipping_address", "address"),
             field("city", "city"),
             field("country", "country"),
             field("status", enum=ORDER_STATUSES),
             field("total", "money"),
             field("currency", "currency"),
             field("placed_at", "datetime"))
    b.entity("OrderItem", "oitm", "One product line of an order.",
             field("order_id", "orders.Order.id"),
             field("product_id", "inventory.Product.id"),
             field("quantity", "integer"),
             field("unit_price", "money"))
    b.create_as("place_order", "Order", "Place a new order.", sets={"status": "pending"})
    b.crud("Order", "RLSUD")
    b.update_as("mark_order_paid", "Order", "Mark an order as paid.", sets={"status": "paid"})
    b.update_as("fulfill_order", "Order", "Mark an order as packed and fulfilled.",
                sets={"status": "fulfilled"})
    b.update_as("cancel_order", "Order", "Cancel an order.", sets={"status": "cancelled"})
    b.update_as("return_order", "Order", "Record that an order was returned.", sets={"status": "returned"})
    b.update_as("mark_order_delivered", "Order", "Mark an order as delivered to its customer.",
                sets={"status": "delivered"})
    b.create_as("add_order_item", "OrderItem", "Add a product to an order.")
    b.crud("OrderItem", "LUD")
    return b.build()


def inventory() -> ServiceSpec:
    b = ServiceBuilder("inventory", "Inventory", "commerce", "The product catalogue and stock per warehouse.",
                       MODULE)
    b.entity("Product", "prod", "A product for sale.",
             field("sku"),
             field("name"),
             field("description", required=False),
             field("category", enum=["electronics", "office", "apparel", "furniture", "food"]),
             field("price", "money"),
             field("currency", "currency"),
             field("active", "boolean"))
    b.entity("Warehouse", "wh", "A stock location.",
             field("name"),
             field("address", "address"),
             field("city", "city"),
             field("country", "country"))
    b.entity("StockLevel", "stk", "The quantity of a product held in a warehouse.",
             field("product_id", "inventory.Product.id"),
             field("warehouse_id", "inventory.Warehouse.id"),
             field("quantity", "integer"),
             field("reorder_point", "integer"))
    b.crud("Product")
    b.update_as("discontinue_product", "Product", "Stop selling a product.", sets={"active": False})
    b.crud("Warehouse", "CRL")
    b.crud("StockLevel", "CRLU")
    return b.build()


def procurement() -> ServiceSpec:
    b = ServiceBuilder("procurement", "Procurement", "commerce",
                       "Vendors and the purchase orders sent to them.", MODULE)
    b.entity("Vendor", "vnd", "A supplier.",
             field("company", "company_name"),
             field("contact_email", "email"),
             field("phone", "phone", required=False),
             field("address", "address"),
             field("city", "city"),
             field("country", "country"),
             field("payment_terms", enum=["net15", "net30", "net60", "prepaid"]))
    b.entity("PurchaseOrder", "po", "An order for stock from a vendor.",
             field("vendor_id", "procurement.Vendor.id"),
             field("product_id", "inventory.Product.id"),
             field("quantity", "integer"),
             field("unit_cost", "money"),
             field("currency", "currency"),
             field("requester_email", "email"),
             field("status", enum=["draft", "submitted", "approved", "received", "cancelled"]),
             field("expected_on", "date"))
    b.crud("Vendor", "CRLSU")
    b.create_as("create_purchase_order", "PurchaseOrder", "Draft a purchase order.", sets={"status": "draft"})
    b.crud("PurchaseOrder", "RLU")
    b.update_as("submit_purchase_order", "PurchaseOrder", "Submit a purchase order.",
                sets={"status": "submitted"})
    b.update_as("approve_purchase_order", "PurchaseOrder", "Approve a purchase order.",
                sets={"status": "approved"})
    b.update_as("receive_purchase_order", "PurchaseOrder", "Record delivery of a purchase order.",
                sets={"status": "received"})
    b.update_as("cancel_purchase_order", "PurchaseOrder", "Cancel a purchase order.",
                sets={"status": "cancelled"})
    return b.build()


def services() -> list[ServiceSpec]:
    return [orders(), inventory(), procurement()]
