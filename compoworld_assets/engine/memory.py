"""Handing memory a step no longer needs back to the operating system.

Python returns the arenas of its small objects once they are empty, but the C allocator (glibc's malloc) keeps
the pages of larger freed blocks for reuse. A step that lets go of a few hundred MB of objects before it starts
worker processes (task sampling drops the library's specs and the graph) would still hold them as resident
memory next to its workers' own; ``malloc_trim`` releases them. Elsewhere than glibc this only collects.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc


def release_freed_memory() -> None:
    """Collect garbage, then ask the C allocator to return its free pages (glibc only)."""
    gc.collect()
    name = ctypes.util.find_library("c")
    if name is None:
        return
    trim = getattr(ctypes.CDLL(name), "malloc_trim", None)
    if trim is not None:
        trim(0)
