"""Peak resident memory of a benchmark's whole process tree: this process, its worker processes and the
service processes they start.

``resource.getrusage`` reports one process's peak, not the sum of many living at once, so a thread samples
the tree every ``interval_s`` with psutil (a peak shorter than the interval can be missed).

    with PeakMemory() as peak:
        ...
    print(peak.summary())
"""

from __future__ import annotations

import threading
from types import TracebackType
from typing import Self

import psutil


class PeakMemory:
    def __init__(self, interval_s: float = 0.5) -> None:
        self.interval_s = interval_s
        self.peak_mb = 0.0
        self.peak_processes = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, name="peak-memory", daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self._stop.set()
        self._thread.join()

    def _sample(self) -> None:
        me = psutil.Process()
        while True:
            total, count = 0, 0
            for process in [me, *me.children(recursive=True)]:
                try:
                    total += process.memory_info().rss
                    count += 1
                except psutil.Error:  # it ended between listing and reading
                    continue
            if total / 2**20 > self.peak_mb:
                self.peak_mb, self.peak_processes = total / 2**20, count
            if self._stop.wait(self.interval_s):
                return

    def summary(self) -> str:
        return (f"peak RSS of the process tree: {self.peak_mb:,.0f} MB ({self.peak_processes} processes then; "
                f"sampled every {self.interval_s:g} s)")
