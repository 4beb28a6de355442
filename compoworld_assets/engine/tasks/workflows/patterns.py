"""The workflow patterns, as data: what a professional is handed, why, and the words around it.

A pattern is written once over the parts of :mod:`.casting` (a case kind, a channel, a rulebook, a
follow-up), never over a named API, so it applies to imported specs as it does to the built-in library.
:mod:`.build` turns one pattern and one choice of parts into a task; this module holds only what varies by
pattern and what is said (reasons, teams, the kinds of move a status change is).
"""

from __future__ import annotations

from dataclasses import dataclass

from compoworld_assets.engine.library.wording import words
from compoworld_assets.engine.tasks.workflows.casting import CaseKind, move_kind

__all__ = ["LEVELS", "PATTERNS", "Pattern", "move_kind", "team_of"]

LEVELS = ("easy", "medium", "hard")


@dataclass(frozen=True)
class Pattern:
    """``moves``: the kinds of status change (:func:`move_kind`) the pattern reads naturally with; ``needs``:
    the case fields it decides on (``amount``, ``contact``, ``rank``: a :func:`rank_bases`, ``condition``: a
    :func:`condition_basis`); ``follow_up``: whether
    it opens work for a colleague (an approval); ``witness``: whether it reads another system's records of the
    same cases (a reconciliation); ``provision``: whether its cases are requests, in their own words, for a new
    record in another service (which it makes); ``rules``: the levels at which it consults a policy in a rulebook (the policy
    names people, so only for cases that concern someone); ``avoid``: words of target statuses the pattern does
    not read naturally with (nobody asks for their own request to be rejected)."""

    name: str
    summary: str
    capabilities: tuple[str, ...]
    moves: frozenset[str]
    needs: frozenset[str]
    follow_up: bool = False
    witness: bool = False
    rules: frozenset[str] = frozenset()
    avoid: frozenset[str] = frozenset()
    provision: bool = False


# Statuses that record what happened outside the system (a parcel arrived, a customer paid, a deal was won): nobody
# sets them by rank, by a cut-off or on request, only on evidence (a reconciliation's witness).
EVENT_WORDS = frozenset({"delivered", "paid", "returned", "won", "lost", "hired", "refunded", "received", "signed",
                         "accepted", "succeeded", "bounced", "failed", "churned", "expired", "overdue"})
# Verdicts on a record's merits: nobody rejects the largest or the oldest one for being so.
VERDICT_WORDS = frozenset({"rejected", "declined", "denied"})

PATTERNS: tuple[Pattern, ...] = (
    # Only work moving on is ranked: cancelling the one biggest booking, or closing a ticket for being the oldest,
    # reads as no reason at all (blind judges said so); spending is cut, and finished work closed, by a sweep.
    Pattern("priority_pick", "rank the open cases, act on the top one the rules allow, tell whoever it concerns",
            ("ranking", "sequential-dependency", "cross-env-data-flow", "notification"),
            frozenset({"advance"}), frozenset({"contact", "rank"}),
            rules=frozenset({"medium", "hard"}), avoid=EVENT_WORDS | VERDICT_WORDS),
    Pattern("sweep", "act on every case that meets a condition (a date passed, an amount over a line), skip what "
            "the rules protect, report how many",
            ("bulk-action", "aggregation", "sequential-dependency", "cross-env-data-flow", "notification"),
            frozenset({"advance", "stop", "close"}), frozenset({"rank", "condition"}), rules=frozenset({"medium", "hard"}),
            avoid=EVENT_WORDS | VERDICT_WORDS),
    Pattern("approval_gate", "handle requests whose route depends on a limit kept in a policy: act, or ask for "
            "approval", ("conditional", "policy-lookup", "cross-env-constraint", "sequential-dependency",
                         "notification"),
            frozenset({"advance", "stop", "close"}), frozenset({"amount", "contact"}), follow_up=True,
            rules=frozenset({"easy", "medium", "hard"}),
            avoid=EVENT_WORDS | VERDICT_WORDS | {"escalated", "blocked", "trash", "retired", "suspended"}),
)
PATTERNS += (
    Pattern("reconcile", "bring one system in line with another that already records the work as done",
            ("cross-env-data-flow", "cross-service-reference", "bulk-action", "aggregation", "sequential-dependency",
             "notification"),
            frozenset({"close"}), frozenset(), witness=True),
    Pattern("fulfil", "carry out the requests in a queue that ask, in their own words, for something to be set up "
            "in another system; close each and tell whoever asked; leave the ones not ready",
            ("cross-env-data-flow", "information-extraction", "sequential-dependency", "notification",
             "multi-service-write"),
            frozenset({"close"}), frozenset({"contact"}), provision=True),
)


