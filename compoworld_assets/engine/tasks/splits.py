"""Train / RL / held-out splits that keep held-out service combinations unseen.

The split of a task is a function of its *service combination* (the sorted set of services
its plan needs): a fixed share of combinations, chosen by hash, is held out, so no task in
train or rl uses a held-out combination. Among the other combinations each task goes to
train or rl by the hash of its id.
"""

from __future__ import annotations

from collections.abc import Iterable

from compoworld_assets.engine.canonical import content_hash
from compoworld_assets.engine.tasks.model import Split

HELDOUT_FRACTION = 0.2
RL_FRACTION = 0.3


def combination_key(services: Iterable[str]) -> str:
    return "+".join(sorted(set(services)))


def _unit(*parts: str) -> float:
    """A stable number in [0, 1) from the hash of ``parts``."""
    return int(content_hash(list(parts))[:12], 16) / float(16**12)


def is_heldout_combination(services: Iterable[str], salt: str = "",
                           heldout_fraction: float = HELDOUT_FRACTION) -> bool:
    return _unit("combination", salt, combination_key(services)) < heldout_fraction


def assign_split(services: Iterable[str], task_id: str, salt: str = "",
                 heldout_fraction: float = HELDOUT_FRACTION, rl_fraction: float = RL_FRACTION) -> Split:
    """``heldout`` for held-out combinations; otherwise ``rl`` or ``train`` by the task id's hash."""
    if is_heldout_combination(services, salt, heldout_fraction):
        return "heldout"
    return "rl" if _unit("task", salt, task_id) < rl_fraction else "train"
