"""The sandbox child program: hosts one service module behind a framed pipe protocol.

Started by :class:`compoworld_assets.engine.runtime.sandbox.SandboxedExecutor` as
``python -S -s -P -B worker.py``, inside bubblewrap's namespaces where they are available
(:mod:`compoworld_assets.engine.runtime.isolation`), with a cleared environment and its cwd in
a scratch directory. It imports nothing but the standard library.

Protocol. Requests are JSON lines on stdin. The first is the configuration (``source``,
``filename``, ``scratch``, ``cpu_seconds``, ``memory_mb``, ``file_size_mb``,
``max_open_files``, ``allowed_imports`` (what service code may import), ``loadable`` (the top-level names of
the modules those import in turn), ``seccomp`` (the BPF program, base64)); then
``{"id", "op": "reset", "state"}`` (the child keeps a pristine copy of that state),
``{"id", "op": "call", "tool", "args", "restore"}`` (``restore`` true: first go back to the
pristine copy) and ``{"id", "op": "rollback"}`` (undo the last call). Every reply is one frame
on the protocol fd: a header line ``CW <id> <reply bytes> <state bytes>`` followed by the reply
JSON (``{"ok": true, ...}`` or ``{"ok": false, "failure": kind, "message"}``, kind one of
``violation``, ``exception``, ``resource``, ``protocol``) and, when a call changed the state,
what it changed: with ``"changed": "tables"`` the tables the call changed, whole, and the counters
(``{"tables": {entity: table}, "counters": ...}``: a write touches one or two of a service's tables, and
the whole state was most of a paper-scale task's round trips); with ``"changed": true`` the whole new
state, when the call added, removed or reordered tables, changed the service id or left the state in a
shape that is not tables of records. The configuration is answered with id 0.

Service code runs in this interpreter and can reach the protocol fds, so the parent trusts no
frame: it checks ids, sizes, JSON and the state's schema, and treats anything else on the pipe
as a violation that costs the child its life. The boundary is the kernel's: namespaces, the
seccomp filter this program installs before it runs any service code, and resource limits.
The audit hook and the ``__import__`` guard that follow only turn the common mistakes
(``import socket``, ``open('/etc/passwd')``) into readable errors before the kernel says EPERM.
"""

import base64
import builtins
import errno
import json
import marshal
import os
import resource
import signal
import sys

PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
# errno values that mean the kernel (seccomp, a read-only mount, rlimits) refused the operation.
KERNEL_REFUSALS = {errno.EPERM: "violation", errno.EACCES: "violation", errno.EROFS: "violation",
                   errno.EFBIG: "resource"}
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC

# Audit events denied outright (exact names and prefixes).
DENIED_EVENTS = frozenset(
    {
        "os.system",
        "os.fork",
        "os.forkpty",
        "os.kill",
        "os.killpg",
        "os.chdir",
        "os.fchdir",
        "os.chroot",
        "os.posix_spawn",
        "os.spawn",
        "os.startfile",
        "subprocess.Popen",
        "pty.spawn",
        "signal.pthread_kill",
    }
)
DENIED_PREFIXES = ("socket.", "ctypes.", "os.exec", "_posixsubprocess", "winreg.", "_winapi.")
# Audit events that may run only while the worker (not service code) is in control.
WORKER_ONLY_EVENTS = frozenset({"resource.setrlimit", "resource.prlimit"})
# Audit events whose path arguments must lie inside the scratch directory.
WRITE_EVENTS = frozenset(
    {
        "os.remove",
        "os.rename",
        "os.mkdir",
        "os.rmdir",
        "os.chmod",
        "os.chown",
        "os.link",
        "os.symlink",
        "os.truncate",
        "os.utime",
        "os.chflags",
        "os.lchflags",
        "os.setxattr",
        "os.removexattr",
        "shutil.rmtree",
        "shutil.chown",
    }
)
READ_EVENTS = frozenset({"os.listdir", "os.scandir", "glob.glob", "os.listxattr", "os.getxattr"})


class SandboxViolation(BaseException):
    """Raised by the audit hook. A BaseException so that ``except Exception`` cannot hide it."""


