"""The sandboxed executor: one synthesized service module in a long-lived, locked-down child.

:class:`SandboxedExecutor` starts ``worker.py`` (stdlib only) with ``python -S -s -P -B``
(no site, no user site, no script dir on ``sys.path``; ``-I`` is not used because it would
also ignore ``PYTHONHASHSEED``, which pins set ordering; the environment is built from
scratch instead), cwd in a fresh scratch directory, and talks JSON lines over its stdin and
stdout. Isolation layers, all active on Linux (``executor.layers`` lists what the child set up):

* ``network_namespace``: a private network namespace with no interfaces up (root only;
  skipped silently where ``unshare`` is not permitted);
* ``rlimit_*``: CPU seconds per call (SIGXCPU kills a runaway child), address space
  (``memory_mb``), file size, open files, no new processes, no core dumps;
* ``audit_hook``: a ``sys.addaudithook`` policy denying sockets, subprocesses, exec/fork/
  spawn, ctypes, ``chdir``, writes outside the scratch directory, reads outside it except the
  standard library, and importing modules outside :data:`ALLOWED_IMPORTS` (plus the few
  that C code imports on the service's behalf: ``_strptime``, ``time``, ``encodings``...);
* ``import_allowlist``: an ``__import__`` guard in the module's builtins, so even modules the
  worker itself already loaded (``os``, ``sys``) cannot be imported by the service.

The import guard and the read restrictions are policy rather than a boundary (Python objects
reach loaded modules); the audit hook on the operations themselves and the kernel limits are
the boundary. Not covered: seccomp, a separate user id, and filesystem namespaces.

The parent enforces the wall-clock limit per call. A call that times out kills the child; a
child that dies (memory, CPU, crash) is reported as ``resource_limit``; either way the next
call starts a fresh child with the last known-good state, which the parent mirrors from the
replies (a call that changed the state sends the new state back).

Resets to a state the child already holds cost no round trip: the parent remembers the JSON
of the last state it installed (the child keeps a pristine copy of it) and whether a call has
changed the child's state since. Resetting to the same JSON then does nothing (unchanged) or
marks the next call to restore the pristine copy first (changed); until that call the mirror
is the installed JSON. Episodes that reset the same initial world over and over (the task
gate, pooled rollouts) send each service's state once.
"""

from __future__ import annotations

import json
import math
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Self

import pydantic_core

from compoworld_assets.engine.envelope import (
    INTERNAL_ERROR,
    INVALID_ARGUMENTS,
    RESOURCE_LIMIT,
    SANDBOX_VIOLATION,
    TIMEOUT,
    error,
    is_envelope,
)
from compoworld_assets.engine.runtime.executor import SandboxLimits
from compoworld_assets.engine.runtime.state import ServiceState

ALLOWED_IMPORTS = (
    "__future__",
    "copy",
    "json",
    "re",
    "math",
    "datetime",
    "decimal",
    "itertools",
    "functools",
    "collections",
    "string",
    "uuid",
    "hashlib",
    "random",
    "statistics",
    "operator",
    "typing",
    "dataclasses",
    "enum",
)
FILE_SIZE_MB = 64
MAX_OPEN_FILES = 64
STARTUP_TIMEOUT_S = 10.0
DEFAULT_LIMITS = SandboxLimits()
WORKER_PATH = Path(__file__).with_name("worker.py")
WORKER_COMMAND = (sys.executable, "-S", "-s", "-P", "-B", str(WORKER_PATH))

_FAILURE_CODES = {
    "violation": SANDBOX_VIOLATION,
    "resource": RESOURCE_LIMIT,
    "exception": INTERNAL_ERROR,
    "protocol": INTERNAL_ERROR,
}
_DEATH_REASONS = {
    signal.SIGXCPU: "exceeded its CPU time limit",
    signal.SIGKILL: "was killed (SIGKILL: memory pressure or the CPU hard limit)",
    signal.SIGSEGV: "crashed (SIGSEGV)",
    signal.SIGXFSZ: "exceeded the file size limit",
}


class SandboxLoadError(RuntimeError):
    """The service module could not be loaded in the sandbox (syntax error, violation, no handle)."""


class _ChildTimeout(Exception):
    pass


class _ChildDied(Exception):
    pass


