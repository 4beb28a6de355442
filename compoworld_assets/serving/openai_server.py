"""A small OpenAI-compatible chat server for any Hugging Face checkpoint folder, on CPU with transformers.

    python -m compoworld_assets.serving.openai_server --model DIR --port 8011 [--name base] [--sequential]

``POST /v1/chat/completions`` takes ``messages``, ``tools``, ``temperature``, ``top_p``,
``max_tokens``, ``seed`` and ``stop``; the prompt is rendered with the training chat template (each tool
with its description and every parameter, earlier tool calls as ``<tool_call>`` JSON; ``--chat-template checkpoint`` uses
the checkpoint's own), so a model fine-tuned by ``training/`` sees what it was trained on.
Temperature 0 decodes greedily; otherwise sampling draws from a generator seeded with ``seed``
(0 when none is given), so every answer is reproducible. When the request has tools,
``<tool_call>`` JSON (or a bare JSON call) in the output comes back as OpenAI ``tool_calls``.
``GET /v1/models`` lists the one model; ``GET /v1/stats`` returns the batcher's counters.

By default concurrent requests are decoded together (:mod:`~compoworld_assets.serving.batching`:
continuous batching plus a prefix cache); ``--sequential`` serves one request at a time with
``model.generate``, as the server did before. litellm reaches it as ``openai/<name>`` with
``api_base=http://127.0.0.1:<port>/v1`` and any ``api_key``. :func:`local_server` starts it in a
subprocess and waits until it answers.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import re
import select
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compoworld_assets.engine.rollout.llm import parse_content_tool_calls
from compoworld_assets.serving.sampling import Abandoned, GenerationRequest, SamplingParams
from compoworld_assets.serving.settings import DEFAULT_BATCHING, GIB, BatchSettings

if TYPE_CHECKING:
    from compoworld_assets.serving.batching import BatchGenerator
    from compoworld_assets.serving.sequential import SequentialGenerator

DEFAULT_MAX_TOKENS = 128
LOCAL_API_KEY = "local"
_TAGGED = re.compile(r"<tool_call>\s*.*?\s*</tool_call>", re.DOTALL)


def text_content(content: Any) -> str:
    """An OpenAI message content (a string or a list of parts) as plain text."""
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content or ""


def prompt_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages as the chat template expects them: text content, tool call arguments left as JSON text."""
    rendered = []
    for message in messages:
        item = {"role": message["role"], "content": text_content(message.get("content"))}
        if message.get("tool_calls"):
            item["tool_calls"] = [{"type": "function", "function": {
                "name": call["function"]["name"], "arguments": call["function"].get("arguments") or "{}"}}
                for call in message["tool_calls"]]
        rendered.append(item)
    return rendered


def completion_message(text: str, with_tools: bool, call_prefix: str) -> tuple[dict[str, Any], str]:
    """The OpenAI assistant message for generated ``text`` and its finish reason (``tool_calls`` or ``stop``)."""
    calls = parse_content_tool_calls(text) if with_tools else []
    if not calls:
        return {"role": "assistant", "content": text}, "stop"
    remaining = _TAGGED.sub("", text).strip() if _TAGGED.search(text) else ""
    return {"role": "assistant", "content": remaining or None, "tool_calls": [
        {"id": f"{call_prefix}_{k}", "type": "function",
         "function": {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)}}
        for k, (name, arguments) in enumerate(calls)]}, "tool_calls"


