"""The sandboxed executor: one service module in a long-lived, confined child process.

:class:`SandboxedExecutor` starts ``worker.py`` (stdlib only) with ``python -S -s -P -B``
inside the operating-system boundary of :mod:`~compoworld_assets.engine.runtime.isolation`:
bubblewrap namespaces (user, PID, mount, network, IPC, UTS; read-only interpreter, private
scratch, its own ``/proc``, cleared environment, ``--die-with-parent``) and a seccomp filter
(no processes, threads, exec, sockets, signals, ptrace, mounts or namespace changes), plus
resource limits (CPU seconds per call, address space, file size, open files, no core dumps).
An audit hook and an ``__import__`` guard in the child remain only to turn common mistakes
into readable errors. ``executor.layers`` lists every layer that is active.

Where bubblewrap cannot run, only *trusted* modules (written by CompoWorld's own offline
synthesizer) start, confined by seccomp and the limits alone; an untrusted (LLM-written)
module is refused with the reason unless ``SandboxLimits.allow_unisolated`` is set.

The parent trusts nothing the child sends. Each request carries an id; a reply is one frame
(``CW <id> <reply bytes> <state bytes>``, see ``worker.py``) whose id, sizes (at most
``max_reply_mb`` and about ``max_reply_items`` JSON values, so decoding it cannot swell the
parent), JSON and state schema are checked. Bytes that arrive outside a frame, a
wrong id, an oversized or malformed frame, a child that stops reading its input, a timeout or
a death: each kills the whole sandbox (every process in its PID namespace) and answers an
error envelope; the next call starts a fresh child with the last good state, which the parent
keeps from the replies (a call that changed the state sends back the tables it changed, whole, or the whole
state when it changed which tables there are).

An untrusted module gets a fresh child on every ``reset`` that follows a call (its code could have
changed the interpreter, which a state restore does not undo). For trusted modules, resets to a
state the child already holds cost no round trip: the parent remembers the JSON
of the last state it installed (the child keeps a pristine copy of it) and whether a call has
changed the child's state since. Resetting to the same JSON then does nothing (unchanged) or
marks the next call to restore the pristine copy first (changed); until that call the mirror
is the installed JSON. Episodes that reset the same initial world over and over (the task
gate, pooled rollouts) send each service's state once.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import json
import math
import os
import select
import signal
import subprocess
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from multiprocessing.util import Finalize
from pathlib import Path
from typing import IO, Any, Self

import pydantic
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
from compoworld_assets.engine.identity_cache import WeakIdentityCache
from compoworld_assets.engine.runtime import isolation
from compoworld_assets.engine.runtime.executor import SandboxLimits
from compoworld_assets.engine.runtime.scratch import ScratchFolder
from compoworld_assets.engine.runtime.state import Counters, ServiceState, Tables

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
# Modules that C code or the allowed modules import lazily, through the importing frame's ``__import__``
# (``datetime.strptime`` imports ``_strptime``; codecs import their encodings): service code may import them too.
SUPPORT_IMPORTS = (
    "_strptime",
    "time",
    "calendar",
    "locale",
    "encodings.idna",
    "encodings.latin_1",
    "encodings.ascii",
    "unicodedata",
    "numbers",
    "fractions",
    "bisect",
    "inspect",
)
FILE_SIZE_MB = 64
MAX_OPEN_FILES = 64
STARTUP_TIMEOUT_S = 10.0
MAX_HEADER_BYTES = 64
STOP_TIMEOUT_S = 5.0
DEFAULT_LIMITS = SandboxLimits()
PAGE_BYTES = os.sysconf("SC_PAGE_SIZE")
WORKER_PATH = Path(__file__).with_name("worker.py")
NAMESPACE_LAYERS = ("bubblewrap", "user_namespace", "pid_namespace", "mount_namespace", "network_namespace",
                    "ipc_namespace", "uts_namespace", "cleared_environment")

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
    signal.SIGSYS: "made a forbidden system call (SIGSYS)",
}


class SandboxLoadError(RuntimeError):
    """The service module could not be loaded in the sandbox (syntax error, violation, no handle).

    ``violation`` is true when loading it broke the sandbox's rules (hostile or broken code).
    """

    def __init__(self, message: str, *, violation: bool = False) -> None:
        super().__init__(message)
        self.violation = violation


class IsolationUnavailable(SandboxLoadError):
    """An untrusted module was refused: bubblewrap cannot isolate it here and no opt-in was given."""


class _ChildTimeout(Exception):
    pass


class _ChildDied(Exception):
    pass


class _ProtocolViolation(Exception):
    pass


class _StaleFrame(_ProtocolViolation):
    """A frame answering an earlier request: the trace of a forgery then, not of this call."""


def require_isolation(limits: SandboxLimits) -> list[str]:
    """The namespace layers untrusted code gets; raise :class:`IsolationUnavailable` when it gets none."""
    support = isolation.bubblewrap_support()
    if support.available:
        return list(NAMESPACE_LAYERS)
    if limits.allow_unisolated:
        return []
    raise IsolationUnavailable(
        f"refusing to run an untrusted (LLM-written) service module without OS isolation: {support.reason}. "
        "Install bubblewrap, or opt in with SandboxLimits(allow_unisolated=True) (the `sandbox` resource's "
        "allow_unisolated) to confine it by seccomp and resource limits only"
    )


# ``--die-with-parent`` ties a sandbox's life to the *thread* that started it (PR_SET_PDEATHSIG), so
# every sandbox starts from this pool's threads, which live as long as the process: a sandbox
# started from a short-lived thread (a start-up pool, a Dagster step thread) would die with it.
# A forked child inherits the pool without its threads (and maybe a held lock): it starts afresh.
_spawn_pool: ThreadPoolExecutor | None = None
_spawn_lock = threading.Lock()


def _forget_spawn_pool() -> None:
    global _spawn_pool, _spawn_lock
    _spawn_pool, _spawn_lock = None, threading.Lock()


os.register_at_fork(after_in_child=_forget_spawn_pool)


def _spawner() -> ThreadPoolExecutor:
    global _spawn_pool
    with _spawn_lock:
        if _spawn_pool is None:
            _spawn_pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="cw-sandbox-spawn")
        return _spawn_pool


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except (OSError, ValueError):
        return []


@dataclass
class _Child:
    """One sandbox: the outermost process (bubblewrap or the worker itself) and its pipes.

    ``inner`` is the process directly below bubblewrap (the PID namespace's init) and ``worker``
    the interpreter running ``worker.py``, both as host pids; without bubblewrap all three are one.
    """

    process: subprocess.Popen[bytes]
    stderr: IO[bytes]
    poller: select.poll
    buffer: bytearray = field(default_factory=bytearray)
    inner: int | None = None
    worker: int | None = None

    def locate(self) -> None:
        """Find the namespace init and the worker below the outermost process (once it has started)."""
        self.inner = self.worker = self.process.pid
        while children := _children(self.worker):
            if self.worker == self.process.pid:
                self.inner = children[0]
            self.worker = children[0]

    def stop(self) -> None:
        """Kill the sandbox: the namespace's init first (the kernel then kills and reaps everything in the
        PID namespace, and bubblewrap exits), then, if anything is left, the outermost process group."""
        if self.process.poll() is None:
            if self.inner is not None and self.inner != self.process.pid:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(self.inner, signal.SIGKILL)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self.process.wait(timeout=STOP_TIMEOUT_S)
            if self.process.poll() is None:
                try:
                    os.killpg(self.process.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
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
            self.stop()
            code = self.process.returncode
        if code < 0:
            sig = signal.Signals(-code)
            reason = f"the service process {_DEATH_REASONS.get(sig, f'died from {sig.name}')}"
        elif code > 128 and code - 128 in _DEATH_REASONS:  # bubblewrap reports its child's signal this way
            reason = f"the service process {_DEATH_REASONS[signal.Signals(code - 128)]}"
        else:
            reason = f"the service process exited with status {code}"
        self.stderr.seek(0, os.SEEK_END)
        self.stderr.seek(max(0, self.stderr.tell() - 2000))
        lines = self.stderr.read().decode("utf-8", "replace").strip().splitlines()
        return f"{reason} ({_preview(lines[-1])})" if lines else reason


@dataclass
class _Resources:
    """What must be released on close or garbage collection (held apart from the executor)."""

    scratch: ScratchFolder | None = None
    child: _Child | None = None

    def release(self) -> None:
        if self.child is not None:
            self.child.stop()
            self.child = None
        if self.scratch is not None:
            self.scratch.remove()


def _encode(message: dict[str, Any]) -> bytes:
    return json.dumps(message, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode() + b"\n"


def _encoded_state(state: ServiceState) -> bytes:
    """The state as one line of JSON for the child.

    NaN and infinities are not JSON: such a state goes through the strict encoder, which rejects it.
    """
    data = {"service_id": state.service_id, "tables": state.tables, "counters": state.counters}
    encoded = pydantic_core.to_json(data, inf_nan_mode="constants")
    if b"NaN" in encoded or b"Infinity" in encoded:
        encoded = _encode(state.model_dump(mode="json"))[:-1]
    return encoded


# Once per state object (states are values): a service's seed state is sent to every new runtime of it, and a
# paper-scale episode's pool made ~20 (padding services on standby included), 1.0 s of 800 rollouts' 9.4 s of CPU.
_state_json: WeakIdentityCache[ServiceState, bytes] = WeakIdentityCache(_encoded_state)


class _TablesChange(pydantic.BaseModel):
    """What a child sends back when a call changed tables of its state but not their set or order: those tables,
    whole, and all the counters, typed as :class:`ServiceState`'s."""

    tables: Tables
    counters: Counters


