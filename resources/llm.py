"""The LLM backend: offline (deterministic, the default) or any litellm model.

``backend="litellm"`` reaches a hosted provider (``model="openai/gpt-4.1-mini"``, key in the
env var named by ``api_key_env``), a vLLM server (``model="hosted_vllm/<name>"`` with
``api_base``) or any OpenAI-compatible local server. See docs/llm-backends.md.

Every model request the backend makes (coding agent, world model, instruction writer, LLM policy)
gives up after ``request_timeout_s``, with the client's own retries off; the caller retries
``max_retries`` times with a backoff doubling from ``retry_backoff_s`` and records each error.
"""


import os
from collections.abc import Callable
from pathlib import Path
from typing import Literal

import dagster as dg
from pydantic import Field

from compoworld_assets.engine.llm_requests import request_bounds, with_retries
from compoworld_assets.engine.rollout.llm import LLMPolicy, is_transient
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

    def synthesizer(self, executor_factory: Callable[[str], ToolExecutor]) -> Synthesizer:
        if self.backend == "offline":
            from compoworld_assets.engine.synthesis.offline import OfflineSynthesizer

            return OfflineSynthesizer()
        from compoworld_assets.engine.synthesis.llm import LLMSynthesizer

        return LLMSynthesizer(
            model=self.model,
            api_base=self.api_base,
            api_key_env=self.api_key_env,
            max_rounds=self.max_rounds,
            max_retries=self.max_retries,
            backoff_s=self.retry_backoff_s,
            request_timeout_s=self.request_timeout_s,
            executor_factory=executor_factory,
        )

    def instruction_writer(self) -> InstructionWriter:
        from compoworld_assets.engine.tasks.instructions import LLMWriter, TemplateWriter

        if self.backend == "offline":
            return TemplateWriter()
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        import litellm

        completion = with_retries(litellm.completion, max_retries=self.max_retries, backoff_s=self.retry_backoff_s,
                                  is_transient=is_transient)
        return LLMWriter(self.model, completion=completion, **self.completion_kwargs(),
                         **request_bounds(self.request_timeout_s))

    def policy(self) -> LLMPolicy:
        """The chat policy for ``trajectories``; the rollout engine retries it (``max_retries``, ``retry_backoff_s``)."""
        kwargs = self.completion_kwargs()
        return LLMPolicy(self.model, api_base=kwargs.get("api_base"), api_key=kwargs.get("api_key"),
                         request_timeout_s=self.request_timeout_s, extra=request_bounds(self.request_timeout_s))

    def completion_kwargs(self) -> dict[str, str]:
        """api_base and the key (read from the env var named by ``api_key_env``) for litellm calls."""
        kwargs: dict[str, str] = {}
        if self.api_base:
            kwargs["api_base"] = self.api_base
        if self.api_key_env and os.environ.get(self.api_key_env):
            kwargs["api_key"] = os.environ[self.api_key_env]
        return kwargs

    def world_model(self, cache_path: Path) -> WorldModel:
        from compoworld_assets.engine.world_model.cache import CachedWorldModel, SqliteWorldModelCache

        if self.backend == "offline":
            from compoworld_assets.engine.world_model.offline import OfflineWorldModel

            inner: WorldModel = OfflineWorldModel()
        else:
            from compoworld_assets.engine.world_model.llm import LLMWorldModel

            inner = LLMWorldModel(model=self.model, api_base=self.api_base, api_key_env=self.api_key_env,
                                  max_retries=self.max_retries, backoff_s=self.retry_backoff_s,
                                  request_timeout_s=self.request_timeout_s)
        return CachedWorldModel(inner, SqliteWorldModelCache(cache_path))
