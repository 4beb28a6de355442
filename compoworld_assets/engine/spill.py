"""Bytes parked on disk while a step works: an anonymous temporary file, appended to and read back by offset.

A paper-scale round's tasks are GBs of JSON even compressed; steps that must keep every one within reach
(to store them in order, to replay them by id) keep their bytes here and only small handles in memory.
"""

from __future__ import annotations

import os
import tempfile


class SpillFile:
    """An anonymous temporary file (unlinked from the start, so nothing is left behind even when the process is
    killed) that lives as long as this object. One writer at a time; reads from any thread."""

    def __init__(self, prefix: str = "cw-spill-") -> None:
        self._file = tempfile.TemporaryFile(prefix=prefix)  # noqa: SIM115 - lives as long as the spill
        self._end = 0

    def append(self, data: bytes) -> tuple[int, int]:
        """Write ``data`` at the end; its (offset, length), readable at once."""
        offset = self._end
        os.pwrite(self._file.fileno(), data, offset)
        self._end += len(data)
        return offset, len(data)

    def read(self, offset: int, length: int) -> bytes:
        return os.pread(self._file.fileno(), length, offset)
