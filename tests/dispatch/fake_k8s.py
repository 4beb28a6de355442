"""TEST DOUBLE: a fake Kubernetes API server, for tests only. It is not Kubernetes.

No real API server can run on the CI machines (no Docker, kind, k3s or envtest binaries), so
the tests point the real ``kubernetes`` client and unmodified dagster-k8s ``PipesK8sClient``
and ``k8s_job_executor`` at this stdlib HTTP server on 127.0.0.1. It implements only the calls they
make: core/v1 pods (create, list by field or label selector, read, delete; read pod logs, following
and with timestamps; list events) and batch/v1 jobs (create, read status, delete), each job running
one pod made from its template, labelled ``job-name``. Every pod runs its first container's
``command + args`` as a local process with the container's env and ``workingDir``. The image,
resources, volumes and node selector are recorded (``FakeKubernetes.created``, and the jobs in
``FakeKubernetes.jobs``) but not enforced.
"""

import json
import os
import re
import subprocess
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Self
from urllib.parse import parse_qs, urlparse

POD_PATH = re.compile(r"^/api/v1/namespaces/([^/]+)/pods(?:/([^/]+))?(/log)?$")
EVENTS_PATH = re.compile(r"^/api/v1/namespaces/([^/]+)/events$")
JOB_PATH = re.compile(r"^/apis/batch/v1/namespaces/([^/]+)/jobs(?:/([^/]+))?(/status)?$")


