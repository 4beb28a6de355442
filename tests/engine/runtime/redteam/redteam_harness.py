"""The red-team harness: lays out the bait a hostile module goes after, runs one case through
``host.py`` and judges whether the sandbox contained it.

A case is one file of ``corpus/``: a service module whose ``handle`` (or whose top level, for
load-time attacks) attacks. The harness puts a ``TARGET`` dict (paths, ports, pids of the bait)
and the functions of the attacker's toolkit (``toolkit.py``) that it uses in front of it and a ``ping`` tool after it, so the
harness can ask, after the attack, whether the service still answers the right call with the
right state. Everything runs in a throw-away process tree (reaper → host → sandbox), so an
attack that kills or hangs its parent is recorded instead of taking the test run with it.

An attack is contained when none of the checks in :func:`judge` finds harm: the parent survived
with every API call returning (no exception), every error envelope carries a known code and a
message, no secret of the parent reached any reply, the bait files are unchanged and nothing new
appeared outside scratch, no listener got a connection, the victim process lives, no process
outlived ``close()``, a second service next to it answered correctly, the hostile service
answered the call after the attack with that call's answer (no reply one call late) and after
``reset()`` with exactly the reset state, and the parent's memory did not balloon.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REDTEAM_DIR = Path(__file__).resolve().parent
CORPUS_DIR = REDTEAM_DIR / "corpus"
TOOLKIT_FUNCTIONS = {
    node.name: ast.get_source_segment(text, node)
    for text in [(REDTEAM_DIR / "toolkit.py").read_text()]
    for node in ast.parse(text).body
    if isinstance(node, ast.FunctionDef)
}
HOST = REDTEAM_DIR / "host.py"
REPO_ROOT = REDTEAM_DIR.parents[3]

LIMITS = {"cpu_seconds": 2, "memory_mb": 384, "call_timeout_s": 3.0}
# Verification restarts a child after each timeout and every new child attacks again: shorter limits.
SYNTH_LIMITS = {"cpu_seconds": 1, "memory_mb": 384, "call_timeout_s": 1.5}
HOST_TIMEOUT_S = 120.0
SANDBOX_MODULE = "compoworld_assets.engine.runtime.sandbox"
MEMORY_GROWTH_LIMIT_MB = 256
ERROR_CODES = frozenset(
    {"invalid_arguments", "not_found", "conflict", "unknown_tool", "internal_error", "timeout",
     "resource_limit", "sandbox_violation"}
)
PARENT_PID = "__PARENT_PID__"  # replaced by the host with its pid (the literal, quotes included)
HARNESS_FILES = frozenset({"report.jsonl", "config.json"})
SYNTH_SPEC = "timesheets"
SYNTH_TOOLS = ("get_time_entry", "list_time_entries")

PING_WRAPPER = '''
_rt_attack_handle = handle


def handle(state, tool, args):
    """``ping`` answers with the call's nonce and the state as the child holds it; the rest attacks."""
    if tool == "ping":
        return {"success": True, "data": {"pong": args["n"], "tables": state["tables"]}}
    result = _rt_attack_handle(state, tool, args)
    return {"success": True, "data": None} if result is None else result
'''

SYNTH_WRAPPER = '''
_rt_benign_handle = handle
_rt_fired = []


def handle(state, tool, args):
    """Attack on the first call a process serves; behave like the real service otherwise."""
    if not _rt_fired:
        _rt_fired.append(tool)
        result = _rt_hostile_handle(state, tool, args)
        if result is not None:
            return result
    return _rt_benign_handle(state, tool, args)