# The team a person works in, by the domain of the service their cases live in.
TEAMS = {
    "finance": "finance operations", "accounting": "accounting", "crm": "sales operations",
    "support": "customer support", "travel": "travel desk", "legal": "legal operations",
    "it": "IT operations", "marketing": "marketing operations", "hr": "people team",
    "recruiting": "recruiting", "project_management": "delivery", "scheduling": "office operations",
    "documents": "operations", "communication": "operations", "commerce": "order operations",
    "logistics": "logistics", "expenses": "finance operations",
}
ROLE_TITLES = ("lead", "manager", "coordinator", "specialist", "analyst")


# How people speak of a record's date, by the words of its field (the rest: the field's words, with "date").
DATE_WORDS = {"created": "creation date", "updated": "last update", "modified": "last update",
              "submitted": "submission date", "sent": "send date", "posted": "posting date", "opened": "opening date",
              "applied": "application date", "joined": "joining date", "purchased": "purchase date",
              "closes": "closing date", "close": "closing date", "ends": "end date", "expires": "expiry date",
              "starts": "start date", "opens": "opening date"}
# What a date that passed says about a record, by the words of its field: its life ended (a closing or end date),
# its work fell due, or it was meant to start; any other date is when something happened (old records are stale).
ENDING_WORDS = frozenset({"closes", "close", "ends", "end", "expires", "expiry"})
DUE_WORDS = frozenset({"due", "deadline", "expected", "estimated", "renewal"})
START_WORDS = frozenset({"start", "starts", "scheduled", "departure", "pickup", "check", "launch", "opens"})
# The passed dates that call for each kind of move: a record moves on when its start date comes (not because it is
# old or fell due), closes when its closing date passes, and is called off when it ended, fell due or went stale.
PASSED_DATES_FOR = {"advance": ("start",), "close": ("ending", "past"), "stop": ("ending", "due", "past"),
                    "hold": ()}


def passed_date_kind(field: str) -> str:
    """``ending``, ``due``, ``start`` or ``past`` (see above)."""
    parts = set(words(field))
    return next((kind for kind, known in (("ending", ENDING_WORDS), ("due", DUE_WORDS), ("start", START_WORDS))
                 if parts & known), "past")


# Amounts a business spends (a budget, a price, a rate): the ones that are cut first when spending must fall. An
# amount owed to it (an invoice's amount due) is never "cut" by voiding the largest.
SPEND_WORDS = frozenset({"budget", "cost", "price", "rate", "fee", "spend", "salary", "value", "total"})


# Statuses of work already committed to (booked, signed, packed, under way): a sweep calls off the pending ones,
# whether to cut spending or to clear out what never went anywhere.
COMMITTED_WORDS = frozenset({"confirmed", "active", "booked", "signed", "sent", "running", "live", "approved",
                             "accepted", "issued", "ordered", "executed", "in", "progress", "fulfilled", "shipped",
                             "packed", "dispatched"})


def spend_cut(case: CaseKind) -> bool:
    """Whether calling off the largest cases reads as cutting spending: a move that stops them, on a spend amount."""
    return move_kind(case.target) == "stop" and case.amount is not None and bool(set(words(case.amount)) & SPEND_WORDS)


def rank_bases(case: CaseKind) -> tuple[str, ...]:
    """What the cases may be ranked by for ``case``'s move: calling off by amount, and only a spend
    (:func:`spend_cut`; never by date); finishing by date where there is one (the oldest first, not the biggest);
    moving on by amount or date. Empty: nothing ranks them."""
    kind = move_kind(case.target)
    if kind == "stop":
        return ("amount",) if spend_cut(case) else ()
    bases = tuple(basis for basis, field in (("amount", case.amount), ("date", case.date)) if field is not None)
    return ("date",) if kind == "close" and "date" in bases else bases


def condition_basis(case: CaseKind) -> str | None:
    """What a sweep's condition reads: ``date`` (the case's date passed a cut-off, where that calls for the move:
    :data:`PASSED_DATES_FOR`), else ``amount`` (over a line, where the large ones are cut first: :func:`spend_cut`;
    size is no reason to finish or move on work); None where neither reads as a reason."""
    if case.date is not None and passed_date_kind(case.date) in PASSED_DATES_FOR[move_kind(case.target)]:
        return "date"
    return "amount" if spend_cut(case) else None


