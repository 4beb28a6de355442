"""A small OpenAI-compatible chat server for any Hugging Face checkpoint folder, on CPU with transformers.

    python -m compoworld_assets.serving.openai_server --model DIR --port 8011 [--name base]

``POST /v1/chat/completions`` takes ``messages``, ``tools``, ``temperature``, ``max_tokens`` and
``seed``; the prompt is rendered with the training chat template (tools as signature lines, earlier
tool calls as ``<tool_call>`` JSON; ``--chat-template checkpoint`` uses the checkpoint's own), so a
model fine-tuned by ``training/`` sees what it was trained on. Temperature 0 decodes greedily;
otherwise sampling is seeded with ``torch.manual_seed(seed)`` (seed 0 when none is given), so every
answer is reproducible. When the request has tools, ``<tool_call>`` JSON (or a bare JSON call) in the
output comes back as OpenAI ``tool_calls``. ``GET /v1/models`` lists the one model.

One generation runs at a time (a lock): the server is for evaluation and smoke tests, not
throughput (use vLLM on a GPU for that). litellm reaches it as ``openai/<name>`` with
``api_base=http://127.0.0.1:<port>/v1`` and any ``api_key``. :func:`local_server` starts it in a
subprocess and waits until it answers.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from compoworld_assets.engine.rollout.llm import parse_content_tool_calls

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
    """A causal LM and its tokenizer behind one lock; :meth:`complete` answers one chat request."""

    def __init__(self, model_dir: str | Path, name: str, chat_template: str = "training") -> None:
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
        self.end_ids = sorted({i for i in (self.tokenizer.eos_token_id,
                                           self.tokenizer.convert_tokens_to_ids("<|im_end|>")) if isinstance(i, int)})
        self._lock = threading.Lock()
        self._requests = 0

    def complete(self, request: dict[str, Any]) -> dict[str, Any]:
        import torch

        tools = request.get("tools") or None
        prompt = self.tokenizer.apply_chat_template(prompt_messages(request["messages"]), tools=tools,
                                                    add_generation_prompt=True, tokenize=False)
        input_ids = self.tokenizer(prompt, return_tensors="pt", add_special_tokens=False)["input_ids"]
        max_tokens = int(request.get("max_tokens") or request.get("max_completion_tokens") or DEFAULT_MAX_TOKENS)
        if input_ids.shape[1] + max_tokens > self.context_length:
            raise ContextTooLong(f"prompt of {input_ids.shape[1]} tokens + max_tokens {max_tokens} exceeds the "
                                 f"context length {self.context_length}")
        temperature = float(request.get("temperature") or 0.0)
        sampling = {"do_sample": True, "temperature": temperature, "top_p": float(request.get("top_p") or 1.0)} \
            if temperature > 0 else {"do_sample": False}
        with self._lock, torch.no_grad():
            self._requests += 1
            number = self._requests
            torch.manual_seed(int(request.get("seed") or 0))
            output = self.model.generate(input_ids, attention_mask=torch.ones_like(input_ids),
                                         max_new_tokens=max_tokens, eos_token_id=self.end_ids,
                                         pad_token_id=self.end_ids[0], **sampling)
        new_ids = output[0, input_ids.shape[1]:]
        text = self.tokenizer.decode(new_ids, skip_special_tokens=True)
        message, finish = completion_message(text, tools is not None, f"call_{number}")
        if finish == "stop" and len(new_ids) >= max_tokens and int(new_ids[-1]) not in self.end_ids:
            finish = "length"
        return {"id": f"chatcmpl-{number}", "object": "chat.completion", "created": int(time.time()),
                "model": self.name, "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": {"prompt_tokens": int(input_ids.shape[1]), "completion_tokens": len(new_ids),
                          "total_tokens": int(input_ids.shape[1] + len(new_ids))}}


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

        def do_GET(self) -> None:
            if self.path.rstrip("/") in ("/v1/models", "/models"):
                self._send(200, {"object": "list", "data": [
                    {"id": model.name, "object": "model", "created": 0, "owned_by": "compoworld"}]})
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
                self._send(200, model.complete(request))
            except ContextTooLong as exc:
                self._error(400, str(exc), "context_length_exceeded")
            except (ValueError, KeyError, TypeError) as exc:
                self._error(400, f"{type(exc).__name__}: {exc}", "invalid_request")

    return Handler


def serve(model_dir: str | Path, port: int, name: str = "local", host: str = "127.0.0.1",
          chat_template: str = "training") -> None:
    server = ThreadingHTTPServer((host, port), make_handler(ChatModel(model_dir, name, chat_template)))
    try:
        server.serve_forever()
    finally:
        server.server_close()


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
                 startup_timeout_s: float = 300.0, chat_template: str = "training") -> Iterator[LocalServer]:
    """Run the server for ``model_dir`` in a subprocess on 127.0.0.1 until the block ends."""
    handle = LocalServer(name=name, port=port or free_port())
    command = [sys.executable, "-m", "compoworld_assets.serving.openai_server", "--model", str(model_dir),
               "--port", str(handle.port), "--name", name, "--chat-template", chat_template]
    env = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
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
    args = parser.parse_args(argv)
    serve(args.model, args.port, args.name, args.host, args.chat_template)


if __name__ == "__main__":
    main()
