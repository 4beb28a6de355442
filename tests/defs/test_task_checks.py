"""The task checks read every round of ``sampled_tasks``: rules that hold within a round are checked per round."""

import polars as pl

from compoworld_assets.defs.tasks.checks import plan_hashes_unique


def test_the_same_walk_in_two_rounds_is_not_a_duplicate_but_twice_in_one_round_is():
    two_rounds = pl.DataFrame({"round": ["r001", "r002"], "plan_hash": ["p1", "p1"]})
    assert plan_hashes_unique(two_rounds.lazy()).passed
    one_round = pl.DataFrame({"round": ["r001", "r001", "r002"], "plan_hash": ["p1", "p1", "p2"]})
    result = plan_hashes_unique(one_round.lazy())
    assert not result.passed and result.metadata["duplicates"].value == 2


def test_a_combination_held_out_in_one_round_may_be_transfer_in_another_but_never_trained():
    from compoworld_assets.defs.tasks.checks import heldout_combinations_unseen

    rounds = pl.DataFrame({"split": ["heldout", "transfer", "train"], "service_combination": ["a+b", "a+b", "c+d"]})
    assert heldout_combinations_unseen(rounds.lazy()).passed
    leaked = rounds.with_columns(split=pl.Series(["heldout", "rl", "train"]))
    assert not heldout_combinations_unseen(leaked.lazy()).passed


def test_a_round_mostly_about_one_service_warns_and_a_spread_one_or_a_small_library_passes():
    import dagster as dg

    from compoworld_assets.defs.tasks.checks import SPREAD_MIN_SERVICES, service_spread

    others = [f"s{i}" for i in range(SPREAD_MIN_SERVICES)]
    spread = [f"{a}+{b}" for a, b in zip(others, others[1:] + others[:1])] * 4  # each service in 8 of 32 tasks
    crowded = [f"hub+{s}" for s in others] + spread[:16]  # the hub in 8 of 24 tasks
    frame = pl.DataFrame({"round": ["r001"] * len(spread) + ["r002"] * len(crowded),
                          "task_id": [f"t{i}" for i in range(len(spread) + len(crowded))],
                          "service_combination": spread + crowded})
    result = service_spread(frame.lazy())
    assert not result.passed and result.severity == dg.AssetCheckSeverity.WARN
    assert result.metadata["crowded_rounds"].value == ["r002"]
    assert result.metadata["rounds"].value["r002"]["top_service"] == "hub"
    assert result.metadata["rounds"].value["r001"]["top_share"] == 0.25
    small = pl.DataFrame({"round": ["r001"] * 3, "task_id": ["a", "b", "c"],
                          "service_combination": ["crm+mail", "crm+helpdesk", "mail+crm"]})
    assert service_spread(small.lazy()).passed
