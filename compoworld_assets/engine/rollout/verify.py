"""Trajectory verification: replay the recorded calls on a fresh world, then score the rubric.

A trajectory is kept when its replay is identical (every result and the final state hash
match what was recorded) and its rubric score reaches the threshold (1.0: every criterion).
"""

from __future__ import annotations

import threading
from collections import defaultdict, deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from pydantic import BaseModel, Field

from compoworld_assets.engine.agents.world import WorldFactory, close_world
from compoworld_assets.engine.canonical import canonical_json
from compoworld_assets.engine.lanes import cut_into_lanes, next_job
from compoworld_assets.engine.runtime.mount_order import reuse_order
from compoworld_assets.engine.runtime.state import WorldState
from compoworld_assets.engine.tasks.model import CriterionResult, Task, Trajectory

RubricEvaluator = Callable[[Task, WorldState, dict], list[CriterionResult]]
RubricScorer = Callable[[Task, list[CriterionResult]], float]


class VerifiedTrajectory(BaseModel):
    trajectory: Trajectory
    replay_identical: bool
    mismatches: list[str] = Field(default_factory=list, description="Where the replay differed, in order.")
    criteria: list[CriterionResult] = Field(default_factory=list)
    rubric_score: float = 0.0
    threshold: float = 1.0

    @property
    def passed(self) -> bool:
        """Kept for training: replays identically and scores at least the threshold."""
        return self.replay_identical and self.rubric_score >= self.threshold


def verify_trajectory(task: Task, trajectory: Trajectory, runtime_factory: WorldFactory, threshold: float = 1.0,
                      evaluate: RubricEvaluator | None = None, score: RubricScorer | None = None,
                      ) -> VerifiedTrajectory:
    """Replay ``trajectory`` on ``runtime_factory(task)`` and score the replayed final state.

    ``evaluate``/``score`` default to the task rubric engine (``tasks.rubrics``). The rubric sees
    the whole mounted world as the initial state, so services mounted beyond the task's own
    (padding, seeded by the world factory) count as collateral only when the agent changed them.
    """
    if trajectory.task_id != task.task_id:
        raise ValueError(f"trajectory of task {trajectory.task_id!r} verified against task {task.task_id!r}")
    if evaluate is None or score is None:
        from compoworld_assets.engine.tasks.rubrics import evaluate_rubric, rubric_score

        evaluate, score = evaluate or evaluate_rubric, score or rubric_score
    world = runtime_factory(task)
    try:
        mounted_task = task.model_copy(update={"initial_state": world.world_state()})
        mismatches = []
        for k, call in enumerate(trajectory.calls):
            result = world.call(call.service_id, call.tool, call.arguments)
            if canonical_json(result) != canonical_json(call.result):
                mismatches.append(f"call {k} ({call.service_id}_{call.tool}): result differs")
        final_state = world.world_state()
    finally:
        close_world(world)
    if final_state.content_hash() != trajectory.final_state_hash:
        mismatches.append("final state hash differs")
    criteria = evaluate(mounted_task, final_state, trajectory.final_answer)
    return VerifiedTrajectory(trajectory=trajectory, replay_identical=not mismatches, mismatches=mismatches,
                              criteria=criteria, rubric_score=score(task, criteria), threshold=threshold)


def verify_trajectories(tasks: Mapping[str, Task], trajectories: Sequence[Trajectory], runtime_factory: WorldFactory,
                        threshold: float = 1.0, evaluate: RubricEvaluator | None = None,
                        score: RubricScorer | None = None, *, order: Sequence[int] | None = None,
                        keep: Callable[[Task, VerifiedTrajectory], Any] | None = None,
                        concurrency: int = 1) -> list[Any]:
    """:func:`verify_trajectory` for each, results in the trajectories' order.

    Replayed in ``order`` (indices into ``trajectories``; default: :func:`reuse_order` of their tasks' services,
    so that a pooled world factory reuses their processes), in ``concurrency`` lanes of consecutive replays
    (:mod:`compoworld_assets.engine.lanes`) run side by side (each replay on its own world: a replay
    depends only on its trajectory and task, so the results are the same for any concurrency). Each trajectory
    and its task are read when replayed, and ``keep`` maps each verdict, with its task, to what is returned in
    its place (a table row, say), so lazily parsed inputs (``task_tables.StoredRows``) are held a few at a time.
    """
    if order is None:
        order = reuse_order([tasks[t.task_id].services for t in trajectories])
    if sorted(order) != list(range(len(trajectories))):
        raise ValueError("order must name every trajectory once")

    def replay(i: int) -> Any:
        trajectory = trajectories[i]
        task = tasks[trajectory.task_id]
        result = verify_trajectory(task, trajectory, runtime_factory, threshold, evaluate, score)
        return result if keep is None else keep(task, result)

    if concurrency <= 1:
        verified = {i: replay(i) for i in order}
    else:
        verified = {}
        lanes = cut_into_lanes(list(order), concurrency)
        taking, failed = threading.Lock(), threading.Event()

        def run_lane(own: deque[int]) -> None:
            while not failed.is_set():  # a replay that raised ends the batch: the others take no more
                with taking:
                    i = next_job(lanes, own)
                if i is None:
                    return
                try:
                    verified[i] = replay(i)
                except BaseException:
                    failed.set()
                    raise

        with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="cw-verify") as threads:
            for lane in [threads.submit(run_lane, own) for own in lanes]:
                lane.result()
    return [verified[i] for i in range(len(trajectories))]


def criterion_pass_rates(results: Iterable[Iterable[CriterionResult]]) -> dict[str, float]:
    """Per criterion id, the share of verified trajectories (scored on it) that passed it; ``results``: each
    verdict's criteria."""
    passed: dict[str, int] = defaultdict(int)
    seen: dict[str, int] = defaultdict(int)
    for criteria in results:
        for criterion in criteria:
            seen[criterion.id] += 1
            passed[criterion.id] += criterion.passed
    return {cid: passed[cid] / seen[cid] for cid in sorted(seen)}
