"""The parent process of one red-team case, and the reaper above it.

``python host.py reaper CONFIG`` becomes a child subreaper (orphans of everything below it are
re-parented to it), starts ``python host.py host CONFIG`` in a session of its own, waits for it
(killing it after ``host_timeout_s``), then records and kills every process still alive below
it. The host is what a hostile module attacks as "the parent": it holds the fake API key in its
environment, runs a benign service next to the hostile one and records what every call of the
public executor API returned, as JSON lines appended to ``CONFIG["report"]`` (opened per line,
so no long-lived fd of it is there to steal).

Stdlib only in the reaper; the host imports the project from ``CONFIG["code_root"]`` and the
executor from ``CONFIG["executor_module"]`` (the real sandbox, or the harness's unsandboxed double).
"""

from __future__ import annotations

import ctypes
import importlib
import json
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

PR_SET_CHILD_SUBREAPER = 36
BENIGN_SOURCE = '''
def handle(state, tool, args):
    table = state["tables"].setdefault("kv", {})
    if tool == "put":
        table[args["key"]] = {"id": args["key"], "value": args["value"]}
        return {"success": True, "data": len(table)}
    if tool == "get":
        record = table.get(args["key"])
        return {"success": True, "data": None if record is None else record["value"]}
    return {"success": False, "error": {"code": "unknown_tool", "message": tool}}
'''
PARENT_PID = "__PARENT_PID__"  # the placeholder in TARGET for the host's pid
PREVIEW_CHARS = 600
FORGED = "FORGED"  # every forged reply or state in the corpus carries this word
SETTLE_S = 1.0


def emit(config: dict[str, Any], event: str, **fields: Any) -> None:
    line = json.dumps({"event": event, **fields}, default=repr) + "\n"
    with open(config["report"], "a", encoding="utf-8") as report:
        report.write(line)