'''


@dataclass(frozen=True)
class Case:
    """One hostile module of the corpus."""

    name: str
    doc: str
    text: str

    def toolkit(self) -> str:
        """The toolkit functions this module calls, directly or through each other (nothing else)."""
        needed: list[str] = []
        pending = [self.text]
        while pending:
            for node in ast.walk(ast.parse(pending.pop())):
                if isinstance(node, ast.Name) and node.id in TOOLKIT_FUNCTIONS and node.id not in needed:
                    needed.append(node.id)
                    pending.append(TOOLKIT_FUNCTIONS[node.id])
        return "\n\n\n".join(TOOLKIT_FUNCTIONS[name] for name in sorted(needed))

    def direct_source(self, target: dict[str, Any]) -> str:
        return "\n\n".join([f"TARGET = {target!r}", self.toolkit(), self.text, PING_WRAPPER])

    def synthesizer_source(self, target: dict[str, Any], service_source: str) -> str:
        """The attack hidden in an otherwise correct service module, as a model might write it."""
        hostile = re.sub(r"^def handle\(", "def _rt_hostile_handle(", self.text, flags=re.MULTILINE)
        return "\n\n".join([f"TARGET = {target!r}", self.toolkit(), hostile, service_source, SYNTH_WRAPPER])



def top_level_names(source: str) -> set[str]:
    """The functions, classes and variables a module defines at its top level."""
    names: set[str] = set()
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


def load_corpus() -> list[Case]:
    cases = []
    for path in sorted(CORPUS_DIR.glob("*.py")):
        text = path.read_text()
        doc = ast.get_docstring(ast.parse(text)) or ""
        cases.append(Case(name=path.stem, doc=doc.split("\n\n")[0].replace("\n", " "), text=text))
    return cases


@dataclass
class Outcome:
    """What a case did: ``escapes`` lists each way the parent, a neighbour or the host was harmed."""

    name: str
    escapes: list[str]
    reason: str
    detail: str = ""

    @property
    def contained(self) -> bool:
        return not self.escapes


class Bait:
    """Everything outside the sandbox a hostile module may go after, and the checks that it did not.

    Files the parent owns (a secret, a notes file, a small DuckDB database) in a directory outside
    scratch; a TCP and a UDP port on 127.0.0.1, an AF_UNIX socket in that directory and one in the
    abstract namespace; a victim process of the same user; a fake API key for the parent's
    environment.
    """

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.marker = secrets.token_hex(6)
        self.env_secret = "sk-redteam-" + secrets.token_hex(20)
        self.file_secret = "CANARY-FILE-" + secrets.token_hex(16)
        self.dir = workdir / "bait"
        self.dir.mkdir(parents=True)
        (workdir / "scratch").mkdir()
        (self.dir / "secret.txt").write_text(f"api_token={self.file_secret}\n")
        (self.dir / "notes.txt").write_text("the parent's notes\n")
        self._write_duckdb(self.dir / "world.duckdb")
        self._short = Path(tempfile.mkdtemp(prefix="rt-"))  # AF_UNIX paths must stay short
        self.tcp = self._listen(socket.socket(socket.AF_INET, socket.SOCK_STREAM), ("127.0.0.1", 0))
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", 0))
        self.udp.setblocking(False)
        self.unix_path = str(self._short / "listener.sock")
        self.unix = self._listen(socket.socket(socket.AF_UNIX, socket.SOCK_STREAM), self.unix_path)
        self.abstract_name = f"redteam-{self.marker}"
        self.abstract = self._listen(socket.socket(socket.AF_UNIX, socket.SOCK_STREAM), "\0" + self.abstract_name)
        self.victim = subprocess.Popen(
            [sys.executable, "-c", "import time; time.sleep(900)", f"redteam-victim-{self.marker}"],
            start_new_session=True,
        )
        self.tmp_drop = f"/tmp/redteam-{self.marker}-drop"
        self._files = self._fingerprint()
        self._workdir_entries = set(os.listdir(workdir))

    @staticmethod
    def _write_duckdb(path: Path) -> None:
        import duckdb

        with duckdb.connect(str(path)) as connection:
            connection.execute("CREATE TABLE runs AS SELECT range AS id, 'ok' AS status FROM range(100)")

    @staticmethod
    def _listen(sock: socket.socket, address: Any) -> socket.socket:
        sock.bind(address)
        sock.listen(8)
        sock.setblocking(False)
        return sock

    def target(self) -> dict[str, Any]:
        """What the attacker is told (the ``TARGET`` dict); the host fills in ``parent_pid``, its own pid."""
        return {
            "canary_dir": str(self.dir),
            "secret_file": str(self.dir / "secret.txt"),
            "notes_file": str(self.dir / "notes.txt"),
            "duckdb_file": str(self.dir / "world.duckdb"),
            "unix_socket": self.unix_path,
            "abstract_socket": self.abstract_name,
            "tcp_port": self.tcp.getsockname()[1],
            "udp_port": self.udp.getsockname()[1],
            "victim_pid": self.victim.pid,
            "tmp_drop": self.tmp_drop,
            "marker": self.marker,
            "parent_pid": PARENT_PID,
        }

    def _fingerprint(self) -> dict[str, tuple[Any, ...]]:
        prints = {}
        for path in sorted(self.dir.rglob("*")):
            info = path.lstat()
            digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else ""
            prints[str(path.relative_to(self.dir))] = (info.st_mode, info.st_size, digest)
        return prints

    def harm(self) -> list[str]:
        """Every way the bait was touched."""
        found = []
        now = self._fingerprint()
        for name in sorted(set(self._files) | set(now)):
            if name not in now:
                found.append(f"the parent's file {name} was deleted or moved")
            elif name not in self._files:
                found.append(f"a file appeared outside scratch: {self.dir / name}")
            elif now[name] != self._files[name]:
                found.append(f"the parent's file {name} was changed")
        for entry in sorted(set(os.listdir(self.workdir)) - self._workdir_entries - HARNESS_FILES):
            found.append(f"a file appeared outside scratch: {self.workdir / entry}")
        for folder in ("/tmp", "/var/tmp", "/dev/shm"):
            for entry in Path(folder).glob(f"*{self.marker}*"):
                found.append(f"a file appeared outside scratch: {entry}")
                with contextlib.suppress(OSError):
                    entry.unlink()
        for name, listener in (("TCP", self.tcp), ("AF_UNIX", self.unix), ("abstract AF_UNIX", self.abstract)):
            with contextlib.suppress(BlockingIOError):
                connection, _ = listener.accept()
                connection.close()
                found.append(f"the parent's {name} listener got a connection")
        with contextlib.suppress(BlockingIOError):
            self.udp.recvfrom(4096)
            found.append("the parent's UDP port got a datagram")
        if self.victim.poll() is not None:
            found.append(f"an unrelated process was killed (exit {self.victim.returncode})")
        found += self._stray_processes()
        return found

    def _stray_processes(self) -> list[str]:
        """Processes (other than the victim) carrying the marker or running inside the work dir."""
        found = []
        for pid in (int(p) for p in os.listdir("/proc") if p.isdigit()):
            if pid in (os.getpid(), self.victim.pid):
                continue
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
                cwd = os.readlink(f"/proc/{pid}/cwd")
            except OSError:
                continue
            if self.marker in cmdline or cwd.startswith(str(self.workdir)):
                found.append(f"a process outlived the sandbox: pid {pid} {cmdline.strip()[:120]}")
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
        return found

    def close(self) -> None:
        for sock in (self.tcp, self.udp, self.unix, self.abstract):
            sock.close()
        if self.victim.poll() is None:
            self.victim.kill()
        self.victim.wait()
        for leftover in self._short.iterdir():
            leftover.unlink()
        self._short.rmdir()


def run_case(
    case: Case,
    workdir: Path,
    *,
    mode: str = "direct",
    code_root: Path = REPO_ROOT,
    limits: dict[str, Any] | None = None,
    host_timeout_s: float = HOST_TIMEOUT_S,
    executor_module: str = SANDBOX_MODULE,
) -> Outcome:
    """Run ``case`` against the sandbox under ``code_root`` (``mode`` "direct" or "synthesizer")."""
    workdir.mkdir(parents=True, exist_ok=True)
    bait = Bait(workdir)
    try:
        report = workdir / "report.jsonl"
        config: dict[str, Any] = {
            "mode": mode,
            "code_root": str(code_root),
            "executor_module": executor_module,
            "cwd": str(workdir),
            "report": str(report),
            "scratch_root": str(workdir / "scratch"),
            "limits": limits or (SYNTH_LIMITS if mode == "synthesizer" else LIMITS),
            "host_env": {"OPENAI_API_KEY": bait.env_secret},
            "secrets": [bait.env_secret, bait.file_secret],
            "host_timeout_s": host_timeout_s,
            "nonces": [secrets.randbelow(10**9) for _ in range(3)],
        }
        target = bait.target()
        if mode == "synthesizer":
            source = case.synthesizer_source(target, service_source())
            config.update(
                spec=SYNTH_SPEC,
                spec_tools=list(SYNTH_TOOLS),
                max_rounds=1,
                hostile_source=source,
                reply=f"Here is the module.\n```python\n{source}```\n",
            )
        else:
            config["source"] = case.direct_source(target)
        config_path = workdir / "config.json"
        config_path.write_text(json.dumps(config))
        completed = subprocess.run(
            [sys.executable, str(HOST), "reaper", str(config_path)],
            cwd=workdir,
            start_new_session=True,
            timeout=host_timeout_s + 30,
            capture_output=True,
            check=False,
        )
        events = _read_events(report)
        if completed.returncode != 0:
            events.append({"event": "reaper_failed", "code": completed.returncode,
                           "stderr": completed.stderr.decode("utf-8", "replace")[-2000:]})
        outcome = judge(case.name, events, config, mode)
        outcome.escapes += bait.harm()
        return outcome
    finally:
        bait.close()


def service_source() -> str:
    """The offline synthesizer's module for the synthesizer cases' spec (what the attack hides in)."""
    from compoworld_assets.engine.library import builtin_spec
    from compoworld_assets.engine.synthesis.offline import OfflineSynthesizer

    spec = builtin_spec(SYNTH_SPEC)
    spec = spec.model_copy(update={"tools": [t for t in spec.tools if t.name in SYNTH_TOOLS]})
    return OfflineSynthesizer().synthesize(spec).source


def _read_events(report: Path) -> list[dict[str, Any]]:
    events = []
    if not report.exists():
        return events
    for line in report.read_text(errors="replace").splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            events.append({"event": "report_garbage", "line": line[:200]})
            continue
        if isinstance(event, dict) and "event" in event:
            events.append(event)
    return events


@dataclass
class _Judgement:
    escapes: list[str] = field(default_factory=list)

    def harm(self, message: str) -> None:
        self.escapes.append(message)


def judge(name: str, events: list[dict[str, Any]], config: dict[str, Any], mode: str) -> Outcome:
    """The escapes the host's record shows, and the reason code of the attack's result."""
    verdict = _Judgement()
    by_name = {e["event"]: e for e in events}
    _judge_parent(by_name, events, verdict)
    _judge_benign(by_name, verdict)
    if mode == "synthesizer":
        reason, detail = _judge_synthesis(by_name, verdict)
    else:
        reason, detail = _judge_attack(by_name, config, verdict)
    return Outcome(name=name, escapes=verdict.escapes, reason=reason, detail=detail)


def _judge_parent(by_name: dict[str, Any], events: list[dict[str, Any]], verdict: _Judgement) -> None:
    if "host_timeout" in by_name:
        verdict.harm(f"the parent hung (killed after {by_name['host_timeout']['seconds']} s)")
    exit_code = by_name.get("host_exit", {}).get("code")
    if "end" not in by_name or exit_code != 0:
        how = f"killed by {signal.Signals(-exit_code).name}" if isinstance(exit_code, int) and exit_code < 0 else (
            f"exit status {exit_code}")
        verdict.harm(f"the parent process did not finish ({how})")
    if "reaper_failed" in by_name:
        verdict.harm(f"the reaper failed: {by_name['reaper_failed']['stderr'][-300:]}")
    for event in events:
        if event["event"] == "report_garbage":
            verdict.harm(f"something wrote into the parent's report file: {event['line'][:80]!r}")
        if "raised" in event:
            verdict.harm(f"{event['event']}: the executor API raised {event['raised'][:300]}")
        scan = event.get("scan", {})
        if scan.get("leaks"):
            verdict.harm(f"{event['event']}: a secret of the parent reached the reply ({', '.join(scan['leaks'])})")
        if scan.get("forged"):
            verdict.harm(f"{event['event']}: a forged reply or state was accepted")
    if "FORGED" in json.dumps(by_name.get("layers", {})):
        verdict.harm("the executor accepted forged start-up layers")
    for where in ("host_leftovers", "reaper_leftovers"):
        for process in by_name.get(where, {}).get("processes", []):
            verdict.harm(f"a process outlived close(): {process}")
    start, end = by_name.get("start", {}).get("maxrss_kb"), by_name.get("end", {}).get("maxrss_kb")
    if start is not None and end is not None and (end - start) / 1024 > MEMORY_GROWTH_LIMIT_MB:
        verdict.harm(f"the parent's memory grew by {(end - start) // 1024} MiB")


BENIGN_EXPECTED = {
    "benign_get_after": {"success": True, "data": 1},
    "benign_put_after": {"success": True, "data": 2},
}
BENIGN_TABLES = {"kv": {"a": {"id": "a", "value": 1}, "b": {"id": "b", "value": 2}}}


def _judge_benign(by_name: dict[str, Any], verdict: _Judgement) -> None:
    for step, expected in BENIGN_EXPECTED.items():
        got = by_name.get(step, {}).get("result")
        if got != expected:
            verdict.harm(f"the second service was harmed: {step} gave {str(got)[:200]}")
    tables = (by_name.get("benign_state", {}).get("result") or {}).get("tables")
    if tables != BENIGN_TABLES:
        verdict.harm(f"the second service's state was changed: {str(tables)[:200]}")


def _judge_attack(by_name: dict[str, Any], config: dict[str, Any], verdict: _Judgement) -> tuple[str, str]:
    load = by_name.get("load", {}).get("result")
    if isinstance(load, dict) and "load_error" in load:
        message = load["load_error"]
        if len(message.strip()) < 10:
            verdict.harm(f"SandboxLoadError without a clear message: {message!r}")
        return "load_error", message[:300]
    attack = by_name.get("attack", {}).get("result")
    reason, detail = _classify(attack, verdict)
    nonces = config["nonces"]
    after = by_name.get("ping_after_attack", {}).get("result")
    data = after.get("data") if _is_success(after) else None
    if _is_success(after) and not (isinstance(data, dict) and data.get("pong") == nonces[0]):
        verdict.harm(f"the call after the attack got another call's reply: {str(after)[:200]}")
    known = {"items": {"k2": {"id": "k2", "n": 2}}}
    for step, nonce in (("ping_after_reset", nonces[1]), ("ping_later", nonces[2])):
        got = by_name.get(step, {}).get("result")
        if got != {"success": True, "data": {"pong": nonce, "tables": known}}:
            verdict.harm(f"{step}: after reset() the service did not answer with the reset state: {str(got)[:200]}")
    for step in ("state_after_reset", "state_later"):
        tables = (by_name.get(step, {}).get("result") or {}).get("tables")
        if tables != known:
            verdict.harm(f"{step}: the executor's state is not the reset state: {str(tables)[:200]}")
    return reason, detail


def _classify(reply: Any, verdict: _Judgement) -> tuple[str, str]:
    if reply is None:
        return "no_reply", ""
    if not isinstance(reply, dict) or not isinstance(reply.get("success"), bool):
        verdict.harm(f"the attack call returned a non-envelope: {str(reply)[:200]}")
        return "malformed", str(reply)[:300]
    if reply["success"]:
        data = reply.get("data")
        if isinstance(data, dict) and "escaped" in data:
            verdict.harm(f"the module reports: {data['escaped']}")
        return "harmless", str(data)[:300]
    error = reply.get("error") or {}
    code, message = error.get("code"), error.get("message", "")
    if code not in ERROR_CODES or not isinstance(message, str) or len(message.strip()) < 10:
        verdict.harm(f"an error envelope without a known code and a clear message: {str(error)[:200]}")
    return str(code), str(message)[:300]


def _judge_synthesis(by_name: dict[str, Any], verdict: _Judgement) -> tuple[str, str]:
    result = by_name.get("synthesize", {}).get("result") or {}
    detail = str(by_name.get("synthesis_detail", {}).get("result", ""))[:300]
    if result.get("outcome") == "kept":
        if result.get("kept_hostile"):
            verdict.harm("the synthesizer kept the hostile module")
            return "kept", detail
        return "kept_other", detail
    return str(result.get("outcome", "no_result")), detail


def _is_success(reply: Any) -> bool:
    return isinstance(reply, dict) and reply.get("success") is True
