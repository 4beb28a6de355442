"""The LLM backend: offline (deterministic, the default) or any litellm model.

``backend="litellm"`` reaches a hosted provider (``model="openai/gpt-4.1-mini"``, key in the
env var named by ``api_key_env``), a vLLM server (``model="hosted_vllm/<name>"`` with
``api_base``) or any OpenAI-compatible local server. See docs/llm-backends.md.
"""


import os
from collections.abc import Callable
from pathlib import Path
from typing import Literal

import dagster as dg

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
    max_retries: int = 3

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
            executor_factory=executor_factory,
        )

    def instruction_writer(self) -> InstructionWriter:
        from compoworld_assets.engine.tasks.instructions import LLMWriter, TemplateWriter

        if self.backend == "offline":
            return TemplateWriter()
        return LLMWriter(self.model, **self.completion_kwargs())

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
                                  max_retries=self.max_retries)
        return CachedWorldModel(inner, SqliteWorldModelCache(cache_path))
