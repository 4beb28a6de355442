"""The task factory end to end: graph → walks → tasks → rubrics → verifier gate.

Only built services can be mounted, so the graph and the walks cover the services in
``built``; world-model tools are walked only where :func:`.graph.simulation_walkable` admits them
(plans must replay deterministically and their effects be checkable).
"""

from __future__ import annotations

import multiprocessing.util
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import networkx as nx

from compoworld_assets.engine.backends import BackendRecipe, LLMSettings
from compoworld_assets.engine.canonical import content_hash
from compoworld_assets.engine.runtime.executor import SandboxLimits
from compoworld_assets.engine.runtime.mount_order import reuse_order
from compoworld_assets.engine.runtime.service_runtime import RuntimePool, WorldRuntime
from compoworld_assets.engine.service_build import BuiltService
from compoworld_assets.engine.specs.model import READ_ONLY_EFFECTS, ServiceSpec
from compoworld_assets.engine.tasks.gate import QuarantinedTask, self_test
from compoworld_assets.engine.tasks.goal import shared_nouns
from compoworld_assets.engine.tasks.graph import built_services_graph
from compoworld_assets.engine.tasks.instantiate import (
    TaskConfig,
    TaskGenerationError,
    instantiate_task,
    specs_by_id,
    task_id_for,
)
from compoworld_assets.engine.tasks.instructions import InstructionWriter
from compoworld_assets.engine.tasks.model import Plan, Task
from compoworld_assets.engine.tasks.packed import PackedLibrary, PackedTask, TaskSpill
from compoworld_assets.engine.tasks.plan_exec import PlanExecutionError
from compoworld_assets.engine.tasks.realism import task_defects
from compoworld_assets.engine.tasks.sampling import WalkConfig, sample_plans
from compoworld_assets.engine.tasks.splits import (
    HELDOUT_FRACTION,
    RL_FRACTION,
    assign_split,
    ensure_rl,
    separate_transfer,
)
from compoworld_assets.engine.tasks.workflows.build import WorkflowDraft
from compoworld_assets.engine.tasks.workflows.drafting import draft_workflows
from compoworld_assets.engine.tasks.workflows.instantiate import instantiate_workflow
from compoworld_assets.engine.workers import WorkerLost, run_isolated, worker_count

WORKFLOW_SHARE = 0.9


@dataclass(frozen=True)
class GenerationConfig:
    walk: WalkConfig = field(default_factory=WalkConfig)
    task: TaskConfig = field(default_factory=TaskConfig)
    heldout_fraction: float = HELDOUT_FRACTION
    rl_fraction: float = RL_FRACTION
    split_salt: str = ""
    transfer_services: tuple[str, ...] = ()  # their tasks form the transfer split (tasks.splits.separate_transfer)
    round_key: str = "0"  # the round every task is stamped with (Task.round)
    # The share of a round's plans that are workflows (tasks.workflows); the rest are walks. A library no pattern
    # fits gets walks only.
    workflow_share: float = WORKFLOW_SHARE


# A worker also gets the whole library, packed (~1 s more than a build worker): worth it from this many plans.
PLANS_PER_WORKER = 64
# Plans go to a worker this many at a time, consecutive in reuse order: one at a time, neighbours over the same
# services went to both workers, and each started its own processes for them.
PLANS_PER_BATCH = 16


def task_workers(n_plans: int, cores: int | None = None) -> int:
    """Worker processes for ``n_plans`` plans (:func:`~compoworld_assets.engine.workers.worker_count`)."""
    return worker_count(n_plans, PLANS_PER_WORKER, cores)


def task_seed(seed: int, plan: Plan) -> int:
    """Each task's world seed, from the run seed and the plan (independent of sampling order)."""
    return int(content_hash(["task-seed", seed, plan.plan_hash()])[:8], 16)


def task_world(task: Task, built: Mapping[str, BuiltService], pool: RuntimePool) -> WorldRuntime:
    """The world a task's gold plan runs on: its needed services, reset to its initial state (the plan, its traps'
    wrong plans and the gate's mutations call nothing else)."""
    return pool.world([built[s].mount() for s in task.services], task.initial_state)


def generate_tasks(specs: Iterable[ServiceSpec], built: Mapping[str, BuiltService], seed: int, n: int,
                   config: GenerationConfig = GenerationConfig(), writer: InstructionWriter | None = None,
                   pool: RuntimePool | None = None, graph: nx.MultiDiGraph | None = None, workers: int = 1,
                   backends: BackendRecipe | None = None) -> tuple[list[Task], list[QuarantinedTask]]:
    """:func:`generate_packed_tasks` with every task unpacked: for rounds small enough to hold as objects."""
    packed, quarantined = generate_packed_tasks(specs, built, seed, n, config, writer, pool, graph, workers, backends)
    return [p.unpack() for p in packed], quarantined


