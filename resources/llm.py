"""The LLM backend: offline (deterministic, the default) or any litellm model.

``backend="litellm"`` reaches a hosted provider (``model="openai/gpt-4.1-mini"``, key in the
env var named by ``api_key_env``), a vLLM server (``model="hosted_vllm/<name>"`` with
``api_base``) or any OpenAI-compatible local server. See docs/llm-backends.md.

Every model request the backend makes (coding agent, world model, instruction writer, LLM policy)
gives up after ``request_timeout_s``, with the client's own retries off; the caller retries
``max_retries`` times with a backoff doubling from ``retry_backoff_s`` and records each error, and every
attempt of one piece of work fits in ``total_deadline_s``.
"""


from collections.abc import Callable
from pathlib import Path
from typing import Literal

import dagster as dg
from pydantic import Field

from compoworld_assets.engine import backends
from compoworld_assets.engine.backends import LLMSettings
from compoworld_assets.engine.llm_requests import request_bounds
from compoworld_assets.engine.rollout.llm import LLMPolicy
from compoworld_assets.engine.runtime.executor import ToolExecutor
from compoworld_assets.engine.synthesis.base import Synthesizer
from compoworld_assets.engine.tasks.instructions import InstructionWriter
from compoworld_assets.engine.world_model.base import WorldModel


class LLMResource(dg.ConfigurableResource):
    backend: Literal["offline", "litellm"] = "offline"
    model: str = "hosted_vllm/HuggingFaceTB/SmolLM2-135M-Instruct"
    api_base: str | None = None
    api_key_env: str | None = None
    max_rounds: int = 3
    max_retries: int = Field(default=3, description="Retries after a failed (or, for the world model, invalid) answer.")
    request_timeout_s: float = Field(default=120.0, description="Seconds before one model request is abandoned.")
    retry_backoff_s: float = Field(default=2.0, description="Wait before the first retry; doubles after each.")
    total_deadline_s: float = Field(default=600.0, description="Seconds for every attempt of one piece of model work "
                                    "together (a call with its retries, a synthesis with its rounds, a world-model "
                                    "answer with its repairs); each request's timeout is cut to the time left.")

    def settings(self) -> LLMSettings:
        return LLMSettings(**{name: getattr(self, name) for name in LLMSettings.__dataclass_fields__})

    def synthesizer(self, executor_factory: Callable[[str], ToolExecutor]) -> Synthesizer:
        return backends.synthesizer(self.settings(), executor_factory)

    def instruction_writer(self) -> InstructionWriter:
        return backends.instruction_writer(self.settings())

    def policy(self) -> LLMPolicy:
        """The chat policy for ``trajectories``; the rollout engine retries it (``max_retries``, ``retry_backoff_s``)."""
        kwargs = self.completion_kwargs()
        return LLMPolicy(self.model, api_base=kwargs.get("api_base"), api_key=kwargs.get("api_key"),
                         request_timeout_s=self.request_timeout_s, extra=request_bounds(self.request_timeout_s))

    def completion_kwargs(self) -> dict[str, str]:
        """api_base and the key (read from the env var named by ``api_key_env``) for litellm calls."""
        return backends.completion_kwargs(self.settings())

    def world_model(self, cache_path: Path) -> WorldModel:
        return backends.world_model(self.settings(), cache_path)
