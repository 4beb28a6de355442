"""The operating-system boundary and the framed protocol, tested from code that has already disabled
the in-process audit hook (as hostile code can): whatever it then does, the kernel and the parent hold."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from compoworld_assets.engine.runtime import isolation, sandbox
from compoworld_assets.engine.runtime.executor import SandboxLimits
from compoworld_assets.engine.runtime.sandbox import (
    NAMESPACE_LAYERS,
    IsolationUnavailable,
    SandboxedExecutor,
    require_isolation,
)
from compoworld_assets.engine.runtime.scratch import OWNER_FILE
from compoworld_assets.engine.runtime.state import ServiceState
from resources.sandbox import SandboxResource

BWRAP = isolation.bubblewrap_support()
needs_bwrap = pytest.mark.skipif(
    not BWRAP.available and not os.environ.get("CI"), reason=f"bubblewrap unavailable: {BWRAP.reason}"
)

# The audit hook switched off from inside, then the real os module reached through an object graph.
UNHOOKED = '''
__import__.__self__.deny = lambda what: None
import typing
os = typing.sys.modules["os"]

def ok(data):
    return {"success": True, "data": data}

def handle(state, tool, args):
    counters = state["counters"]
    if tool == "bump":
        counters["n"] = counters.get("n", 0) + 1
        return ok(counters["n"])
    if tool == "probe":
        return ok({"pid": os.getpid(), "uid": os.getuid(), "env": dict(os.environ),
                   "procs": sorted(p for p in os.listdir("/proc") if p.isdigit()),
                   "root": sorted(os.listdir("/"))})
    if tool == "read":
        with open(args["path"], "rb") as f:
            return ok(f.read().decode("latin-1"))
    if tool == "write":
        with open(args["path"], "w") as f:
            f.write("pwned")
        return ok(True)
    if tool == "fork":
        return ok(os.fork())
    if tool == "kill_parent":
        os.kill(os.getppid(), 9)
        return ok(True)
    if tool == "flood":
        for fd in range(3, 64):
            try:
                os.write(fd, args["bytes"].encode("latin-1"))
            except OSError:
                pass
        counters["n"] = -1
        return ok("flooded")
    if tool == "forge_then_answer":
        for fd in range(3, 64):
            try:
                os.write(fd, b"CW 999 2 0\\n{}")
            except OSError:
                pass
        return ok("real")
    if tool == "huge":
        return ok("x" * (3 * 1024 * 1024))
    if tool == "wide":
        return ok([{}] * args["n"])
'''


def state(n: int = 0) -> ServiceState:
    return ServiceState(service_id="svc", counters={"n": n})


@pytest.fixture
def hostile(tmp_path):
    limits = SandboxLimits(call_timeout_s=5.0, memory_mb=256, scratch_root=tmp_path / "scratch", max_reply_mb=1)
    with SandboxedExecutor(UNHOOKED, limits, service_id="svc") as executor:
        executor.reset(state(1))
        yield executor


@pytest.fixture
def secret(monkeypatch):
    monkeypatch.setenv("CW_TEST_PROVIDER_KEY", "sk-canary-7f3a")
    return "sk-canary-7f3a"


@needs_bwrap
def test_bubblewrap_isolates_here_and_every_layer_is_reported(hostile):
    assert BWRAP.available, BWRAP.reason
    assert set(NAMESPACE_LAYERS) | {"seccomp", "rlimit_as", "rlimit_cpu"} <= set(hostile.layers)


@needs_bwrap
def test_the_child_sees_its_own_namespaces_and_no_secret(secret, tmp_path):
    limits = SandboxLimits(call_timeout_s=5.0, scratch_root=tmp_path)
    with SandboxedExecutor(UNHOOKED, limits, service_id="svc") as executor:
        seen = executor.call("probe", {})["data"]
        environ = executor.call("read", {"path": "/proc/1/environ"})["data"]
    assert seen["uid"] == isolation.SANDBOX_UID
    assert seen["pid"] <= 3 and len(seen["procs"]) <= 3  # bubblewrap's init and the worker only
    assert secret not in repr(seen["env"]) and secret not in environ
    assert "home" not in seen["root"] and "etc" not in seen["root"]


@needs_bwrap
@pytest.mark.parametrize("target", ["canary", "/etc/hostname", "/proc/self/root/etc/passwd"])
def test_files_outside_scratch_are_neither_read_nor_written(hostile, tmp_path, target):
    canary = tmp_path / "canary.duckdb"
    canary.write_text("intact")
    path = str(canary) if target == "canary" else target
    hostile.call("write", {"path": path})  # may "succeed" into the sandbox's private /tmp
    read = hostile.call("read", {"path": path})
    assert read["success"] is False or "intact" not in read["data"]
    assert canary.read_text() == "intact"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["canary.duckdb", "scratch"]


@pytest.mark.parametrize("tool", ["fork", "kill_parent"])
def test_processes_and_signals_are_refused_by_the_kernel(hostile, tool):
    result = hostile.call(tool, {})
    assert result["error"]["code"] == "sandbox_violation"
    assert "Operation not permitted" in result["error"]["message"]
    assert hostile.call("bump", {}) == {"success": True, "data": 2}


def test_garbage_on_the_protocol_fd_costs_the_child_and_nothing_else(hostile):
    starts = hostile.starts
    result = hostile.call("flood", {"bytes": "garbage\n" * 10})
    assert result["error"]["code"] == "sandbox_violation"
    assert "protocol" in result["error"]["message"]
    assert hostile.state() == state(1)  # the call's state change died with the child
    assert hostile.call("bump", {}) == {"success": True, "data": 2}
    assert hostile.starts == starts + 1 and hostile.violations


def test_a_forged_frame_is_refused_and_the_next_reply_is_not_late(hostile):
    result = hostile.call("forge_then_answer", {})
    assert result["error"]["code"] == "sandbox_violation"
    assert "does not answer request" in result["error"]["message"]
    for expected in (2, 3, 4):
        assert hostile.call("bump", {}) == {"success": True, "data": expected}


def test_a_reply_over_the_size_limit_is_refused_unread(hostile):
    result = hostile.call("huge", {})
    assert result["error"]["code"] == "sandbox_violation"
    assert "exceeds the 1 MB limit" in result["error"]["message"]
    assert hostile.call("bump", {}) == {"success": True, "data": 2}


def test_a_frame_forged_with_the_right_id_is_caught_before_the_next_call(hostile):
    """A well-formed forgery answers its own call (the module could have returned it anyway); the genuine
    frame behind it is stray output, so the next call gets a fresh child and its own, correct reply."""
    body = '{"ok":true,"result":{"success":true,"data":"forged"}}'
    forged = f"CW {hostile._request_id + 1} {len(body)} 0\n{body}"
    assert hostile.call("flood", {"bytes": forged}) == {"success": True, "data": "forged"}
    assert hostile.call("bump", {}) == {"success": True, "data": 2}
    assert hostile.violations  # the genuine frame behind the forgery was seen as stray or stale


def test_close_leaves_no_process_behind(tmp_path):
    executor = SandboxedExecutor(UNHOOKED, SandboxLimits(scratch_root=tmp_path))
    child = executor._resources.child
    pids = [p for p in (child.process.pid, child.inner, child.worker) if p is not None]
    executor.close()
    for pid in pids:
        assert not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text().split()[2]


def test_untrusted_modules_are_refused_without_bubblewrap_unless_opted_in(monkeypatch, tmp_path):
    missing = isolation.IsolationSupport(False, "bubblewrap (bwrap) is not installed")
    monkeypatch.setattr(isolation, "bubblewrap_support", lambda: missing)
    limits = SandboxLimits(scratch_root=tmp_path)
    with pytest.raises(IsolationUnavailable, match="not installed.*allow_unisolated"):
        SandboxedExecutor(UNHOOKED, limits)
    with pytest.raises(IsolationUnavailable):
        SandboxResource(scratch_root=str(tmp_path)).executor_factory(trusted=False)
    assert require_isolation(SandboxLimits(allow_unisolated=True)) == []
    with SandboxedExecutor(UNHOOKED, limits, trusted=True) as trusted:
        assert "seccomp" in trusted.layers and "bubblewrap" not in trusted.layers
        assert trusted.call("fork", {})["error"]["code"] == "sandbox_violation"
    with SandboxedExecutor(UNHOOKED, SandboxLimits(scratch_root=tmp_path, allow_unisolated=True)) as opted:
        assert opted.call("bump", {}) == {"success": True, "data": 1}


UNPRIVILEGED_PYTHON = "/usr/bin/python3"


@needs_bwrap
@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv") or not os.path.exists(UNPRIVILEGED_PYTHON),
                    reason="needs root (to drop to an unprivileged user), setpriv and a system python3")
def test_the_worker_runs_confined_for_an_unprivileged_user_too():
    """The same bwrap command line and worker, started by uid 65534 through unprivileged user namespaces."""
    with tempfile.TemporaryDirectory(prefix="cw-unprivileged-") as folder:
        run_unprivileged(Path(folder))


def run_unprivileged(tmp_path: Path) -> None:
    tmp_path.chmod(0o755)
    worker = tmp_path / "worker.py"
    shutil.copy(sandbox.WORKER_PATH, worker)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    os.chown(scratch, 65534, 65534)
    argv = isolation.bubblewrap_argv(UNPRIVILEGED_PYTHON, str(worker), str(scratch))
    config = {**sandbox.worker_config(UNHOOKED, "svc", SandboxLimits(cpu_seconds=5, memory_mb=256)),
              "file_size_mb": 8, "scratch": str(scratch)}
    requests = [config, {"id": 1, "op": "reset", "state": state(0).model_dump()},
                {"id": 2, "op": "call", "tool": "probe", "args": {}, "restore": False},
                {"id": 3, "op": "call", "tool": "fork", "args": {}, "restore": False}]
    done = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *argv],
                          input="".join(json.dumps(r) + "\n" for r in requests).encode(),
                          capture_output=True, timeout=60, env={}, check=False)
    assert done.returncode == 0, done.stderr.decode()[-500:]
    frames = done.stdout.split(b"CW ")[1:]
    assert [f.split(b" ", 1)[0] for f in frames] == [b"0", b"1", b"2", b"3"]
    assert b'"seccomp"' in frames[0] and b'"uid":65534' in frames[2]
    assert b"Operation not permitted" in frames[3]


def test_a_reply_with_too_many_values_is_refused_before_it_is_decoded(tmp_path):
    limits = SandboxLimits(scratch_root=tmp_path, max_reply_items=10_000)
    with SandboxedExecutor(UNHOOKED, limits, service_id="svc") as executor:
        executor.reset(state(1))
        assert executor.call("wide", {"n": 100})["success"]
        result = executor.call("wide", {"n": 200_000})
        assert result["error"]["code"] == "sandbox_violation" and "JSON values" in result["error"]["message"]
        assert executor.call("bump", {}) == {"success": True, "data": 2}


def test_the_bubblewrap_probe_runs_in_an_owned_scratch_folder_and_removes_it(monkeypatch):
    """A process killed mid-probe leaves a folder with an owner lock, which the next sweep removes."""
    folders = []
    real_run = subprocess.run

    def run(argv, **options):
        folders.append(Path(argv[argv.index("--chdir") + 1]).parent)
        assert (folders[-1] / OWNER_FILE).exists()
        return real_run(argv, **options)

    monkeypatch.setattr(isolation.subprocess, "run", run)
    isolation.bubblewrap_support.__wrapped__()
    assert len(folders) == 1 and folders[0].name.startswith("cw-probe-") and not folders[0].exists()