class ChatModel:
    """A causal LM and its tokenizer behind a generator; :meth:`complete` answers one chat request.

    ``batching`` None serves one request at a time with ``model.generate``
    (:class:`~compoworld_assets.serving.sequential.SequentialGenerator`); otherwise concurrent
    requests are decoded together (:class:`~compoworld_assets.serving.batching.BatchGenerator`).
    """

    def __init__(self, model_dir: str | Path, name: str, chat_template: str = "training",
                 batching: BatchSettings | None = DEFAULT_BATCHING) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        torch.set_num_threads(max(1, int(os.environ.get("OMP_NUM_THREADS", "1"))))
        self.name = name
        self.tokenizer = AutoTokenizer.from_pretrained(model_dir)
        if chat_template == "training" or not self.tokenizer.chat_template:
            from training.chat_template import install_training_template

            install_training_template(self.tokenizer)
        self.model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval()
        self.context_length = int(getattr(self.model.config, "max_position_embeddings", 2048))
        self.end_ids = tuple(sorted({i for i in (self.tokenizer.eos_token_id,
                                                 self.tokenizer.convert_tokens_to_ids("<|im_end|>"))
                                     if isinstance(i, int)}))
        if batching is None:
            from compoworld_assets.serving.sequential import SequentialGenerator

            self.generator: SequentialGenerator | BatchGenerator = SequentialGenerator(self.model, self.tokenizer)
        else:
            from compoworld_assets.serving.batching import BatchGenerator

            self.generator = BatchGenerator(self.model, self.tokenizer, batching)
        self._counter = itertools.count(1)

    def prepare(self, request: dict[str, Any]) -> GenerationRequest:
        """The request rendered with the chat template, tokenized and checked (``ValueError`` when it is not valid)."""
        tools = request.get("tools") or None
        prompt = self.tokenizer.apply_chat_template(prompt_messages(request["messages"]), tools=tools,
                                                    add_generation_prompt=True, tokenize=False)
        prompt_ids = self.tokenizer(prompt, add_special_tokens=False)["input_ids"]
        params = sampling_params(request)
        if len(prompt_ids) + params.max_tokens > self.context_length:
            raise ContextTooLong(f"prompt of {len(prompt_ids)} tokens + max_tokens {params.max_tokens} exceeds the "
                                 f"context length {self.context_length}")
        return GenerationRequest(prompt_ids=prompt_ids, params=params, end_ids=self.end_ids,
                                 meta={"with_tools": tools is not None})

    def complete(self, request: dict[str, Any]) -> dict[str, Any]:
        return self.answer(self.prepare(request))

    def answer(self, prepared: GenerationRequest, abandoned: Callable[[], bool] | None = None) -> dict[str, Any]:
        """The OpenAI chat completion for a prepared request (blocks until it is generated).

        ``abandoned``: whether the client has gone; the batch generator then cancels the request.
        """
        result = self.generator.generate(prepared, abandoned)
        number = next(self._counter)
        message, finish = completion_message(result.text, prepared.meta["with_tools"], f"call_{number}")
        if finish == "stop" and result.finish_reason == "length":
            finish = "length"
        prompt_tokens, completion_tokens = len(prepared.prompt_ids), len(result.token_ids)
        return {"id": f"chatcmpl-{number}", "object": "chat.completion", "created": int(time.time()),
                "model": self.name, "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                          "total_tokens": prompt_tokens + completion_tokens}}

    def stats(self) -> dict[str, Any]:
        """Counters of the batch generator (empty when sequential)."""
        prefix = getattr(self.generator, "prefix", None)
        counters = dict(getattr(self.generator, "stats", {}))
        return {**counters, "prefix_cache_bytes": prefix.bytes} if prefix is not None else counters

    def close(self) -> None:
        self.generator.close()


def sampling_params(request: dict[str, Any]) -> SamplingParams:
    """``max_tokens``, ``temperature``, ``top_p``, ``seed`` and ``stop`` of an OpenAI request, checked."""
    max_tokens = int(request.get("max_tokens") or request.get("max_completion_tokens") or DEFAULT_MAX_TOKENS)
    temperature = float(request.get("temperature") or 0.0)
    top_p = float(request.get("top_p") if request.get("top_p") is not None else 1.0)
    stop = request.get("stop") or ()
    stop = (stop,) if isinstance(stop, str) else tuple(stop)
    if max_tokens < 1 or temperature < 0 or not 0 < top_p <= 1 or not all(isinstance(s, str) for s in stop):
        raise ValueError(f"invalid sampling parameters: max_tokens {max_tokens} (>= 1), temperature {temperature} "
                         f"(>= 0), top_p {top_p} (in (0, 1]), stop {stop!r} (strings)")
    return SamplingParams(max_tokens=max_tokens, temperature=temperature, top_p=top_p,
                          seed=int(request.get("seed") or 0), stop=stop)


class ContextTooLong(ValueError):
    """The prompt plus ``max_tokens`` does not fit: answered as OpenAI's ``context_length_exceeded``."""


def make_handler(model: ChatModel) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            return

        def _send(self, status: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _error(self, status: int, message: str, code: str) -> None:
            self._send(status, {"error": {"message": message, "type": "invalid_request_error", "code": code}})

        def _client_gone(self) -> bool:
            """Whether the client closed its connection (readable with nothing to read)."""
            readable, _, _ = select.select([self.connection], [], [], 0)
            if not readable:
                return False
            try:
                return self.connection.recv(1, socket.MSG_PEEK) == b""
            except OSError:
                return True

        def do_GET(self) -> None:
            if self.path.rstrip("/") in ("/v1/models", "/models"):
                self._send(200, {"object": "list", "data": [
                    {"id": model.name, "object": "model", "created": 0, "owned_by": "compoworld"}]})
            elif self.path.rstrip("/") in ("/v1/stats", "/stats"):
                self._send(200, model.stats())
            else:
                self._error(404, f"no route {self.path}", "not_found")

        def do_POST(self) -> None:
            if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
                self._error(404, f"no route {self.path}", "not_found")
                return
            try:
                request = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                if request.get("stream"):
                    raise ValueError("streaming is not supported")
                if not isinstance(request.get("messages"), list) or not request["messages"]:
                    raise ValueError("messages must be a non-empty list")
                prepared = model.prepare(request)
            except ContextTooLong as exc:
                self._error(400, str(exc), "context_length_exceeded")
                return
            except (ValueError, KeyError, TypeError) as exc:
                self._error(400, f"{type(exc).__name__}: {exc}", "invalid_request")
                return
            try:
                self._send(200, model.answer(prepared, self._client_gone))
            except Abandoned:
                self.close_connection = True
            except Exception as exc:  # noqa: BLE001 - a failed generation is this request's 500, not the server's end
                self._send(500, {"error": {"message": f"{type(exc).__name__}: {exc}", "type": "server_error",
                                           "code": "generation_failed"}})

    return Handler


def serve(model_dir: str | Path, port: int, name: str = "local", host: str = "127.0.0.1",
          chat_template: str = "training", batching: BatchSettings | None = DEFAULT_BATCHING) -> None:
    model = ChatModel(model_dir, name, chat_template, batching)
    server = ThreadingHTTPServer((host, port), make_handler(model))
    server.daemon_threads = True
    try:
        server.serve_forever()
    finally:
        server.server_close()
        model.close()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass(frozen=True)
class LocalServer:
    """A running server: what litellm needs to reach it."""

    name: str
    port: int

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def litellm_model(self) -> str:
        return f"openai/{self.name}"


def _ready(api_base: str) -> bool:
    try:
        with urllib.request.urlopen(f"{api_base}/models", timeout=2) as response:
            return response.status == 200
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return False


@contextlib.contextmanager
def local_server(model_dir: str | Path, name: str = "local", port: int | None = None,
                 startup_timeout_s: float = 300.0, chat_template: str = "training",
                 batching: BatchSettings | None = DEFAULT_BATCHING, threads: int | None = None) -> Iterator[LocalServer]:
    """Run the server for ``model_dir`` in a subprocess on 127.0.0.1 until the block ends.

    ``batching`` None serves sequentially; ``threads`` sets the server's torch threads
    (default: this process's ``OMP_NUM_THREADS``, else 1).
    """
    handle = LocalServer(name=name, port=port or free_port())
    command = [sys.executable, "-m", "compoworld_assets.serving.openai_server", "--model", str(model_dir),
               "--port", str(handle.port), "--name", name, "--chat-template", chat_template,
               *(["--sequential"] if batching is None else batching.cli_args())]
    env = {**os.environ, "OMP_NUM_THREADS": str(threads or os.environ.get("OMP_NUM_THREADS", "1"))}
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(command, env=env, cwd=Path(__file__).resolve().parents[2],
                                   stdout=subprocess.DEVNULL, stderr=log)
        try:
            deadline = time.monotonic() + startup_timeout_s
            while not _ready(handle.api_base):
                if process.poll() is not None:
                    log.seek(0)
                    raise RuntimeError(f"the model server exited ({process.returncode}): "
                                       f"{log.read().decode(errors='replace')[-2000:]}")
                if time.monotonic() > deadline:
                    raise TimeoutError(f"the model server was not ready within {startup_timeout_s} s")
                time.sleep(0.5)
            yield handle
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="a checkpoint folder from_pretrained can load")
    parser.add_argument("--port", type=int, default=8011)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--name", default="local", help="the model id clients send (litellm: openai/<name>)")
    parser.add_argument("--chat-template", choices=("training", "checkpoint"), default="training")
    parser.add_argument("--sequential", action="store_true",
                        help="one request at a time with model.generate (no batching, no prefix cache)")
    defaults = DEFAULT_BATCHING
    parser.add_argument("--max-batch-size", type=int, default=defaults.max_batch_size)
    parser.add_argument("--batch-window-ms", type=float, default=defaults.window_s * 1000,
                        help="how long an idle server waits for more requests before starting a batch")
    parser.add_argument("--kv-cache-gib", type=float, default=defaults.kv_cache_bytes / GIB,
                        help="memory for the running batch's keys and values")
    parser.add_argument("--prefix-cache-gib", type=float, default=defaults.prefix_cache_bytes / GIB,
                        help="memory for cached prompt prefixes (0: off)")
    parser.add_argument("--block-size", type=int, default=defaults.block_size, help="prefix cache block, in tokens")
    args = parser.parse_args(argv)
    batching = None if args.sequential else BatchSettings(
        max_batch_size=args.max_batch_size, window_s=args.batch_window_ms / 1000,
        kv_cache_bytes=int(args.kv_cache_gib * GIB), prefix_cache_bytes=int(args.prefix_cache_gib * GIB),
        block_size=args.block_size)
    serve(args.model, args.port, args.name, args.host, args.chat_template, batching)


if __name__ == "__main__":
    main()
