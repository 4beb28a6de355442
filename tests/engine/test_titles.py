"""Record titles by kind: they say what the record is, and no title of a table hides inside another."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compoworld_assets.engine.library.titles import KINDS, title_kind


@pytest.mark.parametrize("entity, field, expected", [
    ("JobOpening", "title", "job"), ("support_ticket", "subject", "ticket"), ("KnowledgeArticle", "title", "article"),
    ("Project", "project_name", "project"), ("ExpenseReport", "title", "expense"),
])
def test_the_entity_name_says_the_kind(entity, field, expected):
    kind = title_kind(entity, field)
    assert kind is not None and expected in kind.entity_words


@pytest.mark.parametrize("entity, field", [("Project", "budget_note"), ("Pet", "name"), ("Project", "owner_name")])
def test_other_fields_and_unknown_records_get_no_kind(entity, field):
    assert title_kind(entity, field) is None


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: min(k.entity_words))
def test_no_indexed_part_hides_inside_another_part(kind):
    for part in kind.indexed:
        others = [p for p in kind.indexed if p != part] + list(kind.drawn)
        assert not any(part.casefold() in other.casefold() for other in others), part


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 10_000), kind=st.sampled_from(KINDS))
def test_rows_of_one_table_never_share_or_contain_a_title(seed, kind):
    rng = random.Random(seed)
    titles = [kind.make(rng, index) for index in range(1, len(kind.indexed) + 1)]
    for i, title in enumerate(titles):
        assert not any(j != i and title.casefold() in other.casefold() for j, other in enumerate(titles))
