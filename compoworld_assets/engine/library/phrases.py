"""Field-name-aware text for untyped string fields of seeded records.

A field's name says what kind of text it holds (``subject``, ``sku``, ``tracking_number``,
``description``...); anything unrecognised gets a short phrase. Identifier-like texts
include the row number so they stay unique within a table.
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable
from functools import lru_cache

from stdnum.iso7064 import mod_97_10

from compoworld_assets.engine.library.titles import title_maker
from compoworld_assets.engine.library.wording import words
from compoworld_assets.engine.values import WORDS, phrase

TOPICS = ["Q3 budget", "contract renewal", "onboarding plan", "product launch", "invoice query",
          "shipping delay", "travel itinerary", "hiring pipeline", "security audit", "roadmap review",
          "vendor quote", "team offsite", "data migration", "pricing update", "customer feedback"]
SUBJECT_PREFIXES = ["", "Re: ", "Fwd: ", "Question about ", "Update on ", "Follow-up: "]
SENTENCES = ["Please review the attached details and confirm by end of week.",
             "Following up on our call earlier today.",
             "The customer reported the issue twice this month.",
             "Numbers are in line with the forecast.",
             "Let me know if anything needs to change before we proceed.",
             "We agreed to revisit this after the quarterly review.",
             "Sharing the latest version for feedback.",
             "The delivery was delayed by the carrier.",
             "Approval is needed from finance before the deadline."]
JOB_TITLES = ["Account Executive", "Support Engineer", "Product Manager", "Data Analyst", "Office Manager",
              "Software Engineer", "Finance Controller", "Recruiter", "Marketing Lead", "Operations Manager"]
PRODUCTS = ["Ergonomic Chair", "USB-C Dock", "Standing Desk", "Noise-Cancelling Headset", "Laptop Sleeve",
            "Wireless Mouse", "4K Monitor", "Coffee Beans 1kg", "Notebook Pack", "Desk Lamp"]
CAR_MAKES = [("Toyota", "Corolla"), ("Volkswagen", "Golf"), ("Ford", "Transit"), ("Tesla", "Model 3"),
             ("BMW", "X3"), ("Renault", "Clio")]
HOTELS = ["Grand Central Hotel", "Harbour View Inn", "Parkside Suites", "City Lights Hotel",
          "Riverside Lodge", "Alpine Rest", "Old Mill Guesthouse", "Seaside Pavilion", "The Lantern House",
          "Meridian Plaza", "Kingsway Residence", "Orchard Court"]

DEVICES = ["ThinkPad X1", "MacBook Pro", "Pixel 9", "UltraSharp 27"]
SOFTWARE = ["Office Suite", "Design Studio", "CRM Seats", "VPN", "IDE Pro"]
ROOMS = ["Atlas", "Borealis", "Cedar", "Delta", "Echo"]
AIRLINE_CODES = ["LH", "BA", "AF", "UA", "JL"]
RESOLUTIONS = ["Refund issued.", "Replacement shipped.", "Explained settings.", "Duplicate request."]
LEDGER_WORDS = ["accrual", "settlement", "fee"]

TextMaker = Callable[[random.Random, int], str]


def _code(prefix: str, width: int = 5) -> TextMaker:
    return lambda rng, index: f"{prefix}{index:0{width}d}"


def _sentences(count: int) -> TextMaker:
    return lambda rng, index: " ".join(rng.sample(SENTENCES, count))


def _alnum(rng: random.Random, length: int) -> str:
    return "".join(rng.choice(string.ascii_uppercase + string.digits) for _ in range(length))


def iban(rng: random.Random) -> str:
    """A German IBAN (8-digit bank code, 10-digit account) with valid ISO 7064 check digits."""
    bban = f"{rng.randint(10**7, 10**8 - 1)}{rng.randint(10**9, 10**10 - 1)}"
    return f"DE{mod_97_10.calc_check_digits(bban + 'DE')}{bban}"


EXACT: dict[str, TextMaker] = {
    "subject": lambda rng, index: f"{rng.choice(SUBJECT_PREFIXES)}{rng.choice(TOPICS)}",
    "title": lambda rng, index: rng.choice(TOPICS).capitalize(),
    "topic": lambda rng, index: rng.choice(TOPICS).capitalize(),
    "purpose": lambda rng, index: f"Client meeting: {rng.choice(TOPICS)}",
    "body": _sentences(2),
    "text": _sentences(1),
    "description": _sentences(1),
    "comment": _sentences(1),
    "memo": lambda rng, index: f"{rng.choice(TOPICS).capitalize()} {rng.choice(LEDGER_WORDS)}",
    "reason": lambda rng, index: rng.choice(TOPICS).capitalize(),
    "resolution": lambda rng, index: rng.choice(RESOLUTIONS),
    "sku": _code("SKU-"),
    "number": _code("INV-2026-", 4),
    "code": lambda rng, index: f"{1000 + index * 10}",
    "cost_center": _code("CC-", 3),
    "tracking_number": lambda rng, index: f"1Z{_alnum(rng, 14)}",
    "flight_number": lambda rng, index: f"{rng.choice(AIRLINE_CODES)}{rng.randint(100, 9999)}",
    "serial_number": lambda rng, index: f"SN-{_alnum(rng, 10)}",
    "iban": lambda rng, index: iban(rng),
    "seat": lambda rng, index: f"{rng.randint(1, 40)}{rng.choice('ABCDEF')}",
    "job_title": lambda rng, index: rng.choice(JOB_TITLES),
    "hotel_name": lambda rng, index: HOTELS[(index - 1) % len(HOTELS)],  # by row: a booking is named by it
    "make": lambda rng, index: rng.choice(CAR_MAKES)[0],
    "building": lambda rng, index: f"Building {rng.choice('ABCDE')}",
    "product": lambda rng, index: rng.choice(SOFTWARE),
    "language": lambda rng, index: rng.choice(["en", "de", "fr", "es", "ja"]),
}

BY_ENTITY: dict[tuple[str, str], TextMaker] = {
    ("Product", "name"): lambda rng, index: PRODUCTS[(index - 1) % len(PRODUCTS)],
    ("Vehicle", "model"): lambda rng, index: rng.choice(CAR_MAKES)[1],
    ("Device", "model"): lambda rng, index: rng.choice(DEVICES),
    ("Channel", "name"): lambda rng, index: f"{rng.choice(WORDS)}-{index}",
    ("Room", "name"): lambda rng, index: f"{rng.choice(ROOMS)} {index}",
    ("Warehouse", "name"): lambda rng, index: f"Warehouse {index:02d}",
    ("SocialAccount", "handle"): lambda rng, index: f"@{rng.choice(WORDS).replace('-', '')}{index}",
}


# Words that say what a field holds wherever they appear in its name (``payee_iban``, ``productSku``).
TELLING_WORDS = ("iban", "sku", "subject", "title", "body", "comment", "description", "memo", "reason")


def text_for(entity: str, name: str, rng: random.Random, index: int) -> str:
    """A plausible value for the untyped string field ``name`` of row ``index`` of ``entity``."""
    return _maker(entity, name)(rng, index)


@lru_cache(maxsize=65536)
def _maker(entity: str, name: str) -> Callable[[random.Random, int], str]:
    """What makes :func:`text_for`'s values for one field (worked out once: seeding asks per row)."""
    maker = BY_ENTITY.get((entity, name)) or title_maker(entity, name) or EXACT.get(name) or next(
        (EXACT[w] for w in TELLING_WORDS if w in words(name)), None)
    if maker is not None:
        return maker
    if name.endswith(("_name", "name")):
        return lambda rng, index: f"{phrase(rng, 2)} {index}"
    if name.endswith(("_number", "_code", "_ref")):
        prefix = name.split("_")[0][:3].upper()
        return lambda rng, index: f"{prefix}-{index:05d}"
    if name.endswith(("_notes", "_text", "_message", "_summary")):
        return lambda rng, index: rng.choice(SENTENCES)
    return lambda rng, index: phrase(rng, 3)