def descendants(pid: int) -> list[int]:
    """Every live (non-zombie) process below ``pid``, from ``/proc/<pid>/task/*/children``."""
    found: list[int] = []
    stack = [pid]
    while stack:
        current = stack.pop()
        try:
            tasks = os.listdir(f"/proc/{current}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                children = Path(f"/proc/{current}/task/{task}/children").read_text().split()
            except OSError:
                continue
            for child in map(int, children):
                if child not in found:
                    found.append(child)
                    stack.append(child)
    return [p for p in found if _alive(p)]


def _alive(pid: int) -> bool:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return False
    return fields[0] not in ("Z", "X")


def describe(pid: int) -> str:
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        cmdline = "?"
    return f"pid {pid}: {cmdline.strip()[:200]}"


def settle(pid: int, timeout_s: float = SETTLE_S) -> list[int]:
    """The processes still alive below ``pid`` once they had ``timeout_s`` to exit."""
    deadline = time.monotonic() + timeout_s
    while (alive := descendants(pid)) and time.monotonic() < deadline:
        reap()
        time.sleep(0.05)
    return alive


def reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def kill_all(pids: list[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    time.sleep(0.1)
    reap()


def reaper(config_path: str) -> int:
    config = json.loads(Path(config_path).read_text())
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    env = {**os.environ, **config["host_env"]}
    host = subprocess.Popen(
        [sys.executable, __file__, "host", config_path], env=env, cwd=config["cwd"], start_new_session=True
    )
    try:
        code = host.wait(timeout=config["host_timeout_s"])
    except subprocess.TimeoutExpired:
        host.kill()
        code = host.wait()
        emit(config, "host_timeout", seconds=config["host_timeout_s"])
    emit(config, "host_exit", code=code)
    left = settle(os.getpid())
    emit(config, "reaper_leftovers", processes=[describe(p) for p in left])
    kill_all(left)
    return 0


class Recorder:
    """Records every reply of the executor API, previewed, with what a full scan of it found."""

    def __init__(self, config: dict[str, Any]) -> None:
        self.config = config
        self.secrets = [s for s in config["secrets"] if s]

    def scan(self, value: Any) -> dict[str, Any]:
        """What the full reply holds: a secret of the parent, or the corpus's forgery marker in a
        reply that claims success (an error message may quote what the child wrote)."""
        text = value if isinstance(value, str) else json.dumps(value, default=repr)
        quoting = isinstance(value, str) or (
            isinstance(value, dict) and ("load_error" in value or value.get("success") is False)
        )
        return {
            "chars": len(text),
            "leaks": [s[:10] + "..." for s in self.secrets if s in text],
            "forged": FORGED in text and not quoting,
        }

    def step(self, name: str, action: Any) -> Any:
        """Run ``action()``; record its result or the exception it raised (never re-raised)."""
        started = time.monotonic()
        try:
            result = action()
        except BaseException as exc:  # noqa: BLE001 - the parent recording what broke is the point
            emit(self.config, name, raised=f"{type(exc).__name__}: {exc}"[:PREVIEW_CHARS],
                 scan=self.scan(str(exc)), seconds=round(time.monotonic() - started, 2))
            return exc
        emit(self.config, name, result=_brief(result), scan=self.scan(_dump(result)),
             seconds=round(time.monotonic() - started, 2))
        return result


def _dump(value: Any) -> Any:
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    return value


def _brief(value: Any, depth: int = 0) -> Any:
    """The reply with its shape kept (the harness checks it) and long strings and lists cut."""
    value = _dump(value)
    if isinstance(value, str):
        return value if len(value) <= PREVIEW_CHARS else f"{value[:PREVIEW_CHARS]}... ({len(value)} chars)"
    if depth > 8:
        return "..."
    if isinstance(value, dict):
        return {str(k): _brief(v, depth + 1) for k, v in list(value.items())[:50]}
    if isinstance(value, (list, tuple)):
        return [_brief(v, depth + 1) for v in value[:20]]
    return value if value is None or isinstance(value, (bool, int, float)) else repr(value)[:PREVIEW_CHARS]


def host(config_path: str) -> int:
    config = json.loads(Path(config_path).read_text())
    for key in ("source", "reply", "hostile_source"):
        if key in config:
            config[key] = config[key].replace(repr(PARENT_PID), str(os.getpid()))
    sys.path.insert(0, config["code_root"])
    from compoworld_assets.engine.runtime.executor import SandboxLimits
    from compoworld_assets.engine.runtime.state import ServiceState

    sandbox = importlib.import_module(config["executor_module"])
    SandboxedExecutor, SandboxLoadError = sandbox.SandboxedExecutor, sandbox.SandboxLoadError

    limits = SandboxLimits(**config["limits"], scratch_root=Path(config["scratch_root"]))
    record = Recorder(config)
    emit(config, "start", pid=os.getpid(), maxrss_kb=_maxrss_kb())

    benign = record.step("benign_start", lambda: SandboxedExecutor(BENIGN_SOURCE, limits, service_id="benign"))
    if isinstance(benign, BaseException):
        return 1
    record.step("benign_reset", lambda: benign.reset(ServiceState(service_id="benign")))
    record.step("benign_put_before", lambda: benign.call("put", {"key": "a", "value": 1}))

    if config["mode"] == "synthesizer":
        _synthesize(config, record, limits, SandboxedExecutor)
    else:
        _attack(config, record, limits, SandboxedExecutor, SandboxLoadError, ServiceState)

    record.step("benign_get_after", lambda: benign.call("get", {"key": "a"}))
    record.step("benign_put_after", lambda: benign.call("put", {"key": "b", "value": 2}))
    record.step("benign_state", benign.state)
    record.step("benign_close", benign.close)
    left = settle(os.getpid())
    emit(config, "host_leftovers", processes=[describe(p) for p in left])
    emit(config, "end", maxrss_kb=_maxrss_kb())
    return 0


def _attack(config, record, limits, SandboxedExecutor, SandboxLoadError, ServiceState) -> None:
    def load():
        try:
            return SandboxedExecutor(config["source"], limits, service_id="hostile")
        except SandboxLoadError as exc:
            return {"load_error": str(exc)}

    hostile = record.step("load", load)
    if isinstance(hostile, (BaseException, dict)):
        return
    emit(config, "layers", layers=list(hostile.layers))
    first = ServiceState(service_id="hostile", tables={"items": {"i1": {"id": "i1"}}})
    known = ServiceState(service_id="hostile", tables={"items": {"k2": {"id": "k2", "n": 2}}})
    nonces = config["nonces"]
    record.step("reset_first", lambda: hostile.reset(first))
    record.step("attack", lambda: hostile.call("attack", {}))
    record.step("ping_after_attack", lambda: hostile.call("ping", {"n": nonces[0]}))
    record.step("reset_known", lambda: hostile.reset(known))
    record.step("ping_after_reset", lambda: hostile.call("ping", {"n": nonces[1]}))
    record.step("state_after_reset", hostile.state)
    time.sleep(0.5)  # long enough for a thread left behind to act
    record.step("ping_later", lambda: hostile.call("ping", {"n": nonces[2]}))
    record.step("state_later", hostile.state)
    record.step("close", hostile.close)


def _synthesize(config, record, limits, SandboxedExecutor) -> None:
    from compoworld_assets.engine.library import builtin_spec
    from compoworld_assets.engine.synthesis.llm import LLMSynthesizer, SynthesisError

    spec = builtin_spec(config["spec"])
    spec = spec.model_copy(update={"tools": [t for t in spec.tools if t.name in config["spec_tools"]]})
    reply = config["reply"]

    def completion(**kwargs):
        return {"choices": [{"message": {"content": reply}}]}

    synthesizer = LLMSynthesizer(
        "stub/hostile",
        executor_factory=lambda source: SandboxedExecutor(source, limits, service_id=spec.id),
        completion_fn=completion,
        max_rounds=config["max_rounds"],
        max_retries=0,
        sleep=lambda seconds: None,
    )

    def synthesize():
        try:
            module = synthesizer.synthesize(spec)
        except SynthesisError as exc:
            reason = str(exc)
            record.step("synthesis_detail", lambda: reason)
            return {"outcome": "rejected"}
        record.step("synthesis_detail", lambda: "\n".join(module.log))
        return {"outcome": "kept", "kept_hostile": module.source.strip() == config["hostile_source"].strip()}

    record.step("synthesize", synthesize)


def _maxrss_kb() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


if __name__ == "__main__":
    role, path = sys.argv[1], sys.argv[2]
    sys.exit(reaper(path) if role == "reaper" else host(path))
