"""Customer relationship management: accounts, contacts and the deals sold to them."""

from __future__ import annotations

from compoworld_assets.engine.library.builder import ServiceBuilder, field
from compoworld_assets.engine.specs.model import ServiceSpec

MODULE = "crm"


def crm() -> ServiceSpec:
    b = ServiceBuilder("crm", "CRM", "crm", "Customer accounts, their contacts and the sales pipeline.",
                       MODULE)
    b.entity("Account", "acct", "A customer organisation.",
             field("company", "company_name"),
             field("industry",
                   enum=["software", "retail", "manufacturing", "finance", "healthcare", "logistics"]),
             field("website", "url", required=False),
             field("phone", "phone", required=False),
             field("address", "address", required=False),
             field("city", "city"),
             field("country", "country"),
             field("owner_email", "email", description="Account manager."))
    b.entity("Contact", "cont", "A person at a customer account.",
             field("full_name", "person_name"),
             field("email", "email"),
             field("phone", "phone", required=False),
             field("company", "company_name", required=False),
             field("account_id", "crm.Account.id", required=False),
             field("job_title", required=False),
             field("lifecycle", enum=["lead", "prospect", "customer", "churned"]),
             field("city", "city", required=False),
             field("created_at", "datetime"))
    b.entity("Deal", "deal", "A sales opportunity.",
             field("title"),
             field("account_id", "crm.Account.id"),
             field("contact_id", "crm.Contact.id", required=False),
             field("amount", "money"),
             field("currency", "currency"),
             field("stage", enum=["qualification", "proposal", "negotiation", "won", "lost"]),
             field("close_date", "date"),
             field("owner_email", "email"))
    b.entity("Note", "note", "A note logged against a contact.",
             field("contact_id", "crm.Contact.id"),
             field("author_email", "email"),
             field("body"),
             field("created_at", "datetime"))
    b.crud("Contact")
    b.crud("Account", "CRLSU")
    b.crud("Deal", "CRLU")
    b.update_as("mark_deal_won", "Deal", "Close a deal as won.", sets={"stage": "won"},
                params=("amount", "close_date"))
    b.update_as("mark_deal_lost", "Deal", "Close a deal as lost.", sets={"stage": "lost"})
    b.update_as("convert_lead", "Contact", "Turn a lead into a customer.", sets={"lifecycle": "customer"},
                params=("account_id",))
    b.crud("Note", "CL")
    return b.build()


def services() -> list[ServiceSpec]:
    return [crm()]
