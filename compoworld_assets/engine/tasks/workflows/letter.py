"""How a workflow's request is written: the parts a pattern decides, laid out as a person writes to a colleague.

A pattern (:mod:`.build`) decides what is said: why the work is needed, what to do, what to send afterwards and
where the rules are. This module decides how it is said: a greeting or none, the writer introduced up front or
signed at the end, the follow-up joined to the ask or on its own. Blind readers marked one fixed shape across
a pool as "templated" even where each sentence read well, so the shape is drawn per task (from the task's own
seeded draw: reruns stay byte-identical). Every shape names the writer in full with their address, since the
agent sends "from my address".
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from compoworld_assets.engine.library.population import Person

GREETINGS = ("Hi", "Hello", "Hi there", "Morning")
# The writer introduced up front. Placeholders: {greeting}, {name}, {email}, {role}, {company}.
INTRODUCTIONS = (
    "{greeting}, it's {name} ({email}), {role} at {company}.",
    "{greeting}, I'm {name}, the {role} at {company}; my address is {email}.",
    "{greeting}, {name} here ({role}, {email}).",
)
SIGN_OFFS = ("Thanks!", "Thanks a lot.", "Much appreciated.", "Thank you.", "Cheers.")
# The writer signed at the end, on lines of their own. Placeholders as above, and {sign_off}.
SIGNATURES = (
    "{sign_off}\n{name}, {role}\n{email}",
    "{sign_off}\n{name} ({role}, {company}) · {email}",
    "{sign_off} — {name}, {role} ({email})",
)


@dataclass(frozen=True)
class Letter:
    """The parts of one request. ``reason``: why, in one or two sentences; ``ask``: what to do; ``after``: what
    to send once it is done (may be empty); ``rules``: where the house rules are (may be empty)."""

    me: Person
    role: str
    company: str
    reason: str
    ask: str
    after: str = ""
    rules: str = ""


def write_letter(letter: Letter, report: str, rng: random.Random) -> str:
    """The request as one person's note, with ``report`` (what to tell them at the end) as its last paragraph
    before the sign-off: introduced up front, or signed at the end (with a greeting or straight to the point).
    Empty parts are left out."""
    me = letter.me
    names = {"name": me.full_name, "email": me.email, "role": letter.role, "company": letter.company}
    body = " ".join(part for part in (letter.reason, letter.ask, letter.after, letter.rules) if part)
    shape = rng.randrange(3)
    if shape == 0:
        head = rng.choice(INTRODUCTIONS).format(greeting=rng.choice(GREETINGS), **names)
        return f"{head} {body}\n\n{report} {rng.choice(SIGN_OFFS)}"
    signature = rng.choice(SIGNATURES).format(sign_off=rng.choice(SIGN_OFFS), **names)
    if shape == 1:
        body = f"{rng.choice(GREETINGS)},\n\n{body}"
    return f"{body}\n\n{report}\n\n{signature}"
