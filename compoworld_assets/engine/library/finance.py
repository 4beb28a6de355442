"""Money in and out: card and bank payments, and customer invoicing."""

from __future__ import annotations

from compoworld_assets.engine.library.builder import ServiceBuilder, field
from compoworld_assets.engine.specs.model import ServiceSpec

MODULE = "finance"


def payments() -> ServiceSpec:
    b = ServiceBuilder("payments", "Payments", "finance", "Incoming payments, refunds and outgoing payouts.",
                       MODULE)
    b.entity("Payment", "pay", "A payment received from a customer.",
             field("payer_email", "email"),
             field("payer_name", "person_name"),
             field("amount", "money"),
             field("currency", "currency"),
             field("method", enum=["card", "bank_transfer", "wallet"]),
             field("status", enum=["pending", "succeeded", "failed", "cancelled", "refunded"]),
             field("invoice_id", "invoicing.Invoice.id", required=False),
             field("order_id", "orders.Order.id", required=False),
             field("description", required=False),
             field("created_at", "datetime"))
    b.entity("Refund", "rfd", "Money returned against a payment.",
             field("payment_id", "payments.Payment.id"),
             field("amount", "money"),
             field("currency", "currency"),
             field("reason"),
             field("status", enum=["requested", "completed", "rejected"]),
             field("created_at", "datetime"))
    b.entity("Payout", "pout", "A transfer to a payee's bank account.",
             field("recipient_email", "email"),
             field("recipient_name", "person_name"),
             field("amount", "money"),
             field("currency", "currency"),
             field("iban"),
             field("status", enum=["scheduled", "sent", "cancelled"]),
             field("scheduled_on", "date"))
    b.create_as("create_payment", "Payment", "Record an incoming payment (pending capture).",
                sets={"status": "pending"})
    b.crud("Payment", "RLS")
    b.update_as("capture_payment", "Payment", "Capture a pending payment.", sets={"status": "succeeded"})
    b.update_as("cancel_payment", "Payment", "Cancel a pending payment.", sets={"status": "cancelled"})
    b.create_as("refund_payment", "Refund", "Refund all or part of a payment.", sets={"status": "requested"})
    b.crud("Refund", "RL")
    b.create_as("schedule_payout", "Payout", "Schedule a payout to a bank account.",
                sets={"status": "scheduled"})
    b.crud("Payout", "RL")
    b.update_as("cancel_payout", "Payout", "Cancel a scheduled payout.", sets={"status": "cancelled"})
    b.query("convert_currency", "Convert an amount between currencies at the live exchange rate.",
             [field("amount", "money"), field("from_currency", "currency"), field("to_currency", "currency")],
             [field("amount", "money"), field("currency", "currency"), field("rate", "number")])
    return b.build()


def invoicing() -> ServiceSpec:
    b = ServiceBuilder("invoicing", "Invoicing", "finance",
                       "Customer invoices, their lines and their status.", MODULE)
    b.entity("Invoice", "inv", "A bill sent to a customer.",
             field("number"),
             field("payer_email", "email"),
             field("payer_name", "person_name"),
             field("contact_id", "crm.Contact.id", required=False),
             field("order_id", "orders.Order.id", required=False),
             field("issue_date", "date"),
             field("due_date", "date"),
             field("amount_due", "money"),
             field("currency", "currency"),
             field("status", enum=["draft", "sent", "paid", "overdue", "void"]),
             field("pdf_path", "file_path", required=False))
    b.entity("InvoiceLine", "line", "One billed item of an invoice.",
             field("invoice_id", "invoicing.Invoice.id"),
             field("description"),
             field("quantity", "integer"),
             field("unit_price", "money"),
             field("product_id", "inventory.Product.id", required=False))
    b.create_as("create_invoice", "Invoice", "Draft an invoice.", sets={"status": "draft"})
    b.crud("Invoice", "RLSUD")
    b.update_as("send_invoice", "Invoice", "Send an invoice to the payer.", sets={"status": "sent"})
    b.update_as("mark_invoice_paid", "Invoice", "Mark an invoice as paid.", sets={"status": "paid"})
    b.update_as("mark_invoice_overdue", "Invoice", "Flag an unpaid invoice as overdue.",
                sets={"status": "overdue"})
    b.update_as("void_invoice", "Invoice", "Void an invoice.", sets={"status": "void"})
    b.create_as("add_invoice_line", "InvoiceLine", "Add a billed item to an invoice.")
    b.crud("InvoiceLine", "LUD")
    return b.build()


def services() -> list[ServiceSpec]:
    return [payments(), invoicing()]
