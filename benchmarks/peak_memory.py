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
        self.peak_by_depth: list[float] = []  # MB at the peak: this process, its children, their children...
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
            by_depth: list[float] = []
            count = 0
            level = [me]
            while level:
                total = 0
                for process in level:
                    try:
                        total += process.memory_info().rss
                        count += 1
                    except psutil.Error:  # it ended between listing and reading
                        continue
                by_depth.append(total / 2**20)
                level = [child for process in level for child in _children(process)]
            if sum(by_depth) > self.peak_mb:
                self.peak_mb, self.peak_processes, self.peak_by_depth = sum(by_depth), count, by_depth
            if self._stop.wait(self.interval_s):
                return

    def summary(self) -> str:
        levels = " + ".join(f"{mb:,.0f}" for mb in self.peak_by_depth)
        return (f"peak RSS of the process tree: {self.peak_mb:,.0f} MB ({self.peak_processes} processes then; by depth "
                f"below this process: {levels} MB; sampled every {self.interval_s:g} s)")


def _children(process: psutil.Process) -> list[psutil.Process]:
    try:
        return process.children()
    except psutil.Error:
        return []
