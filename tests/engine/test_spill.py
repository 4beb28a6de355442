"""Bytes parked on disk: read back as written."""

from compoworld_assets.engine.spill import SpillFile


def test_a_spill_file_reads_back_every_append_by_its_offset():
    spill = SpillFile()
    handles = [spill.append(data) for data in (b"first", b"", "é".encode(), b"x" * 70_000)]
    assert [spill.read(*h) for h in handles] == [b"first", b"", "é".encode(), b"x" * 70_000]

