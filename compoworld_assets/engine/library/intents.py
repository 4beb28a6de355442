"""Intent phrases: what a tool's effect means to the person asking, in words, not tool names.

A template is lower-case text; ``{subject}`` stands for the record the call is about ("leave
request lvr_0003", "the first payout of Ada Berg"). Creates have no ``{subject}``: their
record is new ("draft an invoice").

* Built-in tools: the standard CRUD tools follow the builder's conventions (:data:`CONVENTIONS`);
  every other built-in tool declares its phrase in :data:`DECLARED`.
* Imported tools: derived from the description's first imperative sentence ("Creates a new
  Item." → "create a new item"), with the phrase naming the tool's entity replaced by
  ``{subject}``; without such a sentence, the convention of its effect where it has an entity, else
  the operation id in words, without the route's fragments (:func:`operation_words`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from compoworld_assets.engine.library.builder import plural_of, snake_case
from compoworld_assets.engine.library.wording import noun_phrase, readable, spec_vocabulary, words
from compoworld_assets.engine.specs.model import Effect, ServiceSpec, ToolSpec

SUBJECT = "{subject}"

CONVENTIONS = {
    Effect.CREATE: "create a new {noun}",
    Effect.READ: "look up {subject}",
    Effect.LIST: "list {plural}",
    Effect.SEARCH: "search {plural}",
    Effect.UPDATE: "update {subject}",
    Effect.DELETE: "delete {subject}",
}
CRUD_PREFIXES = {Effect.CREATE: "create_", Effect.READ: "get_", Effect.LIST: "list_", Effect.SEARCH: "search_",
                 Effect.UPDATE: "update_", Effect.DELETE: "delete_"}

DECLARED: dict[str, str] = {
    "crm.mark_deal_won": "mark {subject} as won",
    "crm.mark_deal_lost": "mark {subject} as lost",
    "mail.trash_email": "move {subject} to the trash",
    "mail.move_email": "move {subject} to another folder",
    "mail.mark_unread": "mark {subject} as unread",
    "mail.unstar_email": "remove the star from {subject}",
    "chat.add_member": "add a person to a channel",
    "chat.translate_message": "translate {subject}",
    "rooms.find_free_room": "find a free room",
    "docs.request_review": "send {subject} for review",
    "helpdesk.set_ticket_priority": "change the priority of {subject}",
    "shipping.get_shipping_quote": "get a shipping quote",
    "travel.search_flights": "search flights and fares",
    "social.get_post_engagement": "check the likes, shares and comments of {subject}",
    "crm.convert_lead": "convert {subject} from a lead to a customer",
    "mail.send_email": "send an email",
    "mail.draft_email": "draft an email",
    "mail.receive_email": "file an incoming email",
    "mail.star_email": "star {subject}",
    "mail.archive_email": "archive {subject}",
    "mail.mark_read": "mark {subject} as read",
    "chat.post_message": "post a chat message",
    "chat.pin_message": "pin {subject}",
    "chat.archive_channel": "archive {subject}",
    "calendar.invite_attendee": "invite an attendee to an event",
    "calendar.accept_invitation": "accept the invitation for {subject}",
    "calendar.decline_invitation": "decline the invitation for {subject}",
    "calendar.cancel_event": "cancel {subject}",
    "calendar.reschedule_event": "reschedule {subject}",
    "rooms.book_room": "book a room",
    "rooms.cancel_room_booking": "cancel {subject}",
    "files.share_file": "share a file",
    "files.star_file": "star {subject}",
    "files.move_file": "move {subject} to another folder",
    "docs.summarize_document": "summarize {subject}",
    "docs.publish_document": "publish {subject}",
    "docs.archive_document": "archive {subject}",
    "docs.add_comment": "comment on a document",
    "docs.resolve_comment": "resolve {subject}",
    "helpdesk.open_ticket": "open a support ticket",
    "helpdesk.assign_ticket": "assign {subject} to an agent",
    "helpdesk.escalate_ticket": "escalate {subject}",
    "helpdesk.close_ticket": "close {subject}",
    "helpdesk.reopen_ticket": "reopen {subject}",
    "helpdesk.reply_to_ticket": "reply to a ticket",
    "helpdesk.add_internal_note": "add an internal note to a ticket",
    "knowledge.publish_article": "publish {subject}",
    "knowledge.archive_article": "archive {subject}",
    "knowledge.rate_article": "rate an article",
    "payments.create_payment": "record an incoming payment",
    "payments.capture_payment": "capture {subject}",
    "payments.cancel_payment": "cancel {subject}",
    "payments.refund_payment": "refund a payment",
    "payments.schedule_payout": "schedule a payout to a bank account",
    "payments.cancel_payout": "cancel {subject}",
    "payments.convert_currency": "convert an amount to another currency",
    "invoicing.create_invoice": "draft an invoice",
    "invoicing.send_invoice": "send {subject} to the payer",
    "invoicing.mark_invoice_paid": "mark {subject} as paid",
    "invoicing.mark_invoice_overdue": "flag {subject} as overdue",
    "invoicing.void_invoice": "void {subject}",
    "invoicing.add_invoice_line": "add a line to an invoice",
    "accounting.record_journal_entry": "record a journal entry",
    "accounting.post_journal_entry": "post {subject} to the ledger",
    "accounting.unpost_journal_entry": "take {subject} back out of the ledger",
    "expenses.create_expense_report": "start an expense report",
    "expenses.submit_expense_report": "submit {subject} for approval",
    "expenses.approve_expense_report": "approve {subject}",
    "expenses.reject_expense_report": "reject {subject}",
    "expenses.reimburse_expense_report": "mark {subject} as reimbursed",
    "expenses.add_expense": "add a receipt to an expense report",
    "expenses.scan_receipt": "read a receipt image",
    "orders.place_order": "place an order",
    "orders.mark_order_paid": "mark {subject} as paid",
    "orders.fulfill_order": "fulfil {subject}",
    "orders.cancel_order": "cancel {subject}",
    "orders.return_order": "record that {subject} was returned",
    "orders.add_order_item": "add a product to an order",
    "inventory.discontinue_product": "stop selling {subject}",
    "procurement.create_purchase_order": "raise a purchase order",
    "procurement.submit_purchase_order": "submit {subject}",
    "procurement.approve_purchase_order": "approve {subject}",
    "procurement.receive_purchase_order": "record the delivery of {subject}",
    "procurement.cancel_purchase_order": "cancel {subject}",
    "shipping.create_shipment": "create a shipment",
    "shipping.mark_in_transit": "record that the carrier picked up {subject}",
    "shipping.mark_delivered": "record that {subject} was delivered",
    "shipping.mark_lost": "record that {subject} was lost",
    "shipping.add_tracking_event": "record a tracking scan of a shipment",
    "shipping.geocode_address": "find the coordinates of an address",
    "hr.terminate_employee": "record that {subject} left the company",
    "hr.request_leave": "request time off",
    "hr.approve_leave": "approve {subject}",
    "hr.reject_leave": "reject {subject}",
    "hr.cancel_leave": "withdraw {subject}",
    "payroll.create_payslip": "draft a payslip",
    "payroll.approve_payslip": "approve {subject} for payment",
    "payroll.mark_payslip_paid": "record that {subject} was paid",
    "recruiting.post_job": "post a new job opening",
    "recruiting.close_job": "close {subject}",
    "recruiting.add_candidate": "register an applicant",
    "recruiting.advance_candidate": "move {subject} to another stage",
    "recruiting.reject_candidate": "reject {subject}",
    "recruiting.hire_candidate": "hire {subject}",
    "recruiting.schedule_interview": "schedule an interview",
    "travel.plan_trip": "plan a new trip",
    "travel.cancel_trip": "cancel {subject}",
    "travel.book_flight": "book a flight for a trip",
    "travel.cancel_flight": "cancel {subject}",
    "travel.book_hotel": "book a hotel for a trip",
    "travel.cancel_hotel": "cancel {subject}",
    "car_rental.reserve_vehicle": "reserve a vehicle",
    "car_rental.start_rental": "hand over the vehicle of {subject}",
    "car_rental.return_vehicle": "record the vehicle's return for {subject}",
    "car_rental.cancel_rental": "cancel {subject}",
    "projects.complete_project": "mark {subject} as done",
    "projects.start_task": "start work on {subject}",
    "projects.block_task": "flag {subject} as blocked",
    "projects.complete_task": "mark {subject} as done",
    "projects.add_milestone": "add a milestone to a project",
    "projects.reach_milestone": "mark {subject} as reached",
    "timesheets.log_time": "log hours worked",
    "timesheets.submit_time_entry": "submit {subject} for approval",
    "timesheets.approve_time_entry": "approve {subject}",
    "marketing.launch_campaign": "launch {subject}",
    "marketing.pause_campaign": "pause {subject}",
    "marketing.complete_campaign": "finish {subject}",
    "marketing.subscribe": "subscribe a person to a mailing list",
    "marketing.unsubscribe": "unsubscribe {subject}",
    "social.draft_post": "draft a social media post",
    "social.schedule_post": "schedule {subject} for publication",
    "social.publish_post": "publish {subject} now",
    "social.withdraw_post": "take {subject} down",
    "surveys.open_survey": "open {subject} for responses",
    "surveys.close_survey": "close {subject}",
    "surveys.submit_response": "record a survey response",
    "contracts.draft_contract": "draft a contract",
    "contracts.send_for_signature": "send {subject} to the counterparty for signature",
    "contracts.activate_contract": "mark {subject} as active",
    "contracts.renew_contract": "extend the end date of {subject}",
    "contracts.terminate_contract": "terminate {subject}",
    "contracts.record_signature": "record a signature on a contract",
    "it_assets.assign_device": "hand {subject} to an employee",
    "it_assets.return_device": "take {subject} back into stock",
    "it_assets.retire_device": "retire {subject}",
    "directory.suspend_user": "suspend {subject}",
    "directory.reactivate_user": "reactivate {subject}",
    "directory.deactivate_user": "deactivate {subject} for good",
    "directory.add_to_group": "add an account to a group",
}

METHOD_VERBS = {"get": "get", "post": "submit", "put": "update", "patch": "update", "delete": "delete",
                "head": "check"}
ROUTE_PREFIXES = frozenset({"api", "apis", "rest"})
PATH_PARAMETERS = frozenset({"id", "ids", "uuid", "json"})
TRAILING_WORDS = frozenset({"by", "for", "of", "from", "with", "to", "in", "on", "at"})
VERBS = frozenset({
    "accept", "activate", "add", "adjust", "apply", "approve", "archive", "assign", "attach", "book",
    "calculate", "cancel", "capture", "change", "check", "classify", "close", "comment", "complete", "compute",
    "confirm", "convert", "copy", "create", "deactivate", "decline", "delete", "deliver", "disable",
    "download", "draft", "edit", "enable", "escalate", "export", "extract", "fetch", "file", "find", "flag",
    "fulfil", "fulfill", "generate", "get", "hand", "hire", "import", "invite", "issue", "join", "launch",
    "list", "lock", "log", "look", "mark", "merge", "move", "open", "patch", "pause", "pay", "pin", "place",
    "plan", "post", "publish", "put", "query", "raise", "read", "reactivate", "receive", "record", "refund",
    "register", "reject", "remove", "rename", "reopen", "reply", "request", "reschedule", "reserve", "reset",
    "resolve", "restore", "retire", "retrieve", "return", "revoke", "run", "save", "schedule", "search",
    "send", "set", "share", "sign", "star", "start", "stop", "submit", "subscribe", "suspend", "sync", "take",
    "terminate", "transfer", "unlock", "unpost", "unsubscribe", "update", "upload", "validate", "verify",
    "void", "withdraw", "write"
})
THIRD_PERSON = {"returns": "get", "gets": "get", "lists": "list", "creates": "create", "updates": "update",
                "deletes": "delete", "retrieves": "retrieve", "fetches": "fetch", "sends": "send",
                "removes": "remove", "adds": "add", "searches": "search", "finds": "find", "sets": "set"}


@dataclass(frozen=True)
class Intent:
    template: str
    source: str  # declared | convention | description | name

    def phrase(self, subject: str = "") -> str:
        return self.template.replace(SUBJECT, subject).strip()


def intent_for(spec: ServiceSpec, tool: ToolSpec) -> Intent:
    """The intent phrase of ``tool`` (see the module docstring for where it comes from)."""
    noun = noun_phrase(readable(tool.entity, spec_vocabulary(spec))) if tool.entity else ""
    if spec.source.kind == "builtin":
        declared = DECLARED.get(f"{spec.id}.{tool.name}")
        if declared is not None:
            return Intent(declared, "declared")
        if tool.effect in CONVENTIONS and tool.entity and _is_crud_name(tool):
            return Intent(_convention(tool.effect, noun), "convention")
    sentence = imperative_sentence(tool.description)
    if sentence is not None:
        return Intent(_with_subject(sentence, tool, noun), "description")
    if tool.effect in CONVENTIONS and noun:
        return Intent(_convention(tool.effect, noun), "convention")
    return Intent(_with_subject(operation_words(tool.name, spec_vocabulary(spec)), tool, noun), "name")


def operation_words(name: str, known: frozenset[str]) -> str:
    """An operation id as the words a person would use: HTTP methods, versions, a leading ``api``, ``id`` and repeated words
    (the path fragments an id generated from a route carries: ``api_transport_transport_gotify_id_put``) left out,
    and a verb in front (the method's: ``update transport gotify``; else ``use``)."""
    parts = readable(re.sub(r"((?<![A-Za-z])[vV]|(?<=[a-z])V)\d+(?![a-z])", " ", name), known).split()
    method = next((p for p in (parts[-1:] + parts[:1]) if p in METHOD_VERBS), None)
    if len(parts) > 1 and parts[-1] == method:
        parts = parts[:-1]  # the method a generated id ends with (``..._id_put``); one it starts with may be a verb
    elif parts and parts[0] in ("put", "patch"):
        parts = ["update", *parts[1:]]
    while len(parts) > 1 and parts[0] in ROUTE_PREFIXES:  # ``/api/...``
        parts = parts[1:]
    kept: list[str] = []
    for part in parts:
        if part in PATH_PARAMETERS or kept[-1:] == [part]:
            continue
        kept.append(part)
    while kept and kept[-1] in TRAILING_WORDS:  # what was left of ``..._by_id``
        kept.pop()
    if not kept:
        return readable(name, known)
    verb = next((i for i, part in enumerate(kept) if part in VERBS), None)
    if verb:  # a verb inside the route (``repos_update_status``) leads the phrase
        kept.insert(0, kept.pop(verb))
    elif verb is None:
        kept.insert(0, METHOD_VERBS.get(method or "", "use"))
    return " ".join(kept)


def _is_crud_name(tool: ToolSpec) -> bool:
    noun = snake_case(tool.entity or "")
    plural = tool.effect in (Effect.LIST, Effect.SEARCH)
    return tool.name == CRUD_PREFIXES[tool.effect] + (plural_of(noun) if plural else noun)


def _convention(effect: Effect, noun: str) -> str:
    return CONVENTIONS[effect].replace("{noun}", noun).replace("{plural}", plural_of(noun))


def imperative_sentence(description: str) -> str | None:
    """The first sentence of ``description`` that starts with a verb, as a lower-case imperative."""
    for sentence in re.split(r"(?<=[.!?])\s+|\n+|:\s+", description or ""):
        found = re.match(r"\s*([A-Za-z]+)(.*)", sentence)
        if found is None:
            continue
        verb = found.group(1).lower()
        verb = THIRD_PERSON.get(verb, verb)
        if verb not in VERBS:
            continue
        rest = re.split(r";|\s\(|\s-\s|, optionally|\. ", found.group(2))[0].rstrip(" .")
        return f"{verb}{rest}".strip()
    return None


def _with_subject(text: str, tool: ToolSpec, noun: str) -> str:
    """``text`` with the phrase naming the tool's record replaced by ``{subject}`` (creates: unchanged)."""
    text = text[0].lower() + text[1:] if text else text
    if tool.effect in (Effect.CREATE, Effect.LIST, Effect.SEARCH, None, Effect.ACTION, Effect.QUERY) or not noun:
        return text
    last = noun.split()[-1]
    pattern = re.compile(rf"\b(?:a|an|the|one|this|that|given|specified|existing)\s+(?:[\w-]+\s+){{0,3}}?{last}s?\b",
                         re.IGNORECASE)
    if pattern.search(text):
        return pattern.sub(SUBJECT, text, count=1)
    if re.search(rf"\b{last}s?\b", text, re.IGNORECASE):
        return re.sub(rf"\b{last}s?\b", SUBJECT, text, count=1, flags=re.IGNORECASE)
    return f"{text} for {SUBJECT}"


def entity_noun(spec: ServiceSpec, entity: str) -> str:
    """An entity's name as the words a user would use (``LeaveRequest`` → ``leave request``)."""
    return noun_phrase(readable(entity, spec_vocabulary(spec)))


def field_words(name: str) -> str:
    """A field's name as words (``payer_email`` → ``payer email``, ``vaultUuid`` → ``vault uuid``)."""
    return " ".join(words(name))
