"""SIGINT and SIGTERM stop an in-process Dagster run even while it waits for a pool slot.

During an in-process run Dagster replaces the SIGINT and SIGTERM handlers with one that only sets a
flag, and looks at the flag when a step starts or while user code runs. Between steps, when a step
waits for a concurrency-pool slot, nothing looks: a signal is swallowed and the wait has no end.
:func:`interruptible_run` watches the flag from a thread; when a signal has gone unhandled for
``grace_s`` it raises ``KeyboardInterrupt`` in the main thread, where Dagster's own handling reports
the run failed ("Execution was interrupted unexpectedly") and frees the run's pending slot claims.
"""

from __future__ import annotations

import ctypes
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from dagster._utils.interrupts import check_captured_interrupt


def _raise_in(thread: threading.Thread, exception: type[BaseException]) -> None:
    """Raise ``exception`` in ``thread`` at its next bytecode (CPython's asynchronous exceptions)."""
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread.ident), ctypes.py_object(exception))


@contextmanager
def interruptible_run(poll_s: float = 0.2, grace_s: float = 1.0) -> Iterator[None]:
    """Run a Dagster in-process execution inside this; a swallowed SIGINT/SIGTERM becomes KeyboardInterrupt."""
    main = threading.main_thread()
    if threading.current_thread() is not main:  # Dagster captures signals on the main thread only
        yield
        return
    done = threading.Event()

    def watch() -> None:
        pending_since = None
        while not done.wait(poll_s):
            if not check_captured_interrupt():
                pending_since = None
                continue
            pending_since = pending_since or time.monotonic()
            if time.monotonic() - pending_since >= grace_s:
                _raise_in(main, KeyboardInterrupt)
                return

    watcher = threading.Thread(target=watch, name="compoworld-interrupt-watch", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        done.set()
        watcher.join()