def generate_packed_tasks(specs: Iterable[ServiceSpec], built: Mapping[str, BuiltService], seed: int, n: int,
                          config: GenerationConfig = GenerationConfig(), writer: InstructionWriter | None = None,
                          pool: RuntimePool | None = None, graph: nx.MultiDiGraph | None = None, workers: int = 1,
                          backends: BackendRecipe | None = None
                          ) -> tuple[list[PackedTask], list[QuarantinedTask]]:
    """Sample ``n`` plans and turn each into a gated task; returns (tasks, quarantined):
    :func:`plan_round`, then :func:`tasks_from_plans`."""
    plans = plan_round(specs, built, seed, n, config, graph)
    return tasks_from_plans(plans, built, seed, config, writer, pool, workers, backends)


def plan_round(specs: Iterable[ServiceSpec], built: Mapping[str, BuiltService], seed: int, n: int,
               config: GenerationConfig = GenerationConfig(), graph: nx.MultiDiGraph | None = None
               ) -> list[Plan | WorkflowDraft]:
    """A round's ``n`` plans: ``config.workflow_share`` of them workflow drafts (:mod:`.workflows`), the rest walked
    over ``graph`` (the stored one, :func:`graph_from_tables`); without it the graph of the built services is
    computed here. Every tool it names must belong to a built service (a graph older than the services would walk
    tools that cannot be mounted: ``ValueError``).

    Only this step needs every spec as objects and the graph: a caller short of memory lets go of them before
    :func:`tasks_from_plans`, which needs only the plans and the built services (packed, :class:`.PackedLibrary`).
    """
    usable = [s for s in specs if s.id in built]
    if graph is None:
        graph = built_services_graph({s.id: built[s.id] for s in usable})
    unbuilt = sorted({data["service_id"] for _, data in graph.nodes(data=True)} - {s.id for s in usable})
    if unbuilt:
        raise ValueError(f"the dependency graph names services that are not built: {', '.join(unbuilt)}")
    drafts = draft_workflows({s.id: s for s in usable}, {s.id: built[s.id].implementation for s in usable}, seed,
                             round(n * config.workflow_share))
    covered = frozenset(service for draft in drafts for service in draft.services)
    return [*sample_plans(graph, usable, seed, n - len(drafts), config.walk, covered), *drafts]


def tasks_from_plans(plans: list[Plan | WorkflowDraft], built: Mapping[str, BuiltService], seed: int,
                     config: GenerationConfig = GenerationConfig(), writer: InstructionWriter | None = None,
                     pool: RuntimePool | None = None, workers: int = 1, backends: BackendRecipe | None = None
                     ) -> tuple[list[PackedTask], list[QuarantinedTask]]:
    """Each plan turned into a gated task; returns (tasks, quarantined).

    Each task comes packed (:mod:`.packed`: its seeded world is most of it), its compressed JSON spilled to an
    anonymous temporary file as it is made (:class:`.packed.TaskSpill`), so that a round holds only the tasks'
    heads; unpack one at a time to replay or store it.

    Without ``pool`` and ``writer`` they are made by ``backends`` (offline ones by default: the offline
    world model, for mounted services that have world-model tools), and the pool is closed at the end.

    With ``workers`` > 1 the plans become tasks in that many processes, each with its own runtime pool (its
    share of ``backends.limits.max_live_services``) and instruction writer made by ``backends``; ``pool`` and
    ``writer`` are not used then. Each worker gets ``built`` packed (as given when it is a
    :class:`.PackedLibrary`). A task depends only on its plan, the seed and the services, so the result is the
    same for any number of workers.

    One plan never costs the round: an unexpected exception while making its task quarantines it at stage
    ``error``, and a plan whose worker process dies also when it runs alone at stage ``worker``.
    """
    recipe = backends or BackendRecipe(LLMSettings(), SandboxLimits())
    in_workers = workers > 1 and len(plans) > 1
    if in_workers:
        recipe = replace(recipe, limits=recipe.limits.shared(workers))  # the round's caps, shared out
    # Each task depends only on its plan and the seed: the order only saves process starts, in each worker's pool.
    live = (pool.limits if pool is not None and not in_workers else recipe.limits).max_live_services
    order = reuse_order([plan.services for plan in plans], live)
    spill = TaskSpill()

    def keep(outcome: PackedTask | QuarantinedTask) -> PackedTask | QuarantinedTask:
        return spill.add(outcome) if isinstance(outcome, PackedTask) else outcome

    if in_workers:
        outcomes = _in_workers(plans, built, seed, config, recipe, workers, order, keep)
    else:
        own_pool = pool is None
        pool = pool or recipe.runtime_pool()
        writer = writer or recipe.instruction_writer()
        try:
            made = {i: keep(_task_from_plan(plans[i], built, seed, config, writer, pool)) for i in order}
        finally:
            if own_pool:
                pool.close()
        outcomes = [made[i] for i in range(len(plans))]
    tasks = [o for o in outcomes if isinstance(o, PackedTask)]
    quarantined = [o for o in outcomes if isinstance(o, QuarantinedTask)]
    return _with_transfer(tasks, config.transfer_services), quarantined


def packed_library(built: Mapping[str, BuiltService]) -> PackedLibrary:
    """``built`` as task workers get it: packed, with the record nouns its services share worked out."""
    if isinstance(built, PackedLibrary):
        return built
    return PackedLibrary.pack(built, shared_nouns(specs_by_id(built)))