class Sandbox:
    """The audit policy and the service module it guards."""

    def __init__(self, config):
        self.scratch = os.path.realpath(config["scratch"])
        self.read_roots = [self.scratch] + [os.path.realpath(p) for p in sys.path if p]
        # What service code may import (C code such as datetime.strptime imports through the caller's
        # __import__, so the modules it needs are in the list), and what may be loaded: those and every module
        # they import in turn. Modules load when first imported, after this hook is in.
        self.importable = frozenset(m.partition(".")[0] for m in config["allowed_imports"])
        self.loadable = self.importable | frozenset(config["loadable"])
        self.violations = []
        self.in_service = False

    def deny(self, what):
        self.violations.append(what)
        raise SandboxViolation(f"sandbox violation: {what}")

    def inside(self, path, roots):
        if isinstance(path, int):
            return False
        resolved = os.path.realpath(os.fsdecode(os.fspath(path)))
        return any(resolved == root or resolved.startswith(root + os.sep) for root in roots)

    def audit(self, event, args):
        if event == "open":
            path, mode, flags = args
            writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or bool(flags & WRITE_FLAGS)
            roots = [self.scratch] if writing else self.read_roots
            if path is not None and not self.inside(path, roots):
                action = "writing" if writing else "reading"
                self.deny(f"open {path!r} for {action} outside the scratch directory")
        elif event == "import":
            top = args[0].partition(".")[0]
            if top not in self.loadable:
                self.deny(f"import {args[0]!r} is not in the module allowlist")
        elif (
            event in DENIED_EVENTS
            or event.startswith(DENIED_PREFIXES)
            or (event in WORKER_ONLY_EVENTS and self.in_service)
        ):
            self.deny(f"{event} is not allowed")
        elif event in WRITE_EVENTS or event in READ_EVENTS:
            roots = [self.scratch] if event in WRITE_EVENTS else self.read_roots
            for arg in args:
                if isinstance(arg, (str, bytes, os.PathLike)) and not self.inside(arg, roots):
                    self.deny(f"{event} on {arg!r} outside the scratch directory")

    def guarded_import(self, name, globals=None, locals=None, fromlist=(), level=0):
        if level != 0:
            self.deny(f"relative import {name!r}")
        if name.partition(".")[0] not in self.importable:
            self.deny(f"import {name!r} is not in the module allowlist")
        return __import__(name, globals, locals, fromlist, level)

    def load(self, source, filename):
        service_builtins = dict(builtins.__dict__)
        service_builtins["__import__"] = self.guarded_import
        namespace = {"__name__": "service_module", "__builtins__": service_builtins}
        self.in_service = True
        try:
            exec(compile(source, filename, "exec"), namespace)  # noqa: S102 - running it is the point
        finally:
            self.in_service = False
        handle = namespace.get("handle")
        if not callable(handle):
            raise TypeError("the module defines no callable handle(state, tool, args)")
        return handle


def install_seccomp(program):
    """Load the parent's BPF filter for this process (irrevocable; no_new_privs first, as required)."""
    import ctypes

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    code = ctypes.create_string_buffer(program, len(program))
    fprog = SockFprog(len(program) // 8, ctypes.addressof(code))
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(fprog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP) failed")


def set_limits(config):
    mb = 1024 * 1024
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # oversized writes fail with EFBIG instead of killing
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_FSIZE, (config["file_size_mb"] * mb, config["file_size_mb"] * mb))
    resource.setrlimit(resource.RLIMIT_NOFILE, (config["max_open_files"], config["max_open_files"]))
    resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))
    resource.setrlimit(resource.RLIMIT_AS, (config["memory_mb"] * mb, config["memory_mb"] * mb))
    arm_cpu_limit(config["cpu_seconds"])


def arm_cpu_limit(cpu_seconds):
    """Give the next call ``cpu_seconds`` of CPU on top of what the process has used so far.

    The hard limit stays unlimited so the soft limit can be raised again before every call;
    the parent's wall-clock timeout is the backstop.
    """
    usage = resource.getrusage(resource.RUSAGE_SELF)
    soft = int(usage.ru_utime + usage.ru_stime) + 1 + cpu_seconds
    resource.setrlimit(resource.RLIMIT_CPU, (soft, resource.RLIM_INFINITY))


def copy_state(state):
    """A deep copy; marshal is several times faster than copy.deepcopy for JSON data."""
    try:
        return marshal.loads(marshal.dumps(state))
    except ValueError:
        import copy

        return copy.deepcopy(state)


