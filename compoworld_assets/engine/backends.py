"""The model backends the pipeline uses, made from plain settings in any process.

The ``llm`` and ``sandbox`` resources configure them; the objects themselves are made here, so that a
worker process (:mod:`compoworld_assets.engine.parallel_builds`, the task factory's workers) makes the
same ones from the same settings without importing Dagster. ``backend="offline"`` is the deterministic synthesizer and world
model; ``"litellm"`` any litellm model (see docs/llm-backends.md).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from compoworld_assets.engine.runtime.executor import SandboxLimits, ToolExecutor
from compoworld_assets.engine.synthesis.base import Synthesizer
from compoworld_assets.engine.tasks.instructions import InstructionWriter
from compoworld_assets.engine.world_model.base import WorldModel

if TYPE_CHECKING:
    from compoworld_assets.engine.runtime.service_runtime import RuntimePool


@dataclass(frozen=True)
class LLMSettings:
    backend: Literal["offline", "litellm"] = "offline"
    model: str = "hosted_vllm/HuggingFaceTB/SmolLM2-135M-Instruct"
    api_base: str | None = None
    api_key_env: str | None = None
    max_rounds: int = 3
    max_retries: int = 3
    request_timeout_s: float = 120.0
    retry_backoff_s: float = 2.0
    total_deadline_s: float = 600.0


@dataclass(frozen=True)
class BuildBackends:
    """What a build needs besides the spec: the synthesizer, the executors of its modules, the world model."""

    synthesizer: Synthesizer
    executor_factory: Callable[[str], ToolExecutor]
    world_model: WorldModel


@dataclass(frozen=True)
class BackendRecipe:
    """How to make a build's backends: picklable, so that each worker process makes its own."""

    llm: LLMSettings
    limits: SandboxLimits
    world_model_cache: str | None = None
    """The world model's cache file, shared by the processes; None: no cache."""

    def __call__(self) -> BuildBackends:
        executors = executor_factory(self.limits, trusted=self.llm.backend == "offline")
        return BuildBackends(synthesizer(self.llm, executors), executors,
                             world_model(self.llm, self._cache_path()))

    def runtime_pool(self) -> RuntimePool:
        """A pool of service runtimes on this world model (the one services were probed with)."""
        from compoworld_assets.engine.runtime.service_runtime import RuntimePool

        return RuntimePool(world_model(self.llm, self._cache_path()), self.limits)

    def instruction_writer(self) -> InstructionWriter:
        return instruction_writer(self.llm, self._cache_path())

    def _cache_path(self) -> Path | None:
        return Path(self.world_model_cache) if self.world_model_cache else None


def executor_factory(limits: SandboxLimits, *, trusted: bool) -> Callable[[str], ToolExecutor]:
    """Executors for modules of one origin; ``trusted`` only for CompoWorld's offline synthesizer.

    For untrusted modules this fails at once, with the reason, where they could not run isolated.
    """
    from compoworld_assets.engine.runtime.sandbox import SandboxedExecutor, require_isolation

    if not trusted:
        require_isolation(limits)
    return lambda source: SandboxedExecutor(source, limits, trusted=trusted)


def synthesizer(settings: LLMSettings, executors: Callable[[str], ToolExecutor]) -> Synthesizer:
    if settings.backend == "offline":
        from compoworld_assets.engine.synthesis.offline import OfflineSynthesizer

        return OfflineSynthesizer()
    from compoworld_assets.engine.synthesis.llm import LLMSynthesizer

    return LLMSynthesizer(model=settings.model, api_base=settings.api_base, api_key_env=settings.api_key_env,
                          max_rounds=settings.max_rounds, max_retries=settings.max_retries,
                          backoff_s=settings.retry_backoff_s, request_timeout_s=settings.request_timeout_s,
                          total_deadline_s=settings.total_deadline_s, executor_factory=executors)


def world_model(settings: LLMSettings, cache_path: Path | None) -> WorldModel:
    """The world model behind a cache shared by processes (the file at ``cache_path``; None: no cache)."""
    from compoworld_assets.engine.world_model.cache import CachedWorldModel, SqliteWorldModelCache

    if settings.backend == "offline":
        from compoworld_assets.engine.world_model.offline import OfflineWorldModel

        inner: WorldModel = OfflineWorldModel()
    else:
        from compoworld_assets.engine.world_model.llm import LLMWorldModel

        inner = LLMWorldModel(model=settings.model, api_base=settings.api_base, api_key_env=settings.api_key_env,
                              max_retries=settings.max_retries, backoff_s=settings.retry_backoff_s,
                              request_timeout_s=settings.request_timeout_s, total_deadline_s=settings.total_deadline_s)
    return inner if cache_path is None else CachedWorldModel(inner, SqliteWorldModelCache(cache_path))


def completion_kwargs(settings: LLMSettings) -> dict[str, str]:
    """api_base and the key (read from the env var named by ``api_key_env``) for litellm calls."""
    kwargs: dict[str, str] = {}
    if settings.api_base:
        kwargs["api_base"] = settings.api_base
    if settings.api_key_env and os.environ.get(settings.api_key_env):
        kwargs["api_key"] = os.environ[settings.api_key_env]
    return kwargs


def instruction_writer(settings: LLMSettings, cache_path: Path | None = None) -> InstructionWriter:
    """The template writer offline; else the model's, bounded per request and in total, its rewrites of workflow
    requests cached in the file at ``cache_path`` (the world model's cache file; None: not cached)."""
    from compoworld_assets.engine.tasks.instructions import LLMWriter, TemplateWriter
    from compoworld_assets.engine.world_model.cache import SqliteWorldModelCache

    if settings.backend == "offline":
        return TemplateWriter()
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    from compoworld_assets.engine.llm_requests import request_bounds, with_retries
    from compoworld_assets.engine.rollout.llm import is_transient

    completion = with_retries(litellm.completion, max_retries=settings.max_retries,
                              backoff_s=settings.retry_backoff_s, is_transient=is_transient,
                              deadline_s=settings.total_deadline_s)
    cache = SqliteWorldModelCache(cache_path) if cache_path is not None else None
    return LLMWriter(settings.model, completion=completion, cache=cache, **completion_kwargs(settings),
                     **request_bounds(settings.request_timeout_s))