def date_phrase(field: str) -> str:
    """A date field as people say it (``created_at`` → ``creation date``, ``due_date`` → ``due date``)."""
    parts = [w for w in words(field) if w not in ("at", "on", "ts", "time")]
    for part in parts:
        if part in DATE_WORDS:
            return DATE_WORDS[part]
    text = " ".join(parts) or "date"
    return text if text.endswith(("date", "day")) else f"{text} date"


def team_of(domain: str) -> str:
    known = TEAMS.get(domain)
    return known if known is not None else f"{' '.join(words(domain)) or 'operations'} operations"


# Why the work is asked for. Placeholders: {noun}, {nouns}, {rank}, {day}, {period}.
REASONS: dict[tuple[str, ...], tuple[str, ...]] = {
    ("priority_pick", "advance"): (
        ("We only have room to push one more {noun} through before the {day} cut-off, so it has to be the one "
        "with the {rank}."),
        "The backlog review is on {day} and I want to show the {noun} with the {rank} is moving.",
        "I've got capacity for exactly one {noun} this week; let's spend it on the one with the {rank}.",
    ),
    ("priority_pick_batch", "advance"): (
        ("We have room to push a few more {nouns} through before the {day} cut-off, so they have to be the ones with "
        "the {rank}."),
        "The backlog review is on {day} and I want to show the {nouns} with the {rank} are moving.",
    ),
    ("sweep", "close"): (
        "Our records show several {nouns} that are finished in practice but were never updated.",
        "We're closing the {period} books, so finished {nouns} can't keep showing as open in the reports.",
        "Audit flagged {nouns} that should have been closed out weeks ago; I want them tidy before {day}.",
    ),
    ("approval_gate", "close"): (
        "A few requests came in overnight and I'm covering the queue today.",
        "I'm covering for a colleague this week and their requests landed on my desk.",
    ),
    ("sweep", "advance"): (
        "It's our {period} clean-up and a few {nouns} have sat still for too long.",
        "Audit asked why some {nouns} never moved on; I'd like that fixed before {day}.",
        "We're closing the {period} books and the stragglers among the {nouns} need to move.",
    ),
    ("sweep", "stop"): (
        "It's our {period} clean-up: stale {nouns} are cluttering every report.",
        "We're closing the {period} books and old {nouns} that never went anywhere have to be retired.",
        "Before the {day} review I want the dead weight among our {nouns} cleared out.",
    ),
    ("approval_gate", "advance"): (
        "A few requests came in overnight and I'm covering the queue today.",
        "I'm covering for a colleague this week and their requests landed on my desk.",
        "These came in while the team was offsite, so I'm catching up on them now.",
    ),
    ("approval_gate", "stop"): (
        "A few requests came in overnight and I'm covering the queue today.",
        "Requests have been piling up this week, so I'm working through them today.",
        "These came in while the team was offsite, so I'm catching up on them now.",
    ),
}
# One request: the reasons above speak of several.
REASONS.update({("approval_gate_single", kind): (
    "I'm covering the queue today and this one has been waiting since yesterday.",
    "I'm covering for a colleague this week and this request landed on my desk.",
    "This came in while the team was offsite, so I'm catching up on it now.",
) for kind in ("advance", "stop", "close")})
REASONS.update({
    ("fulfil", "close"): (
        ("These requests have been sitting in our queue since {day}, and the people who sent them are waiting to "
         "get started."),
        "Set-up requests are meant to be turned around within a day, and some of ours have been open since {day}.",
        "I'm covering the {team} queue this week, and a few set-up requests for {target} haven't been picked up yet.",
    ),
    ("fulfil_single", "close"): (
        "This request has been sitting in our queue since {day}, and the person who sent it is waiting to get started.",
        "Set-up requests are meant to be turned around within a day, and this one has been open since {day}.",
        "I'm covering the {team} queue this week, and there's a set-up request for {target} nobody has picked up yet.",
    ),
    ("reconcile", "close"): (
        ("{witness} and {service} have drifted apart: some {nouns} are finished according to {witness} but still "
        "open in {service}, so our reports are off."),
        "The {period} reconciliation is due on {day}, and it has to show our {nouns} matching what {witness} says.",
        "Audit compared {service} with {witness} and found {nouns} that were never closed out.",
    ),
    ("reconcile", "advance"): (
        "{witness} and {service} have drifted apart: {nouns} that are ready according to {witness} never moved on.",
        "The {period} reconciliation is due on {day}, and it has to show our {nouns} in step with {witness}.",
    ),
})
# Reasons by what decides (a third key): ``amount`` or ``date`` for a rank; ``due`` (a due date passed),
# ``stale`` (an old record) or ``amount`` (over a line) for a sweep. A key without one covers the rest.
REASONS.update({
    ("priority_pick", "advance", "amount"): (
        ("There's room for one more {noun} before the {day} cut-off, and the one with the {rank} has the most riding "
        "on it."),
        "Finance wants the {noun} with the {rank} dealt with first, since it moves this month's numbers the most.",
    ),
    ("priority_pick", "advance", "date"): (
        "We work oldest first, so the {noun} with the {rank} is next.",
        "The {noun} with the {rank} has waited longest, and we've already been chased about it.",
        "Nobody has picked up the {noun} with the {rank} yet, and it has waited long enough.",
        "The {noun} with the {rank} has waited longest, so it's next in line.",
    ),
    ("priority_pick_batch", "advance", "amount"): (
        ("There's room for a few more {nouns} before the {day} cut-off, and the ones with the {rank} have the most "
        "riding on them."),
        "Finance wants the {nouns} with the {rank} dealt with first, since they move this month's numbers the most.",
    ),
    ("priority_pick_batch", "advance", "date"): (
        "We work oldest first, so the {nouns} with the {rank} are next.",
    ),
    ("sweep", "advance", "due"): (
        "Anything past its date has to be dealt with before the {day} review.",
        "People notice when we miss dates, so nothing past due should sit untouched.",
        ("A few {nouns} were meant to go ahead already and are still sitting where they were; {day}'s review will "
        "ask about them."),
    ),
    ("sweep", "close", "due"): (
        "Anything past its date has to be closed out before the {day} review.",
    ),
    ("sweep", "stop", "due"): (
        "{Nouns} whose date has passed without anything happening have to come off the books.",
        "Nothing past its date should still hold a place in our plans, so those have to go.",
    ),
    ("sweep", "stop", "amount"): (
        "We've been told to cut spending before {day}, and the large {nouns} go first.",
        "Finance asked every team to bring its {period} spend down by {day}, and the big {nouns} are where it adds up.",
        "We're over plan for the quarter, so the most expensive {nouns} have to go before {day}.",
    ),
})
DAYS = ("Friday", "Thursday", "Monday", "Wednesday")
PERIODS = ("monthly", "quarterly", "end-of-quarter", "mid-year")
THEN_WORDS = ("Once that's done", "When you've finished", "Afterwards")
# The summary a manager gets once the work is done. Placeholders: {then}, {boss}, {email}, {first}, {what}, {day}.
SUMMARY_ASKS = (
    "{then}, send {boss} ({email}) one summary from my address listing {what}.",
    ("{boss} ({email}) is putting together the {day} update, so once you're done please send {first} one note "
    "from my address with {what}."),
    "When that's done, drop {boss} ({email}) a line from my address with {what}; {first} is keeping track of this.",
    ("{boss} ({email}) asked to see the list, so send {first} a short summary from my address with {what} when "
    "you've finished."),
)
# Where the house rules are. Placeholders: {team}, {title}, {noun}, {service}.
RULE_POINTERS = (
    'Please follow our {team} house rules while you do it: they are in the "{title}" {noun} in {service}.',
    'Our {team} rules (the "{title}" {noun} in {service}) apply here, so read them before you change anything.',
    'The "{title}" {noun} in {service} has our {team} rules; please stick to them.',
    'Check the "{title}" {noun} in {service} first: some accounts need special handling at the moment.',
)
# A message's body, from the facts of what was done. Placeholders: {first}, {noun}, {label}, {state}, {why}, {me}.
NOTICES = (
    ("Hello {first}, a quick note to let you know that your {noun} {label} is now {state}. {why} "
    "If anything looks wrong, just reply to this email. Best regards, {me}"),
    ("Dear {first}, this is to confirm that {noun} {label} has been marked {state} today. {why} "
    "Kind regards, {me}"),
    ("Hi {first}, we've updated {noun} {label}: it is {state} as of today. {why} Let me know if you have "
    "questions. {me}"),
)
PENDING = (
    ("Hello {first}, thank you for your request about {noun} {label}. It needs sign-off under our approval "
    "rules, so it is now with our approver; we'll write again as soon as it is decided. Best regards, {me}"),
    ("Dear {first}, we have received your request regarding {noun} {label}. Because of its amount it goes "
    "to approval first, and we'll follow up once it is signed off. Kind regards, {me}"),
)
