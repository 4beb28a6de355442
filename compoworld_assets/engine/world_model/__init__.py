"""Simulated tool calls for tools that have no code: offline, LLM-driven and cached.

A world model answers a call with a :class:`Simulation`: the result envelope and the typed state
change the call makes (:mod:`.change`), which the runtime validates against the entity schemas
and applies, so a simulated write changes what later reads see. The offline backend changes what
the tool's spec says (create, update, delete, derived transitions); the LLM backend proposes
changes for any tool and is retried when a change does not fit the state.
"""

from compoworld_assets.engine.world_model.base import WorldModel, world_model_key
from compoworld_assets.engine.world_model.cache import (
    CachedWorldModel,
    InMemoryWorldModelCache,
    SqliteWorldModelCache,
    WorldModelCache,
)
from compoworld_assets.engine.world_model.change import InvalidChange, Simulation, StateChange, apply_change
from compoworld_assets.engine.world_model.llm import AttemptRecord, LLMWorldModel
from compoworld_assets.engine.world_model.offline import OfflineWorldModel

__all__ = [
    "AttemptRecord",
    "CachedWorldModel",
    "InMemoryWorldModelCache",
    "InvalidChange",
    "LLMWorldModel",
    "OfflineWorldModel",
    "Simulation",
    "SqliteWorldModelCache",
    "StateChange",
    "WorldModel",
    "WorldModelCache",
    "apply_change",
    "world_model_key",
]
