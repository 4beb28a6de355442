"""Titles that say what a record is: a job opening reads "Senior Data Analyst", a project "Checkout redesign".

A record's title or name is how people name it in a request, so it must read as one business's record
of that kind, not as any topic at all. The kind is told by the words of the entity's name (``JobOpening``,
``support_ticket``, ``KnowledgeArticle``), never by a service, so imported specs get the same titles.

Each kind joins a part drawn by the row's generator with a part picked by the row number, so the rows of
one table never share a title (up to the pool's size) while worlds of different seeds still differ. No
indexed part is contained in another part of its kind, so no title hides inside another and a search for
one record's title finds only that record.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from compoworld_assets.engine.library.wording import words
from compoworld_assets.engine.values import CITIES, COMPANIES

# Field-name words of a record's own title (with the entity's words: ``project_name``, ``ticket_subject``).
TITLE_WORDS = frozenset({"title", "name", "subject", "headline", "topic", "display"})


@dataclass(frozen=True)
class TitleKind:
    """Titles of one kind of record: ``template`` filled with ``drawn`` (by the generator) and ``indexed``
    (by the row number)."""

    entity_words: frozenset[str]
    template: str
    drawn: tuple[str, ...]
    indexed: tuple[str, ...]

    def make(self, rng: random.Random, index: int) -> str:
        title = self.template.format(drawn=rng.choice(self.drawn), indexed=self.indexed[(index - 1) % len(self.indexed)])
        return title[0].upper() + title[1:]


_COMPANY_NAMES = tuple(c for c in COMPANIES if c != "Acme Corp")
_CITY_NAMES = tuple(city for city, _ in CITIES)

# Most telling first: ``ExpenseReport`` is an expense claim before it is a report.
KINDS: tuple[TitleKind, ...] = (
    TitleKind(frozenset({"job", "opening", "vacancy", "requisition", "position"}), "{drawn}{indexed}",
              ("", "Senior ", "Junior ", "Lead ", "Principal ", "Staff "),
              ("Data Analyst", "Support Engineer", "Product Manager", "Office Manager", "Backend Developer",
               "Financial Controller", "Technical Recruiter", "Marketing Lead", "Operations Coordinator",
               "UX Designer", "Sales Executive", "Payroll Specialist", "Security Architect", "Account Director")),
    TitleKind(frozenset({"expense", "reimbursement", "claim"}), "{drawn} {indexed}",
              _CITY_NAMES,
              ("client visit", "trade fair", "sales kickoff", "customer workshop", "partner summit",
               "team offsite", "vendor audit", "board meeting", "recruiting day", "product demo",
               "site inspection", "training course")),
    TitleKind(frozenset({"ticket", "incident", "issue", "complaint", "bug", "case"}), "{indexed}{drawn}",
              ("", " (urgent)", " again", " since Monday", " for two users"),
              ("Cannot log in after password reset", "Invoice shows the wrong VAT rate", "Order arrived damaged",
               "Refund not received", "Export to CSV fails", "Charged twice for one subscription",
               "Delivery address cannot be changed", "Two-factor code never arrives", "Dashboard loads slowly",
               "Promo code rejected at checkout", "Missing items in shipment", "Cannot download the receipt")),
    TitleKind(frozenset({"article", "faq", "guide", "tutorial", "howto", "knowledge"}), "{drawn}{indexed}",
              ("How to ", "Guide: how to ", "FAQ: how to "),
              ("reset your password", "request a refund", "change the billing address", "export your data",
               "set up two-factor login", "add a team member", "cancel a subscription", "update payment details",
               "track a shipment", "connect the calendar", "download an invoice", "close your account")),
    TitleKind(frozenset({"survey", "poll", "questionnaire", "feedback"}), "{drawn} {indexed} survey",
              ("Quarterly", "Annual", "Spring", "Autumn", "Post-launch"),
              ("customer satisfaction", "employee engagement", "onboarding experience", "support quality",
               "product roadmap", "office move", "training needs", "event feedback", "pricing perception",
               "remote work", "benefits review", "website usability")),
    TitleKind(frozenset({"contract", "agreement", "lease", "nda"}), "{drawn} {indexed}",
              _COMPANY_NAMES,
              ("master services agreement", "non-disclosure agreement", "data processing addendum",
               "software licence", "office lease", "reseller agreement", "maintenance contract",
               "consulting agreement", "supply agreement", "service level agreement", "statement of work",
               "framework contract")),
    TitleKind(frozenset({"deal", "opportunity", "quote", "proposal"}), "{drawn} {indexed}",
              _COMPANY_NAMES,
              ("annual renewal", "platform expansion", "pilot rollout", "enterprise upgrade", "seat top-up",
               "multi-year commitment", "new region launch", "analytics add-on", "support plan upsell",
               "migration package", "partner bundle", "training package")),
    TitleKind(frozenset({"campaign", "promotion", "newsletter", "broadcast"}), "{drawn} {indexed}",
              ("Spring", "Summer", "Autumn", "Winter", "Q3", "Q4", "Year-end"),
              ("product launch", "webinar series", "loyalty offer", "free shipping week", "customer stories",
               "partner spotlight", "feature update", "referral drive", "trade show invite", "flash sale",
               "win-back offer", "welcome series")),
    TitleKind(frozenset({"event", "meeting", "appointment", "webinar", "workshop"}),
              "{drawn} {indexed}",
              ("Weekly", "Quarterly", "Monthly", "Kickoff:", "Follow-up:"),
              ("pipeline review", "budget planning", "vendor check-in", "roadmap sync", "hiring panel",
               "customer escalation", "release retrospective", "board prep", "security briefing",
               "onboarding walkthrough", "pricing workshop", "partner demo")),
    TitleKind(frozenset({"task", "todo", "chore"}), "{indexed}{drawn}",
              ("", " before launch", " for the audit", " this sprint", " for finance"),
              ("Review the vendor contract", "Update the pricing page", "Prepare the board deck",
               "Migrate the customer list", "Renew the SSL certificate", "Draft the release notes",
               "Reconcile the card statement", "Book the offsite venue", "Test the backup restore",
               "Collect the signed NDAs", "Translate the help centre", "Clean up the CRM duplicates")),
    TitleKind(frozenset({"project", "initiative", "program", "programme", "epic", "milestone", "sprint"}),
              "{drawn} {indexed}",
              ("Checkout", "Warehouse", "Billing", "Partner portal", "Payroll", "Intranet", "Website", "CRM",
               "Mobile app", "Data platform"),
              ("redesign", "migration", "rollout", "upgrade", "consolidation", "refresh", "launch",
               "automation", "cleanup", "localisation", "audit", "rebuild")),
    TitleKind(frozenset({"document", "doc", "page", "wiki", "memo", "report", "note", "policy"}),
              "{drawn} {indexed}",
              ("2026", "Q3", "Q4", "Draft:", "Final:"),
              ("travel policy", "hiring plan", "security checklist", "board minutes", "pricing proposal",
               "onboarding handbook", "vendor shortlist", "budget forecast", "incident review",
               "launch plan", "sales playbook", "retention analysis")),
    TitleKind(frozenset({"department", "team", "division", "unit", "group"}), "{indexed}{drawn}",
              ("",),
              ("Finance", "Engineering", "Customer Success", "Marketing", "People Operations", "Legal",
               "Procurement", "Sales", "Facilities", "Security", "Logistics", "Research")),
    TitleKind(frozenset({"category", "folder", "section", "topic", "tag", "collection"}), "{indexed}{drawn}",
              ("",),
              ("Billing", "Accounts", "Shipping", "Returns", "Security", "Integrations", "Getting started",
               "Payments", "Reporting", "Mobile", "Privacy", "Troubleshooting")),
    TitleKind(frozenset({"list", "audience", "segment", "subscribers", "subscriber"}), "{drawn} {indexed}",
              ("EMEA", "North America", "APAC", "All"),
              ("newsletter readers", "trial users", "enterprise admins", "webinar attendees", "beta testers",
               "partners", "lapsed customers", "developers", "event leads", "product champions",
               "store owners", "students")),
)


def title_kind(entity: str, field: str) -> TitleKind | None:
    """The kind of title ``field`` of ``entity`` holds, if it is the record's own title and the entity's
    name says what the record is."""
    entity_words = set(words(entity))
    field_words = set(words(field))
    if not field_words & TITLE_WORDS or not field_words <= TITLE_WORDS | entity_words:
        return None
    return next((kind for kind in KINDS if kind.entity_words & entity_words), None)


def title_maker(entity: str, field: str) -> Callable[[random.Random, int], str] | None:
    kind = title_kind(entity, field)
    return kind.make if kind else None
