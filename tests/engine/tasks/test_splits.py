import itertools

import pytest

from compoworld_assets.engine.runtime.service_runtime import combination_key
from compoworld_assets.engine.tasks.splits import (
    assign_split,
    is_heldout_combination,
    separate_transfer,
)

SERVICES = ["crm", "mail", "chat", "calendar", "files", "helpdesk", "payments", "orders", "hr", "travel"]


def test_heldout_combinations_never_reach_train_or_rl():
    seen: dict[str, set[str]] = {}
    for size in (2, 3):
        for combo in itertools.combinations(SERVICES, size):
            for n in range(4):
                split = assign_split(combo, f"task_{'_'.join(combo)}_{n}")
                seen.setdefault(combination_key(combo), set()).add(split)
    heldout = {k for k, splits in seen.items() if "heldout" in splits}
    assert heldout and all(seen[k] == {"heldout"} for k in heldout)
    assert 0.1 < len(heldout) / len(seen) < 0.3
    assert {"train", "rl"} <= set().union(*seen.values())


def test_split_ignores_service_order_and_salt_changes_it():
    assert is_heldout_combination(["mail", "crm"]) == is_heldout_combination(["crm", "mail", "crm"])
    combos = list(itertools.combinations(SERVICES, 2))
    plain = [is_heldout_combination(c) for c in combos]
    salted = [is_heldout_combination(c, salt="round-2") for c in combos]
    assert plain != salted


def _task(task_id, split, services):
    from compoworld_assets.engine.runtime.state import WorldState
    from compoworld_assets.engine.tasks.model import Plan, Task

    return Task(task_id=task_id, seed=0, split=split, domain="d", services=services, initial_state=WorldState(),
                instruction="i", plan=Plan(steps=[]), rubric=[])


def test_heldout_tasks_need_only_services_some_train_task_uses():
    tasks = [_task("t1", "train", ["crm", "mail"]), _task("t2", "train", ["mail", "helpdesk"]),
             _task("r1", "rl", ["crm", "payments"]),
             _task("h1", "heldout", ["crm", "helpdesk"]), _task("h2", "heldout", ["crm", "payments"]),
             _task("h3", "heldout", ["files", "mail"])]
    split = {t.task_id: t.split for t in separate_transfer(tasks)}
    assert split == {"t1": "train", "t2": "train", "r1": "rl", "h1": "heldout", "h2": "transfer", "h3": "transfer"}


def test_named_transfer_services_leave_every_split_for_transfer():
    tasks = [_task("t1", "train", ["crm", "mail"]), _task("t2", "train", ["mail", "helpdesk"]),
             _task("t3", "train", ["crm", "helpdesk"]), _task("h1", "heldout", ["crm", "helpdesk"]),
             _task("h2", "heldout", ["helpdesk", "mail"])]
    split = {t.task_id: t.split for t in separate_transfer(tasks, transfer_services=["mail"])}
    assert split == {"t1": "transfer", "t2": "transfer", "t3": "train", "h1": "heldout", "h2": "transfer"}


@pytest.mark.slow
def test_generated_heldout_tasks_use_only_trained_services_and_transfer_tasks_are_not_heldout():
    from compoworld_assets.engine.evaluation.heldout import select_heldout
    from compoworld_assets.engine.rollout.library_world import build_library
    from compoworld_assets.engine.tasks.pipeline import GenerationConfig

    # enough services that workflows span several combinations, so half of them can be held out
    library = build_library(("crm", "helpdesk", "mail", "invoicing", "calendar", "docs", "projects"))
    tasks, _ = library.sample_tasks(60, 4, GenerationConfig(heldout_fraction=0.5, transfer_services=("calendar",)))
    trained = {s for t in tasks if t.split == "train" for s in t.services}
    heldout = [t for t in tasks if t.split == "heldout"]
    transfer = [t for t in tasks if t.split == "transfer"]
    assert heldout and transfer and "calendar" not in trained
    assert all(trained.issuperset(t.services) for t in heldout)
    assert all("calendar" in t.services or not trained.issuperset(t.services) for t in transfer)
    assert [t.task_id for t in select_heldout(tasks, None)] == sorted(t.task_id for t in heldout)


def test_a_round_with_train_tasks_and_no_rl_task_gives_rl_the_first_train_task():
    from compoworld_assets.engine.tasks.splits import ensure_rl

    tasks = [_task("t2", "train", ["crm"]), _task("t1", "train", ["mail"]), _task("h1", "heldout", ["crm", "mail"])]
    assert [t.split for t in ensure_rl(tasks)] == ["train", "rl", "heldout"]
    with_rl = [*tasks, _task("r1", "rl", ["crm"])]
    assert [t.split for t in ensure_rl(with_rl)] == [t.split for t in with_rl], "a round with an rl task is kept"
    assert [t.split for t in ensure_rl(tasks[:1])] == ["train"], "one train task stays for SFT"
