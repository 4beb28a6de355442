"""The demo data's held-out task file: whole held-out episodes over the services the SFT file trains on."""

from compoworld_assets.engine.evaluation.heldout import heldout_self_test
from training.benchmark_suite import heldout_world
from training.data import read_sft_file


def test_heldout_task_file_loads_unseen_combinations_that_the_oracle_passes(demo_files):
    assert demo_files.counts["heldout_tasks"] >= demo_files.counts["heldout"]
    tasks, factory = heldout_world(str(demo_files.heldout_tasks))
    assert len(tasks) == demo_files.counts["heldout_tasks"] and {t.split for t in tasks} == {"heldout"}
    trained = [sample["meta"] for sample in read_sft_file(demo_files.sft)]
    trained_combinations = {tuple(sorted(meta["services"])) for meta in trained}
    assert not trained_combinations & {tuple(t.services) for t in tasks}
    assert {s for t in tasks for s in t.plan.services} <= {s for meta in trained for s in meta["services"]}
    with factory:
        assert heldout_self_test(tasks, factory).ok
