"""Peak memory of a benchmark's whole process tree: this process, its worker processes and the service
processes they start.

``resource.getrusage`` reports one process's peak, not the sum of many living at once, so a thread samples
the tree every ``interval_s`` with psutil (a peak shorter than the interval can be missed). Two sums:

* RSS, as ``ps`` shows it: pages shared between processes (the interpreter and libraries every service
  process maps, the pages a forked worker still shares with its parent) count once per process;
* PSS (proportional set size, ``/proc/PID/smaps_rollup``): each shared page is split among its sharers,
  so the sum is what the tree takes from the machine.

Neither counts a child that still runs in its parent's memory, between ``fork``/``vfork`` and ``exec``
(``subprocess`` starts every service process so; its resident size is the parent's, which would count
twice): a child whose code and stack addresses and resident size are its parent's.

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
        self.peak_mb = 0.0  # the sum of RSS
        self.peak_pss_mb = 0.0
        self.peak_processes = 0
        self.peak_by_depth: list[float] = []  # RSS at the peak: this process, its children, their children...
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
            pss = count = 0
            level: list[tuple[psutil.Process, _Footprint | None]] = [(me, None)]
            while level:
                total = 0
                below: list[tuple[psutil.Process, _Footprint | None]] = []
                for process, parent in level:
                    footprint = _footprint(process)
                    if footprint is None:  # it ended between listing and reading
                        continue
                    if not footprint.runs_in(parent):
                        total += footprint.rss
                        pss += footprint.pss
                        count += 1
                    below += [(child, footprint) for child in _children(process)]
                by_depth.append(total / 2**20)
                level = below
            self.peak_pss_mb = max(self.peak_pss_mb, pss / 2**20)
            if sum(by_depth) > self.peak_mb:
                self.peak_mb, self.peak_processes, self.peak_by_depth = sum(by_depth), count, by_depth
            if self._stop.wait(self.interval_s):
                return

    def summary(self) -> str:
        levels = " + ".join(f"{mb:,.0f}" for mb in self.peak_by_depth)
        return (f"peak RSS of the process tree: {self.peak_mb:,.0f} MB ({self.peak_processes} processes then; by depth "
                f"below this process: {levels} MB; peak PSS {self.peak_pss_mb:,.0f} MB; sampled every "
                f"{self.interval_s:g} s)")


class _Footprint:
    def __init__(self, rss: int, pss: int, layout: tuple[str, ...]) -> None:
        self.rss, self.pss, self.layout = rss, pss, layout

    def runs_in(self, parent: _Footprint | None) -> bool:
        """Whether this is a child not yet ``exec``-ed: its parent's code and stack, and its parent's size."""
        return parent is not None and self.layout == parent.layout and self.rss == parent.rss


def _footprint(process: psutil.Process) -> _Footprint | None:
    try:
        memory = process.memory_full_info()
        with open(f"/proc/{process.pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except (psutil.Error, OSError):
        return None
    # fields 26-28 of proc(5): startcode, endcode, startstack (this list starts at field 3)
    return _Footprint(memory.rss, getattr(memory, "pss", memory.rss), tuple(fields[23:26]))


def _children(process: psutil.Process) -> list[psutil.Process]:
    try:
        return process.children()
    except psutil.Error:
        return []