def rfc3339nano(ns: int) -> str:
    seconds, fraction = divmod(ns, 1_000_000_000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{fraction:09d}Z"


@dataclass
class FakePod:
    body: dict[str, Any]
    process: subprocess.Popen
    started_at: str
    lines: list[tuple[int, str]] = field(default_factory=list)
    exit_code: int | None = None
    finished_at: str | None = None
    changed: threading.Condition = field(default_factory=threading.Condition)

    @property
    def container(self) -> dict[str, Any]:
        return self.body["spec"]["containers"][0]

    def pump_output(self) -> None:
        """Timestamp each output line (strictly increasing, so no two share a timestamp);
        the pod counts as terminated only once its whole output is readable."""
        last = 0
        for raw in self.process.stdout:
            last = max(time.time_ns(), last + 1)
            with self.changed:
                self.lines.append((last, raw.decode(errors="replace").rstrip("\n")))
                self.changed.notify_all()
        code = self.process.wait()
        with self.changed:
            self.exit_code, self.finished_at = code, rfc3339nano(time.time_ns())
            self.changed.notify_all()

    def status(self) -> dict[str, Any]:
        base = {"name": self.container["name"], "image": self.container.get("image", ""), "imageID": "",
                "restartCount": 0}
        if self.exit_code is None:
            state = {"running": {"startedAt": self.started_at}}
            return {"phase": "Running", "containerStatuses": [{**base, "ready": True, "state": state}]}
        terminated = {"exitCode": self.exit_code, "reason": "Completed" if self.exit_code == 0 else "Error",
                      "startedAt": self.started_at, "finishedAt": self.finished_at}
        return {"phase": "Succeeded" if self.exit_code == 0 else "Failed",
                "containerStatuses": [{**base, "ready": False, "state": {"terminated": terminated}}]}

    def manifest(self) -> dict[str, Any]:
        return {**self.body, "apiVersion": "v1", "kind": "Pod", "status": self.status()}


class FakeKubernetes:
    """Start with ``with FakeKubernetes() as cluster:``; ``cluster.kubeconfig(path)`` writes a
    kubeconfig pointing at it."""

    def __init__(self):
        self.pods: dict[tuple[str, str], FakePod] = {}
        self.created: list[dict[str, Any]] = []
        self.jobs: dict[tuple[str, str], dict[str, Any]] = {}  # (namespace, name) -> the job as created
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def kubeconfig(self, path: Path) -> Path:
        config = {
            "apiVersion": "v1", "kind": "Config", "current-context": "fake",
            "clusters": [{"name": "fake", "cluster": {"server": self.url}}],
            "users": [{"name": "fake", "user": {"token": "fake-token"}}],
            "contexts": [{"name": "fake", "context": {"cluster": "fake", "user": "fake"}}],
        }
        path.write_text(json.dumps(config))  # JSON is YAML
        return path

    def __enter__(self) -> Self:
        self.thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self.server.shutdown()
        self.server.server_close()
        with self.lock:
            pods = list(self.pods.values())
            self.pods.clear()
        for pod in pods:
            _stop(pod)

    def create_pod(self, namespace: str, body: dict[str, Any]) -> FakePod:
        body.setdefault("metadata", {})["namespace"] = namespace
        container = body["spec"]["containers"][0]
        env = {**os.environ, **{e["name"]: e.get("value", "") for e in container.get("env") or []}}
        process = subprocess.Popen([*container.get("command", []), *container.get("args", [])],
                                   cwd=container.get("workingDir"), env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        pod = FakePod(body=body, process=process, started_at=rfc3339nano(time.time_ns()))
        threading.Thread(target=pod.pump_output, daemon=True).start()
        with self.lock:
            self.pods[(namespace, body["metadata"]["name"])] = pod
            self.created.append(body)
        return pod

    def delete_pod(self, namespace: str, name: str) -> FakePod | None:
        with self.lock:
            pod = self.pods.pop((namespace, name), None)
        if pod is not None:
            _stop(pod)
        return pod

    def find(self, namespace: str, name: str) -> FakePod | None:
        with self.lock:
            return self.pods.get((namespace, name))

    def list_pods(self, namespace: str, field_selector: str | None,
                  label_selector: str | None = None) -> list[FakePod]:
        by_name = field_selector and "metadata.name=" in field_selector
        wanted = field_selector.split("=", 1)[1] if by_name else None
        labels = dict(term.split("=", 1) for term in label_selector.split(",")) if label_selector else {}
        with self.lock:
            return [pod for (ns, name), pod in sorted(self.pods.items())
                    if ns == namespace and (wanted is None or name == wanted)
                    and labels.items() <= (pod.body["metadata"].get("labels") or {}).items()]

    def create_job(self, namespace: str, body: dict[str, Any]) -> dict[str, Any]:
        """A batch/v1 Job runs one pod from its template, named after it and labelled ``job-name``."""
        name = body["metadata"]["name"]
        template = body["spec"]["template"]
        metadata = {**(template.get("metadata") or {}), "name": f"{name}-pod"}
        metadata["labels"] = {**(metadata.get("labels") or {}), "job-name": name}
        self.create_pod(namespace, {**template, "metadata": metadata})
        with self.lock:
            self.jobs[(namespace, name)] = body
        return self.job_manifest(namespace, name)

    def job_manifest(self, namespace: str, name: str) -> dict[str, Any] | None:
        with self.lock:
            body = self.jobs.get((namespace, name))
            pod = self.pods.get((namespace, f"{name}-pod"))
        if body is None:
            return None
        code = None if pod is None else pod.exit_code
        status = ({"active": 1} if pod is not None and code is None else
                  {"succeeded": 1} if code == 0 else {"failed": 1})
        return {**body, "apiVersion": "batch/v1", "kind": "Job", "status": status}

    def delete_job(self, namespace: str, name: str) -> dict[str, Any] | None:
        manifest = self.job_manifest(namespace, name)
        with self.lock:
            self.jobs.pop((namespace, name), None)
        return manifest


def _stop(pod: FakePod) -> None:
    if pod.process.poll() is None:
        pod.process.kill()
    pod.process.wait()


def _handler_for(cluster: FakeKubernetes) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

        def do_POST(self) -> None:
            path = urlparse(self.path).path
            job = JOB_PATH.match(path)
            match = POD_PATH.match(path)
            if job and not job.group(2):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                return self._json(201, cluster.create_job(job.group(1), body))
            if not match or match.group(2):
                return self._status(404, "NotFound")
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            self._json(201, cluster.create_pod(match.group(1), body).manifest())

        def do_DELETE(self) -> None:
            job = JOB_PATH.match(urlparse(self.path).path)
            if job and job.group(2):
                manifest = cluster.delete_job(job.group(1), job.group(2))
                return self._json(200, manifest) if manifest else self._status(404, "NotFound")
            match = POD_PATH.match(urlparse(self.path).path)
            pod = cluster.delete_pod(match.group(1), match.group(2)) if match and match.group(2) else None
            if pod is None:
                return self._status(404, "NotFound")
            self._json(200, pod.manifest())

        def do_GET(self) -> None:
            url = urlparse(self.path)
            query = {key: values[0] for key, values in parse_qs(url.query).items()}
            if EVENTS_PATH.match(url.path):
                return self._json(200, {"apiVersion": "v1", "kind": "EventList", "items": []})
            job = JOB_PATH.match(url.path)
            if job and job.group(2):
                manifest = cluster.job_manifest(job.group(1), job.group(2))
                return self._json(200, manifest) if manifest else self._status(404, "NotFound")
            match = POD_PATH.match(url.path)
            if not match:
                return self._status(404, "NotFound")
            namespace, name, log = match.groups()
            if name is None:
                pods = cluster.list_pods(namespace, query.get("fieldSelector"), query.get("labelSelector"))
                return self._json(200, {"apiVersion": "v1", "kind": "PodList",
                                        "items": [pod.manifest() for pod in pods]})
            pod = cluster.find(namespace, name)
            if pod is None:
                return self._status(404, "NotFound")
            if log:
                return self._stream_log(pod, query)
            self._json(200, pod.manifest())

        def _stream_log(self, pod: FakePod, query: dict[str, str]) -> None:
            """Plain text, one ``<RFC3339Nano> <line>`` per line with ``timestamps``; with
            ``follow`` the response stays open until the container exits (HTTP/1.0: the
            connection's close ends the body)."""
            follow = query.get("follow", "").lower() == "true"  # the Python client sends "True"
            stamped = query.get("timestamps", "").lower() == "true"
            since_s = int(query.get("sinceSeconds", 0))
            since_ns = time.time_ns() - since_s * 1_000_000_000 if since_s else 0
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.end_headers()
            with pod.changed:
                sent = len(pod.lines) - int(query["tailLines"]) if "tailLines" in query else 0
                sent = max(sent, 0)
            while True:
                with pod.changed:
                    while follow and sent == len(pod.lines) and pod.exit_code is None:
                        pod.changed.wait(timeout=1.0)
                    batch, sent = pod.lines[sent:], len(pod.lines)
                    done = not follow or pod.exit_code is not None
                for ns, line in batch:
                    if ns >= since_ns:
                        self.wfile.write(((rfc3339nano(ns) + " " if stamped else "") + line + "\n").encode())
                self.wfile.flush()
                if done and sent == len(pod.lines):
                    return

        def _json(self, code: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _status(self, code: int, reason: str) -> None:
            self._json(code, {"apiVersion": "v1", "kind": "Status", "status": "Failure", "reason": reason,
                              "code": code, "message": f"{reason}: {self.path}"})

    return Handler
