"""A workflow request laid out as a note: every shape names its writer and keeps the report last."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from compoworld_assets.engine.library.population import Population
from compoworld_assets.engine.tasks.realism import PERSON, SIGNED
from compoworld_assets.engine.tasks.rewrite import REPORT_MARK
from compoworld_assets.engine.tasks.workflows.letter import Letter, write_letter

REPORT = "When you are done, tell me how many invoices you marked paid."


def _letter(rules: str = "") -> Letter:
    me = Population.generate(3).pool("employee")[0]
    return Letter(me=me, role="finance operations lead", company="Acme Corp",
                  reason="Audit found invoices that were never closed out.",
                  ask="Could you mark every sent invoice whose payment succeeded as paid?",
                  after="Send Ada a summary from my address.", rules=rules)


@given(st.integers(min_value=0, max_value=10_000))
@settings(max_examples=60, deadline=None)
def test_every_shape_names_the_writer_and_asks_for_the_report_in_its_own_paragraph(seed):
    letter = _letter()
    text = write_letter(letter, REPORT, random.Random(seed))
    assert letter.me.full_name in text and letter.me.email in text
    assert PERSON.search(text) or SIGNED.search(text), text  # the realism measure sees who writes
    request, mark, report = text.partition(REPORT_MARK)
    assert mark and letter.ask in request and report.startswith(REPORT.removeprefix("When you are done"))
    assert letter.reason in request and letter.after in request


def test_shapes_vary_and_are_fixed_by_the_draw():
    letter = _letter()
    texts = {write_letter(letter, REPORT, random.Random(seed)) for seed in range(40)}
    assert len(texts) >= 6
    assert write_letter(letter, REPORT, random.Random(5)) == write_letter(letter, REPORT, random.Random(5))
    assert any(t.startswith(letter.reason) for t in texts)  # straight to the point, signed at the end
    assert any(t.split(" ", 1)[0].rstrip(",") in ("Hi", "Hello", "Morning") for t in texts)


def test_empty_parts_leave_no_gap():
    letter = Letter(me=_letter().me, role="analyst", company="Acme Corp", reason="Why.", ask="Do it.")
    for seed in range(20):
        text = write_letter(letter, REPORT, random.Random(seed))
        assert "  " not in text and "\n\n\n" not in text