@dataclass
class _Child:
    process: subprocess.Popen[bytes]
    stderr: IO[bytes]
    poller: select.poll
    buffer: bytearray = field(default_factory=bytearray)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout, self.stderr):
            if stream is not None:
                stream.close()

    def death_reason(self) -> str:
        """Why the (already exited) child died, with the last line it wrote to stderr."""
        try:
            code = self.process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self.process.kill()
            code = self.process.wait()
        if code < 0:
            sig = signal.Signals(-code)
            reason = f"the service process {_DEATH_REASONS.get(sig, f'died from {sig.name}')}"
        else:
            reason = f"the service process exited with status {code}"
        self.stderr.seek(0, os.SEEK_END)
        self.stderr.seek(max(0, self.stderr.tell() - 2000))
        lines = self.stderr.read().decode("utf-8", "replace").strip().splitlines()
        return f"{reason} ({lines[-1]})" if lines else reason


@dataclass
class _Resources:
    """What must be released on close or garbage collection (held apart from the executor)."""

    scratch: Path
    child: _Child | None = None

    def release(self) -> None:
        if self.child is not None:
            self.child.stop()
            self.child = None
        shutil.rmtree(self.scratch, ignore_errors=True)


def _encode(message: dict[str, Any]) -> bytes:
    return json.dumps(message, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode() + b"\n"


def _state_json(state: ServiceState) -> bytes:
    """The state as one line of JSON for the child; the same state object always gives the same bytes.

    NaN and infinities are not JSON: such a state goes through the strict encoder, which rejects it.
    """
    data = {"service_id": state.service_id, "tables": state.tables, "counters": state.counters}
    encoded = pydantic_core.to_json(data, inf_nan_mode="constants")
    if b"NaN" in encoded or b"Infinity" in encoded:
        encoded = _encode(state.model_dump(mode="json"))[:-1]
    return encoded


def _preview(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 200 else text[:200] + "..."


class SandboxedExecutor:
    """Hosts one service module in a sandboxed child process (implements ``ToolExecutor``).

    ``cpu_seconds`` applies per call; ``call_timeout_s`` is the wall-clock limit per call. One
    call at a time: an executor is not thread-safe.
    """

    def __init__(
        self,
        module_source: str,
        limits: SandboxLimits = DEFAULT_LIMITS,
        *,
        service_id: str = "service",
        isolate_network: bool = True,
    ) -> None:
        self._limits = limits
        self._config = {
            "source": module_source,
            "filename": f"<service {service_id}>",
            "cpu_seconds": limits.cpu_seconds,
            "memory_mb": limits.memory_mb,
            "file_size_mb": FILE_SIZE_MB,
            "max_open_files": MAX_OPEN_FILES,
            "allowed_imports": list(ALLOWED_IMPORTS),
            "isolate_network": isolate_network,
        }
        if limits.scratch_root is not None:
            Path(limits.scratch_root).mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix=f"cw-{service_id}-", dir=limits.scratch_root))
        self._config["scratch"] = str(scratch)
        self._resources = _Resources(scratch)
        self._finalizer = weakref.finalize(self, self._resources.release)
        self._mirror = _encode({"service_id": service_id, "tables": {}, "counters": {}})[:-1]
        self._installed: bytes | None = None  # the JSON of the child's pristine copy
        self._changed = False  # a call changed the child's state since the pristine copy was taken
        self._restore_pending = False  # the next call starts from the pristine copy
        self.layers: list[str] = []
        self.starts = 0
        try:
            self._start()
        except SandboxLoadError:
            self.close()
            raise

    @property
    def scratch_dir(self) -> Path:
        return self._resources.scratch

    @property
    def pid(self) -> int | None:
        """The child's process id, None while no child runs."""
        child = self._resources.child
        return None if child is None else child.process.pid

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self._finalizer()

    def reset(self, state: ServiceState) -> None:
        """Install ``state``; nothing crosses the pipe when the child already holds exactly this JSON."""
        self._mirror = _state_json(state)
        if self._resources.child is None:
            self._start()
            return
        if self._mirror == self._installed:
            self._restore_pending = self._restore_pending or self._changed
            self._changed = False
            return
        try:
            self._exchange(b'{"op":"reset","state":' + self._mirror + b"}\n", self._limits.call_timeout_s)
        except (_ChildTimeout, _ChildDied):
            self._stop_child()
            self._start()
            return
        self._installed = self._mirror
        self._changed = self._restore_pending = False

    def state(self) -> ServiceState:
        return ServiceState.model_validate_json(self._mirror)

    def call(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        if not self._finalizer.alive:
            raise RuntimeError("the executor is closed")
        try:
            request = _encode({"op": "call", "tool": tool, "args": args, "restore": self._restore_pending})
        except (TypeError, ValueError) as exc:
            return error(INVALID_ARGUMENTS, f"arguments are not JSON: {exc}")
        if self._resources.child is None:
            try:
                self._start()
            except SandboxLoadError as exc:
                return error(INTERNAL_ERROR, f"the service could not be restarted: {exc}")
        limit = self._limits.call_timeout_s
        try:
            reply = self._exchange(request, limit)
            self._restore_pending = False
        except _ChildTimeout:
            self._stop_child()
            return error(
                TIMEOUT,
                f"tool {tool!r} exceeded the {limit:g}s time limit; the service "
                "restarts with its last good state",
            )
        except _ChildDied as exc:
            self._stop_child()
            limits = f"cpu_seconds={self._limits.cpu_seconds}, memory_mb={self._limits.memory_mb}"
            return error(
                RESOURCE_LIMIT,
                f"tool {tool!r}: {exc} (limits: {limits}); the service restarts with its last good state",
            )
        if not reply["ok"]:
            return error(
                _FAILURE_CODES.get(reply["failure"], INTERNAL_ERROR), f"tool {tool!r}: {reply['message']}"
            )
        result = reply["result"]
        if not is_envelope(result):
            self._rollback()
            return error(INTERNAL_ERROR, f"tool {tool!r} returned a non-envelope value: {_preview(result)}")
        if "state" in reply:
            self._mirror = reply["state"]
            self._changed = True
        return result

    def _rollback(self) -> None:
        try:
            self._exchange(_encode({"op": "rollback"}), self._limits.call_timeout_s)
        except (_ChildTimeout, _ChildDied):
            self._stop_child()

    def _start(self) -> None:
        """Start a child, load the module and install the mirrored state."""
        stderr = tempfile.TemporaryFile()  # noqa: SIM115 - closed by _Child.stop
        env = {"PYTHONHASHSEED": "0", "LC_ALL": "C.UTF-8", "HOME": str(self.scratch_dir)}
        process = subprocess.Popen(
            WORKER_COMMAND,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            cwd=self.scratch_dir,
            env=env,
            close_fds=True,
            bufsize=0,
        )
        poller = select.poll()
        assert process.stdout is not None
        poller.register(process.stdout.fileno(), select.POLLIN)
        self._resources.child = _Child(process, stderr, poller)
        try:
            reply = self._exchange(_encode(self._config), max(self._limits.call_timeout_s, STARTUP_TIMEOUT_S))
            if reply["ok"]:
                self.layers = reply["layers"]
                reply = self._exchange(b'{"op":"reset","state":' + self._mirror + b"}\n", STARTUP_TIMEOUT_S)
        except _ChildTimeout:
            self._stop_child()
            raise SandboxLoadError("the service module did not load within the time limit") from None
        except _ChildDied as exc:
            self._stop_child()
            raise SandboxLoadError(f"the service module failed to load: {exc}") from None
        if not reply["ok"]:
            self._stop_child()
            raise SandboxLoadError(f"the service module failed to load: {reply['message']}")
        self._installed = self._mirror
        self._changed = self._restore_pending = False
        self.starts += 1

    def _stop_child(self) -> None:
        if self._resources.child is not None:
            self._resources.child.stop()
            self._resources.child = None

    def _exchange(self, request: bytes, timeout_s: float) -> dict[str, Any]:
        """Send ``request``, read the reply; a reply marked ``changed`` comes with the state's JSON
        on the next line, kept as bytes under ``"state"``."""
        child = self._resources.child
        assert child is not None and child.process.stdin is not None and child.process.stdout is not None
        try:
            view = memoryview(request)
            while view:
                view = view[os.write(child.process.stdin.fileno(), view) :]
        except OSError:
            raise _ChildDied(child.death_reason()) from None
        deadline = time.monotonic() + timeout_s
        reply = json.loads(self._read_line(child, deadline))
        if reply.get("changed"):
            reply["state"] = self._read_line(child, deadline)
        return reply

    @staticmethod
    def _read_line(child: _Child, deadline: float) -> bytes:
        assert child.process.stdout is not None
        out_fd = child.process.stdout.fileno()
        while (end := child.buffer.find(b"\n")) < 0:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not child.poller.poll(math.ceil(remaining * 1000)):
                raise _ChildTimeout
            chunk = os.read(out_fd, 1 << 20)
            if not chunk:
                raise _ChildDied(child.death_reason())
            child.buffer += chunk
        line = bytes(child.buffer[:end])
        del child.buffer[: end + 1]
        return line
