"""Simulated tool results for tools that have no code: offline, LLM-driven and cached.

World-model tools are read-only simulations: a world model sees the service state but never
changes it, so an episode's state evolves only through tools implemented in code.
"""

from compoworld_assets.engine.world_model.base import WorldModel, world_model_key
from compoworld_assets.engine.world_model.cache import (
    CachedWorldModel,
    InMemoryWorldModelCache,
    SqliteWorldModelCache,
    WorldModelCache,
)
from compoworld_assets.engine.world_model.llm import AttemptRecord, LLMWorldModel
from compoworld_assets.engine.world_model.offline import OfflineWorldModel

__all__ = [
    "AttemptRecord",
    "CachedWorldModel",
    "InMemoryWorldModelCache",
    "LLMWorldModel",
    "OfflineWorldModel",
    "SqliteWorldModelCache",
    "WorldModel",
    "WorldModelCache",
    "world_model_key",
]
