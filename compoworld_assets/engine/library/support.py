"""Customer support: a helpdesk of tickets and a knowledge base of help articles."""

from __future__ import annotations

from compoworld_assets.engine.library.builder import ServiceBuilder, field
from compoworld_assets.engine.specs.model import ServiceSpec

MODULE = "support"


def helpdesk() -> ServiceSpec:
    b = ServiceBuilder("helpdesk", "Helpdesk", "support", "Customer support tickets and their replies.",
                       MODULE)
    b.entity("Ticket", "tkt", "A customer support request.",
             field("subject"),
             field("description"),
             field("customer_email", "email"),
             field("customer_name", "person_name", required=False),
             field("order_id", "orders.Order.id", required=False),
             field("priority", enum=["low", "normal", "high", "urgent"]),
             field("status", enum=["open", "pending", "escalated", "closed"]),
             field("channel", enum=["email", "chat", "phone", "web"]),
             field("assignee_email", "email", required=False),
             field("resolution", required=False),
             field("created_at", "datetime"))
    b.entity("TicketReply", "rpl", "A reply or internal note on a ticket.",
             field("ticket_id", "helpdesk.Ticket.id"),
             field("author_email", "email"),
             field("body"),
             field("is_internal", "boolean"),
             field("created_at", "datetime"))
    b.create_as("open_ticket", "Ticket", "Open a new support ticket.", sets={"status": "open"})
    b.crud("Ticket", "RLSUD")
    b.update_as("close_ticket", "Ticket", "Close a ticket with a resolution.", sets={"status": "closed"},
                params=("resolution",))
    b.update_as("reopen_ticket", "Ticket", "Reopen a closed ticket.", sets={"status": "open"})
    b.update_as("escalate_ticket", "Ticket", "Escalate a ticket to urgent.",
                sets={"status": "escalated", "priority": "urgent"})
    b.update_as("assign_ticket", "Ticket", "Assign a ticket to an agent.", params=("assignee_email",),
                required=("assignee_email",))
    b.update_as("set_ticket_priority", "Ticket", "Change a ticket's priority.", params=("priority",),
                required=("priority",))
    b.create_as("reply_to_ticket", "TicketReply", "Reply to the customer on a ticket.",
                sets={"is_internal": False})
    b.create_as("add_internal_note", "TicketReply", "Add an internal note to a ticket.",
                sets={"is_internal": True})
    b.crud("TicketReply", "L")
    return b.build()


def knowledge() -> ServiceSpec:
    b = ServiceBuilder("knowledge", "Knowledge Base", "support", "Help-centre articles and reader feedback.",
                       MODULE)
    b.entity("Category", "kcat", "A section of the help centre.",
             field("name"),
             field("description", required=False))
    b.entity("Article", "art", "A help-centre article.",
             field("title"),
             field("body"),
             field("category_id", "knowledge.Category.id"),
             field("author_email", "email"),
             field("status", enum=["draft", "published", "archived"]),
             field("url", "url"),
             field("source_ticket_id", "helpdesk.Ticket.id", required=False),
             field("updated_at", "datetime"))
    b.entity("ArticleFeedback", "fbk", "A reader's rating of an article.",
             field("article_id", "knowledge.Article.id"),
             field("reader_email", "email"),
             field("helpful", "boolean"),
             field("comment", required=False),
             field("submitted_at", "datetime"))
    b.crud("Article")
    b.update_as("publish_article", "Article", "Publish an article.", sets={"status": "published"})
    b.update_as("archive_article", "Article", "Archive an article.", sets={"status": "archived"})
    b.crud("Category", "CL")
    b.create_as("rate_article", "ArticleFeedback", "Record whether an article was helpful.")
    b.crud("ArticleFeedback", "L")
    return b.build()


def services() -> list[ServiceSpec]:
    return [helpdesk(), knowledge()]
