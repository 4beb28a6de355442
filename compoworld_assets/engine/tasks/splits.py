"""Train / RL / held-out splits that keep held-out service combinations unseen.

The split of a task is a function of its *service combination* (the sorted set of services
its plan needs): a fixed share of combinations, chosen by hash, is held out, so no task in
train or rl uses a held-out combination. Among the other combinations each task goes to
train or rl by the hash of its id.

Held-out tasks measure generalization to unseen *combinations* of services the model was trained
on. A task that needs a service no train task uses asks a different question (transfer to an
unseen service), so :func:`separate_transfer` moves it to the ``transfer`` split, a named set of
its own that held-out evaluation never draws from; so do tasks over services named as transfer
services, whatever split they drew. A round with train tasks and no rl task gives rl one (:func:`ensure_rl`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from compoworld_assets.engine.canonical import content_hash
from compoworld_assets.engine.runtime.service_runtime import combination_key
from compoworld_assets.engine.tasks.model import Split, Task

HELDOUT_FRACTION = 0.2
RL_FRACTION = 0.3
TRAINED_SPLITS: tuple[Split, ...] = ("train", "rl")
"""The splits models are trained on (SFT, RL); held-out and transfer tasks are only evaluated."""


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


def separate_transfer(tasks: Sequence[Task], transfer_services: Iterable[str] = ()) -> list[Task]:
    """``tasks`` with every task over a named transfer service, and every held-out task needing a service
    that no train task uses, in the ``transfer`` split (the others unchanged, in order)."""
    named = set(transfer_services)
    tasks = [_to_transfer(t) if named.intersection(t.services) else t for t in tasks]
    trained = {service for t in tasks if t.split == "train" for service in t.services}
    return [_to_transfer(t) if t.split == "heldout" and not trained.issuperset(t.services) else t for t in tasks]


def _to_transfer(task: Task) -> Task:
    return task.model_copy(update={"split": "transfer"})


def ensure_rl(tasks: Sequence[Task]) -> list[Task]:
    """``tasks`` with the train task of the smallest id moved to ``rl`` when no task drew rl and at least two drew
    train: a small round (a dozen tasks) would otherwise leave the RL dataset empty by chance while SFT has data."""
    train = sorted(t.task_id for t in tasks if t.split == "train")
    if any(t.split == "rl" for t in tasks) or len(train) < 2:
        return list(tasks)
    return [t.model_copy(update={"split": "rl"}) if t.task_id == train[0] else t for t in tasks]
