"""Scratch folders of service processes, and the sweep of those a killed owner left behind.

A sandboxed service gets a scratch folder, removed when its executor closes. A process killed outright
(SIGKILL, the out-of-memory killer, a worker a pool gave up on) removes nothing, so each folder carries an
``.owner`` file its creating process holds an exclusive ``flock`` on for the folder's life. The kernel
drops the lock when that process dies, whatever killed it, so a folder whose lock can be taken is an
orphan. A lock, not a pid: pids are reused, and processes in other pid namespaces (pods, containers)
may share the scratch root.

The first scratch folder a process makes under a root sweeps that root's orphans.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import tempfile
import threading
from pathlib import Path

PREFIX = "cw-"
OWNER_FILE = ".owner"

_swept: set[str] = set()
_sweep_lock = threading.Lock()


class ScratchFolder:
    """A folder ``<root>/cw-<name>-XXXX`` held by this process until :meth:`remove`; the service gets its
    ``work`` subfolder (:attr:`path`), so the owner file is out of the service's reach."""

    def __init__(self, name: str, root: Path | None) -> None:
        base = Path(root) if root is not None else Path(tempfile.gettempdir())
        base.mkdir(parents=True, exist_ok=True)
        sweep_once(base)
        self.folder = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{name}-", dir=base))
        self._owner = -1
        self.path = self.folder / "work"
        try:
            # Locked under another name, then renamed: a sweep never sees an owner file not yet locked.
            pending = self.folder / f"{OWNER_FILE}.pending"
            self._owner = os.open(pending, os.O_CREAT | os.O_EXCL | os.O_RDWR | os.O_CLOEXEC, 0o600)
            fcntl.flock(self._owner, fcntl.LOCK_EX | fcntl.LOCK_NB)
            pending.rename(self.folder / OWNER_FILE)
            self.path.mkdir()
        except OSError:
            self.remove()
            raise

    def remove(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)
        if self._owner >= 0:
            os.close(self._owner)
            self._owner = -1


def sweep_once(root: Path) -> None:
    """Sweep ``root`` the first time this process asks (a fork does not inherit having swept)."""
    key = f"{os.getpid()}:{root.resolve()}"
    with _sweep_lock:
        if key in _swept:
            return
        _swept.add(key)
    sweep_orphans(root)


def sweep_orphans(root: Path) -> list[Path]:
    """Remove the scratch folders under ``root`` whose owner is gone; the folders removed."""
    removed = []
    with contextlib.suppress(OSError):
        for entry in os.scandir(root):
            if entry.name.startswith(PREFIX) and entry.is_dir(follow_symlinks=False) and _orphaned(Path(entry.path)):
                shutil.rmtree(entry.path, ignore_errors=True)
                removed.append(Path(entry.path))
    return removed


def _orphaned(folder: Path) -> bool:
    """Whether ``folder`` has an owner file no process holds. Folders of other users, and folders without
    the file (made by something else, or before owners were recorded), are never orphans."""
    try:
        fd = os.open(folder / OWNER_FILE, os.O_RDWR | os.O_CLOEXEC | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        if os.fstat(fd).st_uid != os.getuid():
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True
    finally:
        os.close(fd)
