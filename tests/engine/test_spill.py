"""Bytes parked on disk: read back as written, and texts given back in key order."""

from hypothesis import given
from hypothesis import strategies as st

from compoworld_assets.engine.spill import SpillFile, in_key_order


def test_a_spill_file_reads_back_every_append_by_its_offset():
    spill = SpillFile()
    handles = [spill.append(data) for data in (b"first", b"", "é".encode(), b"x" * 70_000)]
    assert [spill.read(*h) for h in handles] == [b"first", b"", "é".encode(), b"x" * 70_000]


@given(st.lists(st.tuples(st.integers(0, 5), st.text(max_size=20))))
def test_texts_come_back_sorted_by_key_and_as_they_came_within_a_key(rows):
    assert list(in_key_order(iter(rows))) == [text for _, text in sorted(rows, key=lambda row: row[0])]
