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
