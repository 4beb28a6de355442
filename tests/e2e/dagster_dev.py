"""Start ``dagster dev`` on a free local port for a test, and stop it (and its children) afterwards.

``dagster dev`` started from a non-interactive parent ignores SIGINT and SIGTERM unless SIGINT is
reset to its default before exec; then SIGTERM stops it in a few seconds.
"""

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@contextlib.contextmanager
def dagster_dev(env: dict[str, str], log: Path, startup_timeout_s: float = 240.0):
    """Yield the base URL of a running ``dagster dev`` over ``workspace.yaml``."""
    port = free_port()
    command = [str(Path(sys.executable).parent / "dagster"), "dev", "-w", "workspace.yaml",
               "-h", "127.0.0.1", "-p", str(port)]
    with log.open("w") as out:
        process = subprocess.Popen(command, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT,
                                   preexec_fn=_default_sigint,  # noqa: PLW1509 (only resets one signal)
                                   start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_for_http(f"{url}/server_info", process, startup_timeout_s, log)
        yield url
    finally:
        _stop(process)


def _stop(process: subprocess.Popen) -> None:
    """SIGTERM the process group ``dagster dev`` leads (webserver, daemon, code servers); SIGKILL what is left."""
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        pass
    time.sleep(2)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=10)


def _wait_for_http(url: str, process: subprocess.Popen, timeout_s: float, log: Path) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"dagster dev exited with {process.returncode}:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(1)
    raise TimeoutError(f"dagster dev did not answer {url} within {timeout_s} s:\n{log.read_text()[-3000:]}")


def graphql(url: str, query: str) -> dict:
    request = urllib.request.Request(f"{url}/graphql", data=json.dumps({"query": query}).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())["data"]
