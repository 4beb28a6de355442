from __future__ import annotations

import errno
import os
import time

import pytest

from compoworld_assets.engine.runtime.executor import SandboxLimits
from compoworld_assets.engine.runtime.sandbox import (
    ALLOWED_IMPORTS,
    SUPPORT_IMPORTS,
    SandboxedExecutor,
    SandboxLoadError,
    loadable_modules,
)
from compoworld_assets.engine.runtime.state import ServiceState

SOURCE = """
import datetime
import typing

def ok(data):
    return {"success": True, "data": data}

def handle(state, tool, args):
    counters = state["counters"]
    if tool == "bump":
        counters["n"] = counters.get("n", 0) + 1
        return ok(counters["n"])
    if tool == "echo":
        return ok(args)
    if tool == "parse_date":
        return ok(datetime.datetime.strptime(args["day"], "%Y-%m-%d").date().isoformat())
    counters["n"] = -1  # every tool below fails after touching the state
    if tool == "raise":
        raise KeyError("no such record")
    if tool == "not_envelope":
        return [1, 2]
    if tool == "loop":
        while True:
            pass
    if tool == "allocate":
        return ok(len(bytearray(2 * 1024 ** 3)))
    if tool == "socket":
        import socket
        return ok(socket.gethostname())
    if tool == "socket_bypass":
        real_import = typing.__dict__["__builtins__"]["__import__"]
        return ok(str(real_import("socket")))
    if tool == "write_file":
        with open(args["path"], "w") as f:
            f.write("escaped")
        return ok(True)
    if tool == "read_file":
        with open(args["path"]) as f:
            return ok(f.read())
    if tool == "fill_scratch":
        written = 0
        try:
            for i in range(args["files"]):
                with open(f"fill_{i}.bin", "wb") as f:
                    f.write(b"x" * 1024 * 1024)
                written += 1
        except OSError as exc:
            return ok([written, exc.errno])
        return ok([written, None])
    if tool == "read_outside":
        return ok(open("/etc/hostname").read())
    if tool == "subprocess":
        import subprocess
        return ok(subprocess.run(["true"]).returncode)
    if tool == "os_system":
        return ok(typing.sys.modules["os"].system("true"))
    if tool == "os_spawn":
        return ok(typing.sys.modules["os"].posix_spawn("/bin/true", ["true"], {}))
    if tool == "import_os":
        import os
        return ok(os.getcwd())
    if tool == "swallow":
        try:
            import socket
        except BaseException:
            pass
        return ok("swallowed")
    if tool == "not_json":
        return ok(object())
"""

FAST = SandboxLimits(call_timeout_s=2.0, memory_mb=256)


@pytest.fixture
def executor(tmp_path):
    with SandboxedExecutor(
        SOURCE, SandboxLimits(call_timeout_s=2.0, memory_mb=256, scratch_root=tmp_path), service_id="svc"
    ) as ex:
        yield ex


def process_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def record_state(n: int = 0) -> ServiceState:
    return ServiceState(
        service_id="svc", tables={"Item": {"it_1": {"id": "it_1", "name": "Lamp"}}}, counters={"n": n}
    )


def test_state_reset_and_get_round_trip(executor):
    state = record_state(5)
    executor.reset(state)
    assert executor.state() == state
    assert executor.call("bump", {}) == {"success": True, "data": 6}
    assert executor.state().counters == {"n": 6}
    copy = executor.state().snapshot()  # states are values: a copy to change
    copy.counters["n"] = 100
    assert executor.state().counters == {"n": 6}
    assert executor.call("echo", {"a": [1, {"b": None}]}) == {
        "success": True,
        "data": {"a": [1, {"b": None}]},
    }


def test_allowed_modules_work_including_lazy_internals(executor):
    assert executor.call("parse_date", {"day": "2026-03-04"}) == {"success": True, "data": "2026-03-04"}


def test_layers_are_reported(executor):
    assert {"audit_hook", "import_allowlist", "rlimit_as", "rlimit_cpu", "rlimit_nproc"} <= set(
        executor.layers
    )
    if os.geteuid() == 0:
        assert "network_namespace" in executor.layers


@pytest.mark.parametrize(
    ("tool", "args", "code", "needle"),
    [
        ("raise", {}, "internal_error", "KeyError: 'no such record'"),
        ("not_envelope", {}, "internal_error", "non-envelope value: [1, 2]"),
        ("not_json", {}, "internal_error", "not JSON"),
        ("allocate", {}, "resource_limit", "MemoryError"),
        ("socket", {}, "sandbox_violation", "import 'socket'"),
        ("socket_bypass", {}, "sandbox_violation", "import 'socket'"),
        ("write_file", {"path": "/tmp/cw-sandbox-escape.txt"}, "sandbox_violation", "for writing outside"),
        ("write_file", {"path": "../escape.txt"}, "sandbox_violation", "for writing outside"),
        ("read_outside", {}, "sandbox_violation", "for reading outside"),
        ("subprocess", {}, "sandbox_violation", "import 'subprocess'"),
        ("os_system", {}, "sandbox_violation", "os.system"),
        ("os_spawn", {}, "sandbox_violation", "os.posix_spawn"),
        ("import_os", {}, "sandbox_violation", "import 'os'"),
        ("swallow", {}, "sandbox_violation", "import 'socket'"),
    ],
)
def test_failures_are_contained_and_rolled_back(executor, tool, args, code, needle):
    executor.reset(record_state(1))
    result = executor.call(tool, args)
    assert result["success"] is False
    assert result["error"]["code"] == code
    assert needle in result["error"]["message"]
    assert executor.state() == record_state(1)
    assert executor.call("bump", {}) == {"success": True, "data": 2}
    assert not (executor.scratch_dir.parent / "escape.txt").exists()
    assert not os.path.exists("/tmp/cw-sandbox-escape.txt")


