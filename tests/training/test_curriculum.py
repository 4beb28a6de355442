"""The SFT curriculum's order and epochs counted as optimizer steps."""

import pytest

from training.curriculum import CURRICULA, curriculum_order, steps_for_epochs


def test_length_curriculum_puts_the_shortest_samples_first_and_keeps_ties_in_file_order():
    assert curriculum_order([300, 120, 300, 80, 120], "length") == [3, 1, 4, 0, 2]


def test_no_curriculum_keeps_the_file_order_for_the_trainer_to_shuffle():
    assert curriculum_order([300, 120, 80], "none") == [0, 1, 2]


def test_an_unknown_curriculum_is_refused_with_the_choices():
    assert CURRICULA == ("none", "length")
    with pytest.raises(ValueError, match="none, length"):
        curriculum_order([1], "difficulty")


@pytest.mark.parametrize(("samples", "epochs", "batch", "accumulation", "steps"), [
    (4, 1, 2, 1, 2), (5, 1, 2, 1, 3), (152, 3, 1, 1, 456), (152, 0.5, 4, 2, 10), (1, 0.01, 8, 1, 1),
])
def test_epochs_become_enough_steps_to_see_every_sample_that_often(samples, epochs, batch, accumulation, steps):
    assert steps_for_epochs(samples, epochs, batch, accumulation) == steps


def test_epochs_need_positive_inputs():
    with pytest.raises(ValueError, match="positive"):
        steps_for_epochs(0, 1, 1)