def _with_transfer(tasks: list[PackedTask], transfer_services: tuple[str, ...]) -> list[PackedTask]:
    """:func:`separate_transfer`, then :func:`ensure_rl`, on the tasks' heads; the few tasks they move are packed
    again."""
    heads = ensure_rl(separate_transfer([p.head for p in tasks], transfer_services))
    return [p if head.split == p.head.split else p.updated(split=head.split) for p, head in zip(tasks, heads, strict=True)]


def _task_from_plan(plan: Plan | WorkflowDraft, built: Mapping[str, BuiltService], seed: int, config: GenerationConfig,
                    writer: InstructionWriter | None, pool: RuntimePool) -> PackedTask | QuarantinedTask:
    """The gated task of one plan, packed, or why it has none."""
    seed_for_task = task_seed(seed, plan)
    task_id = task_id_for(plan, seed_for_task)
    split = assign_split(plan.services, task_id, config.split_salt, config.heldout_fraction, config.rl_fraction)

    def runtime_for(task: Task) -> WorldRuntime:
        return task_world(task, built, pool)

    try:
        if isinstance(plan, WorkflowDraft):
            task = instantiate_workflow(plan, specs_by_id(built), seed_for_task, split, runtime_for, config.task)
            revise = getattr(writer, "revise", None)  # a model's prose, checked (tasks.rewrite), where one is set
            task = revise(task) if revise is not None else task
        else:
            task = instantiate_task(plan, built, seed_for_task, split, runtime_for, writer, config.task)
    except (TaskGenerationError, PlanExecutionError) as exc:
        return QuarantinedTask(task_id=task_id, plan_hash=plan.plan_hash(), stage="instantiate", reason=str(exc))
    except Exception as exc:  # noqa: BLE001 - a defect this plan exposes must not cost the round
        return _unexpected(plan, task_id, exc)
    defects = task_defects(task)
    if defects:  # what no person would ask for: a backdated creation, a look-up of what it was given...
        return QuarantinedTask(task_id=task_id, plan_hash=plan.plan_hash(), stage="instantiate",
                               reason="defects: " + ", ".join(defects))
    try:
        specs = specs_by_id(built)
        result = self_test(task, runtime_for(task),
                           read_only=lambda step: specs[step.service_id].tool(step.tool).effect in READ_ONLY_EFFECTS)
    except Exception as exc:  # noqa: BLE001 - as above
        return _unexpected(plan, task_id, exc)
    if result.passed:
        try:
            return PackedTask.pack(task.model_copy(update={"round": config.round_key}))
        except Exception as exc:  # noqa: BLE001 - as above (a value a service returned that JSON cannot hold)
            return _unexpected(plan, task_id, exc)
    return QuarantinedTask(task_id=task.task_id, plan_hash=plan.plan_hash(), stage="gate",
                           reason="; ".join(result.reasons), task=task)


def _unexpected(plan: Plan | WorkflowDraft, task_id: str, error: Exception) -> QuarantinedTask:
    return QuarantinedTask(task_id=task_id, plan_hash=plan.plan_hash(), stage="error",
                           reason=f"{type(error).__name__}: {error}"[:2000])


# One worker's services, settings, runtime pool and writer, set once when the worker starts.
_WORKER: dict[str, Any] = {}


def _in_workers(plans: list[Plan], built: Mapping[str, BuiltService], seed: int, config: GenerationConfig,
                backends: BackendRecipe, workers: int, order: list[int],
                keep: Callable[[PackedTask | QuarantinedTask], PackedTask | QuarantinedTask]
                ) -> list[PackedTask | QuarantinedTask]:
    """The tasks of ``plans`` made in ``workers`` processes, each set up by ``backends`` (caps already its share)."""
    library = packed_library(built)  # a worker mounts a few services per task, unpacked as they are asked for
    outcomes = run_isolated(plans, _worker_task, workers, _start_worker, (library, seed, config, backends), order,
                            keep, PLANS_PER_BATCH)
    return [_lost(plan, seed, outcome) if isinstance(outcome, WorkerLost) else outcome
            for plan, outcome in zip(plans, outcomes, strict=True)]


def _lost(plan: Plan | WorkflowDraft, seed: int, lost: WorkerLost) -> QuarantinedTask:
    return QuarantinedTask(task_id=task_id_for(plan, task_seed(seed, plan)), plan_hash=plan.plan_hash(),
                           stage="worker", reason=f"{lost.error_type}: {lost.message}")


def _start_worker(built: PackedLibrary, seed: int, config: GenerationConfig,
                  backends: BackendRecipe) -> None:
    pool = backends.runtime_pool()
    multiprocessing.util.Finalize(pool, pool.close, exitpriority=10)  # worker processes skip atexit
    _WORKER.update(built=built, seed=seed, config=config, writer=backends.instruction_writer(), pool=pool)


def _worker_task(plan: Plan | WorkflowDraft) -> PackedTask | QuarantinedTask:
    return _task_from_plan(plan, _WORKER["built"], _WORKER["seed"], _WORKER["config"], _WORKER["writer"],
                           _WORKER["pool"])