def test_writing_inside_the_scratch_dir_is_allowed(executor):
    assert executor.call("write_file", {"path": "note.txt"}) == {"success": True, "data": True}
    assert executor.call("read_file", {"path": "note.txt"}) == {"success": True, "data": "escaped"}
    assert executor.call("write_file", {"path": str(executor.scratch_dir / "abs.txt")})["success"]


def test_the_scratch_dir_is_capped(executor):
    """Under bubblewrap the scratch directory is a 64 MB tmpfs: filling it fails with ENOSPC, not the host's disk."""
    if "bubblewrap" not in executor.layers:
        pytest.skip("bubblewrap is not available here")
    written, errno_value = executor.call("fill_scratch", {"files": 100})["data"]
    assert written <= 64 and errno_value == errno.ENOSPC
    assert list(executor.scratch_dir.iterdir()) == []  # the host's directory is only the mount point


def test_timeout_restarts_with_last_good_state(executor):
    executor.reset(record_state(3))
    executor.call("bump", {})
    started = time.monotonic()
    result = executor.call("loop", {})
    assert time.monotonic() - started < 4
    assert result["error"]["code"] == "timeout" and "2s" in result["error"]["message"]
    assert executor.state().counters == {"n": 4}
    assert executor.call("bump", {}) == {"success": True, "data": 5}
    assert executor.starts == 2


def test_cpu_limit_kills_the_child_and_it_recovers(tmp_path):
    limits = SandboxLimits(cpu_seconds=1, call_timeout_s=20, scratch_root=tmp_path)
    with SandboxedExecutor(SOURCE, limits) as executor:
        executor.reset(record_state(7))
        result = executor.call("loop", {})
        assert result["error"]["code"] == "resource_limit"
        assert "CPU time limit" in result["error"]["message"]
        assert executor.call("bump", {}) == {"success": True, "data": 8}


@pytest.mark.parametrize(
    ("source", "needle"),
    [
        ("def handle(state, tool, args:\n    pass", "SyntaxError"),
        ("import os\ndef handle(state, tool, args):\n    pass", "import 'os'"),
        ("open('/tmp/cw-load-escape', 'w')\n", "outside the scratch directory"),
        ("handle = 3\n", "no callable handle"),
        ("raise ValueError('bad module')\n", "ValueError: bad module"),
    ],
)
def test_broken_modules_raise_a_clear_load_error(tmp_path, source, needle):
    with pytest.raises(SandboxLoadError, match="failed to load") as raised:
        SandboxedExecutor(source, SandboxLimits(scratch_root=tmp_path))
    assert needle in str(raised.value)
    assert list(tmp_path.iterdir()) == []


def test_close_ends_the_process_and_removes_the_scratch_dir(tmp_path):
    executor = SandboxedExecutor(SOURCE, SandboxLimits(scratch_root=tmp_path))
    pid = executor.pid
    scratch = executor.scratch_dir
    assert scratch.is_dir() and pid is not None
    executor.close()
    assert not process_exists(pid) and not scratch.exists() and executor.pid is None
    with pytest.raises(RuntimeError, match="closed"):
        executor.call("bump", {})


def test_garbage_collection_releases_the_process(tmp_path):
    executor = SandboxedExecutor(SOURCE, SandboxLimits(scratch_root=tmp_path))
    pid = executor.pid
    del executor
    assert not process_exists(pid)
    assert list(tmp_path.iterdir()) == []


def test_every_allowlisted_module_imports_and_works(tmp_path):
    source = f"import {', '.join(ALLOWED_IMPORTS[1:])}\n" + '''
@dataclasses.dataclass
class Line:
    amount: decimal.Decimal

def handle(state, tool, args):
    total = sum((Line(decimal.Decimal(a)).amount for a in args["amounts"]), decimal.Decimal("0"))
    return {"success": True, "data": [
        str(total), statistics.mean([1, 2, 3]), hashlib.sha256(b"x").hexdigest()[:8],
        random.Random(1).randint(0, 99), len(str(uuid.uuid4())), "\u00e9".encode("latin-1").decode("latin-1"),
    ]}
'''
    with SandboxedExecutor(source, SandboxLimits(scratch_root=tmp_path)) as executor:
        result = executor.call("sum", {"amounts": ["1.10", "2.05"]})
    assert result == {"success": True, "data": ["3.15", 2, "2d711642", 17, 36, "\u00e9"]}


IMPORT_AT_CALL = """
def handle(state, tool, args):
    module = __import__(args["name"], fromlist=["_"])
    return {"success": True, "data": module.__name__}
"""


@pytest.mark.parametrize("name", [*ALLOWED_IMPORTS, *SUPPORT_IMPORTS])
def test_each_allowed_module_loads_alone_during_a_call(tmp_path, name):
    """A child loads modules when its service imports them, after the audit hook is in: each allowed module, the
    first imported in its child, must load with everything it imports in turn."""
    with SandboxedExecutor(IMPORT_AT_CALL, SandboxLimits(scratch_root=tmp_path)) as executor:
        assert executor.call("load", {"name": name}) == {"success": True, "data": name}


def test_the_loadable_modules_are_what_the_allowed_ones_import_not_the_dangerous_ones():
    loadable = set(loadable_modules())
    assert {"dataclasses", "inspect", "statistics", "_strptime"} <= loadable  # allowed (builtins like time load at start)
    assert {"re", "tokenize", "org"} <= loadable  # imported by allowed modules; ``copy`` probes for ``org.python.core``
    assert not {"socket", "subprocess", "ctypes", "_posixsubprocess", "pty"} & loadable
