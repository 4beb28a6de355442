"""A round's workflow drafts: which pattern, over which parts, at which level.

Every pattern is tried over every choice of parts that fits it (:func:`combinations`); a draft picks a pattern
in turn, then the combination whose busiest service has been in the fewest drafts so far, then the one whose
services have been in the fewest in all (a request queue and a mail service shared by every choice must not hide
which of many APIs a set-up goes to), ties broken by the seeded draw, so a library's services take turns rather
than the first ones taking every draft.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping

from compoworld_assets.engine.library.wording import words
from compoworld_assets.engine.specs.model import ServiceSpec
from compoworld_assets.engine.tasks.workflows.build import WorkflowDraft
from compoworld_assets.engine.tasks.workflows.casting import Cast, cast_library, outcome_of, request_body
from compoworld_assets.engine.tasks.workflows.patterns import (
    LEVELS,
    PATTERNS,
    Pattern,
    condition_basis,
    move_kind,
    rank_bases,
)

LEVEL_WEIGHTS = (0.25, 0.40, 0.35)


def combinations(pattern: Pattern, cast: Cast, specs: Mapping[str, ServiceSpec]) -> list[tuple]:
    """(case, channel, rulebook, follow-up, witness, provision) choices that fit ``pattern``."""
    found = []
    for case in cast.cases:
        if move_kind(case.target) not in pattern.moves or set(words(case.target)) & pattern.avoid:
            continue
        if ("amount" in pattern.needs and case.amount is None) or ("contact" in pattern.needs and case.contact is None) \
                or ("rank" in pattern.needs and not rank_bases(case)) or ("condition" in pattern.needs and not condition_basis(case)):
            continue
        channels = [c for c in cast.channels if (c.service, c.entity) != (case.service, case.entity)]
        books = [b for b in cast.rulebooks if (b.service, b.entity) != (case.service, case.entity)]
        follows = [f for f in cast.follow_ups if (f.service, f.entity) != (case.service, case.entity)] \
            if pattern.follow_up else [None]
        if pattern.follow_up:
            books = [b for b in books if b.by_query]
        seen = [w for w in cast.witnesses if (w.case_service, w.case_entity) == (case.service, case.entity)
                and outcome_of(w.done) is not None and outcome_of(w.done) == outcome_of(case.target)] \
            if pattern.witness else [None]
        if pattern.witness:
            books = []  # a reconciliation's rule is the other system
        # a set-up elsewhere, of another kind of thing (a ticket that asks for a ticket is a transfer, not a set-up)
        made = [p for p in cast.provisions if p.service != case.service and not set(words(p.entity)) & set(words(case.entity))] \
            if pattern.provision else [None]
        if pattern.provision:
            books = []
            if request_body(specs[case.service], case) is None:
                continue
        for channel in channels:
            for book in books or ([None] if not pattern.follow_up else []):
                for follow in follows:
                    found += [(case, channel, book, follow, witness, provision) for witness in seen
                              for provision in made if provision is None or provision.service != channel.service]
    return found


def draft_workflows(specs: Mapping[str, ServiceSpec], implementation: Mapping[str, Mapping[str, str]], seed: int,
                    n: int) -> list[WorkflowDraft]:
    """``n`` drafts (fewer when no pattern fits the library: none at all for a library without a case kind)."""
    cast = cast_library(specs, implementation)
    options = {p.name: combinations(p, cast, specs) for p in PATTERNS}
    usable = [p for p in PATTERNS if options[p.name]]
    if not usable:
        return []
    rng = random.Random(f"workflows:{seed}")
    used: Counter[str] = Counter()
    drafts = []
    for index in range(n):
        pattern = usable[index % len(usable)]
        level = rng.choices(LEVELS, LEVEL_WEIGHTS)[0]
        choices = options[pattern.name]
        if level == "hard":  # hard work spans at least three services where the library allows it
            choices = [c for c in choices if len(_services(c)) >= 3] or choices
        if level not in pattern.rules:  # the rulebook is not read: its service does not count
            choices = list({(case, channel, None, follow, witness, made): None
                            for case, channel, _, follow, witness, made in choices})
        draws = [rng.random() for _ in choices]
        best = min(range(len(choices)), key=lambda i: (max(used[s] for s in _services(choices[i])),
                                                       sum(used[s] for s in _services(choices[i])), draws[i]))
        case, channel, book, follow, witness, made = choices[best]
        if level not in pattern.rules or case.contact is None:
            book = None  # a draft names only the services its task uses
        draft = WorkflowDraft(pattern=pattern.name, level=level, case=case, channel=channel, rulebook=book,
                              follow_up=follow, variant=index, witness=witness, provision=made)
        used.update(draft.services)
        drafts.append(draft)
    return drafts


def _services(choice: tuple) -> set[str]:
    return {part.service for part in choice if part is not None}