class Worker:
    def __init__(self, sandbox, handle, cpu_seconds):
        self.sandbox = sandbox
        self.handle = handle
        self.cpu_seconds = cpu_seconds
        self.state = {"service_id": "", "tables": {}, "counters": {}}
        self.installed = copy_state(self.state)
        self.previous = self.installed
        self.pristine = True  # ``state`` equals ``installed``
        self.changed = None  # the tables the last changing call changed (changed_tables), None: see the state

    # ``installed`` and ``previous`` are never mutated (only ``state`` is handed to the service), so
    # while ``state`` is pristine ``previous`` is the pristine copy itself and a call copies nothing;
    # ``state`` never shares objects with either.
    def dispatch(self, request):
        op = request.get("op")
        if op == "call":
            if request.get("restore") and not self.pristine:
                self.state = copy_state(self.installed)
                self.pristine = True
            return self.call(request["tool"], request["args"])
        if op == "reset":
            self.state = request["state"]
            self.installed = copy_state(self.state)
            self.previous = self.installed
            self.pristine = True
            return {"ok": True}
        if op == "rollback":
            self.undo()
            return {"ok": True}
        return {"ok": False, "failure": "protocol", "message": f"unknown op {op!r}"}

    def undo(self):
        """Go back to the state before the last call."""
        self.state = copy_state(self.previous)
        self.pristine = self.previous is self.installed

    def call(self, tool, args):
        self.previous = self.installed if self.pristine else copy_state(self.state)
        self.sandbox.violations.clear()
        arm_cpu_limit(self.cpu_seconds)
        self.sandbox.in_service = True
        try:
            result = self.handle(self.state, tool, args)
            failure = None
        except MemoryError:
            failure = ("resource", "MemoryError: the tool exceeded the sandbox memory limit")
        except OSError as exc:
            kind = KERNEL_REFUSALS.get(exc.errno, "exception")
            failure = (kind, f"{type(exc).__name__}: {exc}")
        except BaseException as exc:  # noqa: BLE001 - every tool failure becomes a reply
            failure = ("exception", f"{type(exc).__name__}: {exc}")
        finally:
            self.sandbox.in_service = False
        if self.sandbox.violations:
            failure = ("violation", f"sandbox violation: {self.sandbox.violations[0]}")
        if failure is not None:
            self.undo()
            return {"ok": False, "failure": failure[0], "message": failure[1]}
        reply = {"ok": True, "result": result}
        if self.state != self.previous:
            self.changed = changed_tables(self.previous, self.state)
            reply["changed"] = "tables" if self.changed is not None else True
            self.pristine = False
        return reply

    def change(self, reply):
        """What the frame of a changing ``reply`` carries: the changed tables and the counters, or the state."""
        if reply.get("changed") == "tables":
            return {"tables": self.changed, "counters": self.state["counters"]}
        return self.state


def _tables_of_records(state):
    if not isinstance(state, dict) or not isinstance(state.get("tables"), dict):
        return None
    tables = state["tables"]
    return tables if all(isinstance(table, dict) for table in tables.values()) else None


def changed_tables(before, after):
    """The tables of ``after`` that differ from ``before``'s, by entity; None when the two do not have the same
    service id and the same tables in the same order (then only the whole state says what changed)."""
    old, new = _tables_of_records(before), _tables_of_records(after)
    if old is None or new is None or before.get("service_id") != after.get("service_id") \
            or list(old) != list(new) or not isinstance(after.get("counters"), dict):
        return None
    return {entity: table for entity, table in new.items() if table != old[entity]}


def encode(reply):
    return json.dumps(reply, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


def frame(request_id, reply, state=b""):
    """One reply frame: ``CW <id> <len(reply)> <len(state)>`` then the reply and the state."""
    return b"CW %d %d %d\n" % (request_id, len(reply), len(state)) + reply + state


def redirect_stdio():
    """Keep the protocol on private fds; service prints go to stderr, service input gets EOF."""
    proto_in = os.fdopen(os.dup(0), "rb")
    proto_out = os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    return proto_in, proto_out


def send(proto_out, data):
    view = memoryview(data)
    while view:
        view = view[os.write(proto_out, view):]


def serve(worker, proto_in, proto_out):
    for line in proto_in:
        request_id = 0
        try:
            request = json.loads(line)
            request_id = int(request["id"])
            reply = worker.dispatch(request)
        except (ValueError, KeyError, TypeError) as exc:
            reply = {"ok": False, "failure": "protocol", "message": f"bad request: {exc}"}
        try:
            data = frame(request_id, encode(reply), encode(worker.change(reply)) if reply.get("changed") else b"")
        except (TypeError, ValueError, RecursionError) as exc:
            worker.undo()
            data = frame(request_id, encode({
                "ok": False,
                "failure": "exception",
                "message": f"the tool returned or stored data that is not JSON: {exc}",
            }))
        send(proto_out, data)


def start(proto_in, proto_out):
    config = json.loads(proto_in.readline())
    os.chdir(config["scratch"])
    set_limits(config)
    layers = ["rlimit_cpu", "rlimit_as", "rlimit_fsize", "rlimit_nofile", "rlimit_nproc", "rlimit_core"]
    install_seccomp(base64.b64decode(config["seccomp"]))
    layers.append("seccomp")
    sandbox = Sandbox(config)
    sys.addaudithook(sandbox.audit)
    layers += ["audit_hook", "import_allowlist"]
    try:
        handle = sandbox.load(config["source"], config["filename"])
    except BaseException as exc:  # noqa: BLE001 - report why the module did not load
        refused = isinstance(exc, OSError) and KERNEL_REFUSALS.get(exc.errno) == "violation"
        kind = "violation" if sandbox.violations or refused else "exception"
        message = (
            f"sandbox violation: {sandbox.violations[0]}"
            if sandbox.violations
            else f"{type(exc).__name__}: {exc}"
        )
        send(proto_out, frame(0, encode({"ok": False, "failure": kind, "message": message})))
        return None
    send(proto_out, frame(0, encode({"ok": True, "layers": layers})))
    return Worker(sandbox, handle, config["cpu_seconds"])


def main():
    proto_in, proto_out = redirect_stdio()
    worker = start(proto_in, proto_out)
    if worker is not None:
        serve(worker, proto_in, proto_out)


if __name__ == "__main__":
    main()
