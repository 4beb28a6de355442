import itertools

from compoworld_assets.engine.tasks.splits import assign_split, combination_key, is_heldout_combination

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