@functools.cache
def loadable_modules() -> list[str]:
    """The top-level names of every module that importing the allowed and support modules tries to load, in the
    child's interpreter (a module looks for optional ones: ``copy`` tries ``org.python.core``).

    A child loads a module when its service first imports it, after the audit hook is in (loading them all at
    start took ~23 of a start's ~37 ms), and the hook refuses to load a module outside this list. Worked out once
    per process, in a plain child of the same interpreter with the same flags."""
    script = ("import sys\ntried = set()\n"
              "sys.addaudithook(lambda event, args: event == 'import' and tried.add(args[0].partition('.')[0]))\n"
              + "".join(f"import {name}\n" for name in (*ALLOWED_IMPORTS, *SUPPORT_IMPORTS))
              + "print(' '.join(sorted(tried)))")
    found = subprocess.run([isolation.interpreter(), "-S", "-s", "-P", "-B", "-c", script], check=False,
                           capture_output=True, text=True, timeout=STARTUP_TIMEOUT_S,
                           env={"PYTHONHASHSEED": "0", "LC_ALL": "C.UTF-8"})
    if found.returncode != 0:
        raise RuntimeError(f"could not list the modules the allowed imports load: {found.stderr.strip()[-500:]}")
    return found.stdout.split()


def _resident_bytes(pid: int) -> int:
    """A process's resident memory (0 once it is gone), read from ``/proc/<pid>/statm`` as psutil does, without
    psutil's look at the process's start time: a pool reads every live sandbox's before it starts processes."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as statm:
            return int(statm.read().split()[1]) * PAGE_BYTES
    except (OSError, IndexError, ValueError):
        return 0


def worker_config(module_source: str, service_id: str, limits: SandboxLimits) -> dict[str, Any]:
    """A child's first request (``worker.py``'s configuration), less ``scratch``, added once its folder exists."""
    return {
        "source": module_source,
        "filename": f"<service {service_id}>",
        "cpu_seconds": limits.cpu_seconds,
        "memory_mb": limits.memory_mb,
        "file_size_mb": FILE_SIZE_MB,
        "max_open_files": MAX_OPEN_FILES,
        "allowed_imports": [*ALLOWED_IMPORTS, *SUPPORT_IMPORTS],
        "loadable": loadable_modules(),
        "seccomp": base64.b64encode(isolation.seccomp_program()).decode(),
    }


def _preview(value: Any) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= 200 else text[:200] + "..."


class SandboxedExecutor:
    """Hosts one service module in a sandboxed child process (implements ``ToolExecutor``).

    ``trusted`` marks a module written by CompoWorld's offline synthesizer: it may run where
    bubblewrap cannot (seccomp and limits only), and ``reset`` restores its state in place. Any
    other module needs bubblewrap or the explicit ``limits.allow_unisolated`` opt-in, and every
    ``reset`` after a call gives it a fresh process, so nothing a call did to the interpreter
    (patched modules, hidden globals) reaches the next episode. ``cpu_seconds`` applies per call;
    ``call_timeout_s`` is the wall-clock limit per call. One call at a time: an executor is
    not thread-safe.

    ``lazy`` defers the child to the first call: a service an episode never calls (a distractor) costs no
    process, and a module that cannot load fails that call (``INTERNAL_ERROR``) instead of the constructor.
    """

    def __init__(
        self,
        module_source: str,
        limits: SandboxLimits = DEFAULT_LIMITS,
        *,
        service_id: str = "service",
        trusted: bool = False,
        lazy: bool = False,
    ) -> None:
        support = isolation.bubblewrap_support()
        self._namespace_layers = list(NAMESPACE_LAYERS) if support.available else []
        if not trusted:
            require_isolation(limits)
        self._trusted = trusted
        self._lazy = lazy
        self._calls_since_start = 0
        self._limits = limits
        self._config = worker_config(module_source, service_id, limits)
        self._scratch_name = _safe_name(service_id)
        self._resources = _Resources()
        # Released when closed, collected, or when the process exits: multiprocessing's finalizers also run in
        # worker processes, which end by ``os._exit`` and so skip ``atexit`` (and ``weakref.finalize``).
        self._finalizer = Finalize(self, self._resources.release, exitpriority=10)
        self._mirror: bytes | None = _encode({"service_id": service_id, "tables": {}, "counters": {}})[:-1]
        self._reset_mirror = self._mirror
        # The hosted state as the parent knows it (a value: never changed in place), its JSON (``_mirror``) written
        # out only when a child must be given it again; None until read or built from a reply.
        self._current: ServiceState | None = None
        self._reset_state: ServiceState | None = None
        self.version = 0  # counts the changes of the hosted state (resets, restores and changing calls)
        self._state_owner = service_id  # the service id of the installed state: replies must keep it
        self._installed: bytes | None = None  # the JSON of the child's pristine copy
        self._child_dirty = False  # a call changed the child's state since the pristine copy was taken
        self._restore_pending = False  # the next call starts from the pristine copy
        self._request_id = 0
        self.layers: list[str] = []
        self.starts = 0
        self.violations: list[str] = []  # protocol violations seen, newest last
        if lazy:
            return
        try:
            self._start()
        except SandboxLoadError:
            self.close()
            raise

    @property
    def scratch_dir(self) -> Path | None:
        """The folder the service may write in; made at the first start, so a lazy service never called (most of a
        rollout's padding services) costs none: making and removing one per padding service was a seventh of the
        rollouts of a paper-scale round."""
        scratch = self._resources.scratch
        return None if scratch is None else scratch.path

    @property
    def pid(self) -> int | None:
        """The host process id of the interpreter running the module, None while no child runs."""
        child = self._resources.child
        return None if child is None else child.worker

    @property
    def running(self) -> bool:
        """Whether a child process runs now (not before a lazy executor's first call, nor after :meth:`close`)."""
        return self._resources.child is not None

    def resident_bytes(self) -> int:
        """Resident memory of the sandbox's processes (bubblewrap's layers and the interpreter); 0 when none runs."""
        child = self._resources.child
        if child is None:
            return 0
        return sum(_resident_bytes(pid) for pid in {child.process.pid, child.inner, child.worker} - {None})

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self._finalizer()

    @property
    def closed(self) -> bool:
        return not self._finalizer.still_active()

    def reset(self, state: ServiceState) -> None:
        """Install ``state``; nothing crosses the pipe when the child already holds exactly this JSON. A state is a
        value, encoded once per object (:data:`_state_json`): the gate resets each service to the same checkpoint
        once per mutation of a step."""
        self._mirror = self._reset_mirror = _state_json(state)
        self._current = self._reset_state = state
        self.version += 1
        self._state_owner = state.service_id
        self._install_mirror()

    def restore(self) -> None:
        """Go back to the state of the last :meth:`reset`, without encoding it again."""
        if self._mirror is not self._reset_mirror:
            self._mirror, self._current = self._reset_mirror, self._reset_state
            self.version += 1
        self._install_mirror()

    @property
    def changed(self) -> bool:
        """Whether a call changed the hosted state since the last :meth:`reset` or :meth:`restore`."""
        return self._mirror is not self._reset_mirror

    def _install_mirror(self) -> None:
        if self._resources.child is None:
            if not self._lazy:  # a lazy child starts at the next call, with the mirror installed
                self._start()
            return
        if not self._trusted and self._calls_since_start:
            # Untrusted code may have changed the interpreter itself (patched modules, hidden globals):
            # every episode of it starts in a fresh process.
            self._stop_child()
            self._start()
            return
        if self._replace_if_tampered():
            return
        if self._mirror == self._installed:
            self._restore_pending = self._restore_pending or self._child_dirty
            self._child_dirty = False
            return
        try:
            self._exchange(self._reset_request(), self._limits.call_timeout_s)
        except (_ChildTimeout, _ChildDied, _ProtocolViolation) as exc:
            if isinstance(exc, _ProtocolViolation):
                self.violations.append(str(exc))
            self._stop_child()
            self._start()
            return
        self._installed = self._mirror
        self._child_dirty = self._restore_pending = False

    def state(self) -> ServiceState:
        """The hosted state, as a value (never to be changed in place: take a ``snapshot()`` to change it): the
        object the last reset was given while no call changed it, else the one the last change was built into."""
        if self._current is None:
            self._current = ServiceState.model_validate_json(self._held_json())
        return self._current

    def _held_json(self) -> bytes:
        """The JSON of the hosted state, written out from it when a reply gave only the tables it changed."""
        if self._mirror is None:
            assert self._current is not None
            self._mirror = _state_json(self._current)
        return self._mirror

    def call(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        if self.closed:
            raise RuntimeError("the executor is closed")
        try:
            request = _encode({"op": "call", "tool": tool, "args": args, "restore": self._restore_pending})
        except (TypeError, ValueError) as exc:
            return error(INVALID_ARGUMENTS, f"arguments are not JSON: {exc}")
        if self._resources.child is None:
            try:
                self._start()
            except SandboxLoadError as exc:
                verb = "started" if self._lazy and not self.starts else "restarted"
                return error(INTERNAL_ERROR, f"the service could not be {verb}: {exc}")
        limit = self._limits.call_timeout_s
        self._calls_since_start += 1
        try:
            self._replace_if_tampered()
        except SandboxLoadError as exc:
            return error(INTERNAL_ERROR, f"the service could not be restarted: {exc}")
        try:
            try:
                reply, state = self._exchange(request, limit)
            except _StaleFrame as exc:
                self.violations.append(str(exc))
                self._stop_child()
                self._start()
                reply, state = self._exchange(request, limit)
            self._restore_pending = False
        except SandboxLoadError as exc:
            return error(INTERNAL_ERROR, f"the service could not be restarted: {exc}")
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
        except _ProtocolViolation as exc:
            self.violations.append(str(exc))
            self._stop_child()
            return error(
                SANDBOX_VIOLATION,
                f"tool {tool!r}: the service broke the sandbox protocol ({exc}); the service restarts "
                "with its last good state",
            )
        if not reply.get("ok"):
            failure = reply.get("failure")
            return error(_FAILURE_CODES.get(failure, INTERNAL_ERROR), f"tool {tool!r}: {reply.get('message')}")
        result = reply.get("result")
        if not is_envelope(result):
            self._rollback()
            return error(INTERNAL_ERROR, f"tool {tool!r} returned a non-envelope value: {_preview(result)}")
        if state is not None:
            self._mirror, self._current = state
            self.version += 1
            self._child_dirty = True
        return result

    def _replace_if_tampered(self) -> bool:
        """A child that wrote outside a frame (or died) since its last reply is replaced by a fresh one
        holding the mirror, so this call neither reads a stale frame nor fails for an earlier call's deed."""
        child = self._resources.child
        assert child is not None
        try:
            self._refuse_stray_output(child)
        except _ProtocolViolation as exc:
            self.violations.append(str(exc))
            self._stop_child()
            self._start()
            return True
        return False

    def _reset_request(self) -> bytes:
        return b'{"op":"reset","state":' + self._held_json() + b"}\n"

    def _rollback(self) -> None:
        try:
            self._exchange(_encode({"op": "rollback"}), self._limits.call_timeout_s)
        except (_ChildTimeout, _ChildDied, _ProtocolViolation):
            self._stop_child()

    def _argv(self) -> list[str]:
        python = isolation.interpreter()
        if self._namespace_layers:
            return isolation.bubblewrap_argv(python, str(WORKER_PATH), self._config["scratch"], scratch_mb=FILE_SIZE_MB)
        return [python, "-S", "-s", "-P", "-B", str(WORKER_PATH)]

    def _start(self) -> None:
        """Start a child, load the module and install the mirrored state."""
        if self._resources.scratch is None:
            self._resources.scratch = ScratchFolder(self._scratch_name, self._limits.scratch_root)
            self._config["scratch"] = str(self._resources.scratch.path.resolve())
        stderr = tempfile.TemporaryFile()  # noqa: SIM115 - closed by _Child.stop
        env = {"PYTHONHASHSEED": "0", "LC_ALL": "C.UTF-8", "HOME": self._config["scratch"],
               "PATH": os.defpath}
        process = _spawner().submit(
            subprocess.Popen,
            self._argv(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            cwd=self.scratch_dir,
            env=env,
            close_fds=True,
            bufsize=0,
            start_new_session=True,
        ).result()
        assert process.stdin is not None and process.stdout is not None
        os.set_blocking(process.stdin.fileno(), False)
        poller = select.poll()
        poller.register(process.stdout.fileno(), select.POLLIN)
        self._resources.child = _Child(process, stderr, poller)
        self._request_id = 0
        try:
            reply, _ = self._exchange(_encode(self._config), max(self._limits.call_timeout_s, STARTUP_TIMEOUT_S),
                                      with_id=False)
            self._resources.child.locate()
            if reply.get("ok"):
                self.layers = self._namespace_layers + list(reply.get("layers", []))
                reply, _ = self._exchange(self._reset_request(), STARTUP_TIMEOUT_S)
        except _ChildTimeout:
            self._stop_child()
            raise SandboxLoadError("the service module did not load within the time limit") from None
        except (_ChildDied, _ProtocolViolation) as exc:
            self._stop_child()
            raise SandboxLoadError(f"the service module failed to load: {exc}",
                                   violation=isinstance(exc, _ProtocolViolation)) from None
        if not reply.get("ok"):
            self._stop_child()
            raise SandboxLoadError(f"the service module failed to load: {_preview(str(reply.get('message')))}",
                                   violation=reply.get("failure") == "violation")
        self._installed = self._held_json()
        self._child_dirty = self._restore_pending = False
        self._calls_since_start = 0
        self.starts += 1

    def _stop_child(self) -> None:
        if self._resources.child is not None:
            self._resources.child.stop()
            self._resources.child = None

    def _exchange(self, request: bytes, timeout_s: float, *,
                  with_id: bool = True) -> tuple[dict[str, Any], tuple[bytes | None, ServiceState] | None]:
        """Send ``request`` (a JSON line) and read its frame: the reply and the new state (its JSON, None when the
        reply gave only the tables it changed, and the checked state), or None when the state did not change."""
        child = self._resources.child
        assert child is not None and child.process.stdin is not None
        deadline = time.monotonic() + timeout_s
        if with_id:
            self._request_id += 1
            request = b'{"id":%d,' % self._request_id + request[1:]
        self._write(child, request, deadline)
        header = self._read_header(child, deadline)
        try:
            tag, request_id, reply_size, state_size = header.split(b" ")
            request_id, reply_size, state_size = int(request_id), int(reply_size), int(state_size)
        except ValueError:
            raise _ProtocolViolation(f"malformed reply header {_preview(bytes(header))}") from None
        if tag == b"CW" and 0 <= request_id < self._request_id:
            raise _StaleFrame(f"a frame for request {request_id} arrived while request {self._request_id} waited")
        if tag != b"CW" or request_id != self._request_id:
            raise _ProtocolViolation(f"reply header {_preview(bytes(header))} does not answer request "
                                     f"{self._request_id}")
        limit = self._limits.max_reply_mb * 1024 * 1024
        if not 0 <= reply_size + state_size <= limit or reply_size < 0 or state_size < 0:
            raise _ProtocolViolation(f"reply of {reply_size + state_size} bytes exceeds the "
                                     f"{self._limits.max_reply_mb} MB limit")
        body = self._read_exactly(child, reply_size + state_size, deadline)
        items = body.count(b",") + body.count(b"{") + body.count(b"[")  # an upper bound on values to decode
        if items > self._limits.max_reply_items:
            raise _ProtocolViolation(f"reply of about {items} JSON values exceeds the limit of "
                                     f"{self._limits.max_reply_items}")
        try:
            reply = json.loads(body[:reply_size])
        except (ValueError, RecursionError) as exc:  # RecursionError: a forged frame nested too deeply
            raise _ProtocolViolation(f"reply is not JSON: {exc}") from None
        if not isinstance(reply, dict):
            raise _ProtocolViolation(f"reply is not an object: {_preview(reply)}")
        state = body[reply_size:]
        if not state:
            return reply, None
        if reply.get("changed") == "tables":
            return reply, (None, self._changed_tables(state))
        return reply, (state, self._check_state(state))

    def _changed_tables(self, change: bytes) -> ServiceState:
        """The hosted state with the tables a reply changed (whole, and checked as a state's are) and its counters.

        The tables it names must be the state's: a reply that adds or removes tables sends the whole state."""
        try:
            patch = _TablesChange.model_validate_json(change)
        except (pydantic.ValidationError, RecursionError) as exc:
            raise _ProtocolViolation(f"the tables sent back are not a valid change: {_preview(str(exc))}") from None
        before = self.state()
        unknown = sorted(set(patch.tables) - set(before.tables))
        if unknown:
            raise _ProtocolViolation(f"the change sent back names tables the state lacks: {_preview(unknown)}")
        return ServiceState.model_construct(
            before.model_fields_set, service_id=before.service_id,
            tables={entity: patch.tables.get(entity, table) for entity, table in before.tables.items()},
            counters=patch.counters)

    def _check_state(self, state: bytes) -> ServiceState:
        try:
            parsed = ServiceState.model_validate_json(state)
        except (pydantic.ValidationError, RecursionError) as exc:
            raise _ProtocolViolation(f"the state sent back is not a valid service state: "
                                     f"{_preview(str(exc))}") from None
        if parsed.service_id != self._state_owner:
            raise _ProtocolViolation(f"the state sent back belongs to {parsed.service_id!r}")
        return parsed

    @staticmethod
    def _refuse_stray_output(child: _Child) -> None:
        """Between frames the pipe must be silent: anything there was written outside the protocol.

        A pipe at end of file is left alone: the exchange that follows reports the death.
        """
        if not child.buffer and child.poller.poll(0):
            assert child.process.stdout is not None
            child.buffer += os.read(child.process.stdout.fileno(), 80)
        if child.buffer:
            raise _ProtocolViolation(f"unexpected output between replies: {_preview(bytes(child.buffer[:80]))}")

    @staticmethod
    def _write(child: _Child, data: bytes, deadline: float) -> None:
        """Write without blocking past the deadline: a child that stops reading cannot hang the parent."""
        assert child.process.stdin is not None
        fd = child.process.stdin.fileno()
        view = memoryview(data)
        poller = select.poll()
        poller.register(fd, select.POLLOUT)
        while view:
            try:
                view = view[os.write(fd, view) :]
                continue
            except BlockingIOError:
                pass
            except OSError:
                raise _ChildDied(child.death_reason()) from None
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not poller.poll(math.ceil(remaining * 1000)):
                raise _ChildTimeout

    @staticmethod
    def _fill(child: _Child, deadline: float) -> None:
        assert child.process.stdout is not None
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not child.poller.poll(math.ceil(remaining * 1000)):
            raise _ChildTimeout
        chunk = os.read(child.process.stdout.fileno(), 1 << 20)
        if not chunk:
            raise _ChildDied(child.death_reason())
        child.buffer += chunk

    @classmethod
    def _read_header(cls, child: _Child, deadline: float) -> bytes:
        while (end := child.buffer.find(b"\n", 0, MAX_HEADER_BYTES)) < 0:
            if len(child.buffer) >= MAX_HEADER_BYTES:
                raise _ProtocolViolation(f"malformed reply header {_preview(bytes(child.buffer[:MAX_HEADER_BYTES]))}")
            cls._fill(child, deadline)
        header = bytes(child.buffer[:end])
        del child.buffer[: end + 1]
        return header

    @classmethod
    def _read_exactly(cls, child: _Child, size: int, deadline: float) -> bytes:
        while len(child.buffer) < size:
            cls._fill(child, deadline)
        body = bytes(child.buffer[:size])
        del child.buffer[:size]
        return body


def trusted_executor(source: str, limits: SandboxLimits = DEFAULT_LIMITS) -> SandboxedExecutor:
    """An executor factory for modules of CompoWorld's offline synthesizer (they run without bubblewrap too)."""
    return SandboxedExecutor(source, limits, trusted=True)


def _safe_name(service_id: str) -> str:
    """A service id fit for a directory name prefix."""
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in service_id)[:40] or "service"
