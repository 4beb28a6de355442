"""From a plan to a task: a seeded world, real user-known values, an instruction, house rules, a rubric.

The world holds the plan's services, all seeded from one
:class:`~compoworld_assets.engine.library.seeding.Population`; a few distractor services are named beside them,
mounted where an agent works at the state their service was built with, as the padding is (nothing in the task
refers to their records, and seeding them per task made a third of its JSON). User-known bindings get values
drawn from that world (so the customer's email really is a customer's email). The gold run of
the plan on a runtime gives the values the rubric checks.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from compoworld_assets.engine.canonical import content_hash
from compoworld_assets.engine.library.builder import snake_case
from compoworld_assets.engine.library.intents import entity_noun
from compoworld_assets.engine.library.population import Population
from compoworld_assets.engine.library.roles import Role, compatible
from compoworld_assets.engine.library.seeding import DEFAULT_ROWS, field_role, seed_world, wanted_role
from compoworld_assets.engine.runtime.state import WorldState
from compoworld_assets.engine.service_build import BuiltService
from compoworld_assets.engine.specs.importers.crud_returns import PAGE_EFFECTS, RECORD_EFFECTS
from compoworld_assets.engine.specs.model import READ_EFFECTS, Effect, ServiceSpec, ToolSpec
from compoworld_assets.engine.tasks.arguments import harmonize, realize_constants, satisfies
from compoworld_assets.engine.tasks.consistency import check_task
from compoworld_assets.engine.tasks.difficulty import task_difficulty
from compoworld_assets.engine.tasks.graph import reportable_path, runs_as_code
from compoworld_assets.engine.tasks.instructions import InstructionWriter, TemplateWriter
from compoworld_assets.engine.tasks.model import (
    ArgBinding,
    Criterion,
    InstructionStyle,
    Plan,
    PlanStep,
    Split,
    Task,
    ToolCallRecord,
)
from compoworld_assets.engine.tasks.packed import PackedLibrary
from compoworld_assets.engine.tasks.plan_exec import PlanExecutionError, WorldRuntimeLike, execute_plan
from compoworld_assets.engine.tasks.rubrics import GoldRun, build_rubric
from compoworld_assets.engine.tasks.sampling import crosses_services
from compoworld_assets.engine.tasks.traps import add_trap
from compoworld_assets.engine.types import is_entity_ref, parse_entity_ref
from compoworld_assets.engine.values import merge_all_of, schema_value

INCONSISTENT = "inconsistent values: "
INSTRUCTION_STYLES = ("goal", "explicit", "mixed")
COLLATERAL_RULE = "Change only what this request needs; leave every other record exactly as it is."


@dataclass(frozen=True)
class TaskConfig:
    """``instruction_style``: ``goal``, ``explicit`` or ``mixed`` (each task's style by the hash of its id)."""

    min_distractors: int = 2
    max_distractors: int = 4
    rows_per_entity: int = DEFAULT_ROWS
    traps: bool = True
    draws: int = 8
    today: str = "2026-06-01"
    instruction_style: str = "goal"

    def __post_init__(self) -> None:
        if self.instruction_style not in INSTRUCTION_STYLES:
            raise ValueError(f"instruction_style must be one of {INSTRUCTION_STYLES}")

    def style_for(self, task_id: str) -> InstructionStyle:
        if self.instruction_style != "mixed":
            return "explicit" if self.instruction_style == "explicit" else "goal"
        return "explicit" if int(content_hash(["style", task_id])[:8], 16) % 2 else "goal"


class TaskGenerationError(RuntimeError):
    """The plan cannot become a task in this world (no value to draw, a gold step failed...)."""


def specs_by_id(services: Mapping[str, ServiceSpec | BuiltService]) -> Mapping[str, ServiceSpec]:
    """The services' specs by id (a packed library's unpack as they are asked for)."""
    if isinstance(services, PackedLibrary):
        return services.specs
    return {sid: s.spec if isinstance(s, BuiltService) else s for sid, s in services.items()}


def simulated_tools(plan: Plan, services: Mapping[str, ServiceSpec | BuiltService]) -> frozenset[str]:
    """The qualified names of ``plan``'s tools that the world model serves (for a bare spec: by the offline
    synthesizer's rule)."""
    found = set()
    for step in plan.steps:
        service = services[step.service_id]
        spec, routes = (service.spec, service.implementation) if isinstance(service, BuiltService) else (service, None)
        if not runs_as_code(spec.tool(step.tool), routes):
            found.add(step.qualified_name)
    return frozenset(found)


def task_id_for(plan: Plan, seed: int) -> str:
    return "task_" + content_hash(["task", plan.plan_hash(), seed])[:16]


def draft_task(plan: Plan, services: Mapping[str, ServiceSpec | BuiltService], seed: int,
               split: Split = "train", writer: InstructionWriter | None = None,
               config: TaskConfig = TaskConfig(), draw: int = 0) -> Task:
    """A task without rubric or trap: world, resolved plan, report fields, instruction.

    ``draw`` selects another seeded choice of user-known values in the same world.
    """
    specs = specs_by_id(services)
    task = _draft(plan, specs, seed, split, config, draw)
    task.instruction = (writer or TemplateWriter()).write(task, specs)
    task.difficulty = task_difficulty(task, specs)
    return task


def _world(plan: Plan, specs: Mapping[str, ServiceSpec], seed: int,
           config: TaskConfig) -> tuple[list[str], WorldState]:
    """The distractor services and the seeded initial world of a plan's task (its needed services only, and of
    each the records its steps reach: :func:`_reached`)."""
    world = seed_world([specs[s] for s in plan.services], seed, config.rows_per_entity, entities=_reached(plan, specs))
    return distractor_services(plan.plan_hash(), plan.services, specs, seed, config), world


def _reached(plan: Plan, specs: Mapping[str, ServiceSpec]) -> dict[str, set[str]] | None:
    """The entities a plan's steps work on and its user-known values are drawn from, by service (the rest of a
    service's tables start empty); None (every table) when a step's tool names no entity."""
    found: dict[str, set[str]] = {}
    for step in plan.steps:
        entity = specs[step.service_id].tool(step.tool).entity
        if entity is None:
            return None
        found.setdefault(step.service_id, set()).add(entity)
        for binding in step.args.values():
            if binding.kind == "user_known" and binding.path and binding.path.count(".") == 2:
                service_id, table, _ = binding.path.split(".")
                found.setdefault(service_id, set()).add(table)
    return found


def distractor_services(plan_hash: str, needed: Iterable[str], specs: Mapping[str, ServiceSpec], seed: int,
                        config: TaskConfig) -> list[str]:
    """The services mounted beside a task's needed ones that it does not need (walks and workflows alike)."""
    rng = random.Random(f"distractors:{seed}:{plan_hash}")
    others = sorted(set(specs) - set(needed))
    count = min(len(others), rng.randint(config.min_distractors, config.max_distractors))
    return sorted(rng.sample(others, count))


def _draft(plan: Plan, specs: Mapping[str, ServiceSpec], seed: int, split: Split, config: TaskConfig,
           draw: int, world: tuple[list[str], WorldState] | None = None) -> Task:
    # Not copied: the drafts of one plan share its seeded world, which nothing changes in place (states are
    # values; whoever changes one takes a snapshot first, as the traps do).
    distractors, world_state = world or _world(plan, specs, seed, config)
    needed = plan.services
    rng = random.Random(f"task:{seed}:{plan.plan_hash()}:{draw}")
    resolved = Plan(steps=[_resolve_step(step, plan, world_state, specs, rng) for step in plan.steps])
    resolved = realize_constants(resolved, specs, Population.generate(seed), config.today, rng,
                                 config.rows_per_entity)
    report_sources = _report_sources(resolved, specs)
    task_id = task_id_for(plan, seed)
    return Task(
        task_id=task_id, seed=seed, split=split, domain=_domain(resolved, specs),
        services=needed, distractor_services=distractors, initial_state=world_state, instruction="",
        instruction_style=config.style_for(task_id),
        house_rules=[COLLATERAL_RULE], report_fields=list(report_sources), report_sources=report_sources,
        plan=resolved, rubric=[], capabilities=_capabilities(resolved, specs),
        today=config.today, walk_hash=plan.plan_hash(),
    )


def instantiate_task(plan: Plan, services: Mapping[str, ServiceSpec | BuiltService], seed: int,
                     split: Split, runtime_for: Callable[[Task], WorldRuntimeLike],
                     writer: InstructionWriter | None = None, config: TaskConfig = TaskConfig()) -> Task:
    """A complete task: a draft whose gold run on ``runtime_for(draft)`` succeeds, with its rubric.

    Up to ``config.draws`` drafts are tried (other user-known and constant values): the gold run
    must succeed, every update step must change its record and the values must pass the
    consistency validator (:func:`~compoworld_assets.engine.tasks.consistency.check_task`); constants
    are first harmonized with what the gold run resolved. Raises :class:`TaskGenerationError` otherwise.
    """
    specs = specs_by_id(services)
    problems: list[str] = []
    world = _world(plan, specs, seed, config)
    population = Population.generate(seed)
    for attempt in range(config.draws):
        task = _draft(plan, specs, seed, split, config, attempt, world)
        try:
            calls, final, answer = execute_plan(task, runtime_for(task))
            rng = random.Random(f"harmonize:{seed}:{plan.plan_hash()}:{attempt}")
            settled = harmonize(task.plan, calls, specs, task.initial_state, final, population, rng)
            if settled != task.plan:
                task = task.model_copy(update={"plan": settled})
                calls, final, answer = execute_plan(task, runtime_for(task))
        except PlanExecutionError as exc:
            problems.append(str(exc))
            continue
        idle = _idle_writes(task, specs, calls)
        violations = check_task(task, specs, calls, answer, simulated_tools(task.plan, services))
        if not idle and not violations:
            gold = GoldRun(calls, final, answer)
            trapped = add_trap(task, specs, gold, runtime_for) if config.traps else None
            if trapped is None:
                return _complete(task, task, specs, gold, [], writer or TemplateWriter())
            return _complete(trapped.task, trapped.asked, specs, trapped.gold, [trapped.criterion],
                             writer or TemplateWriter())
        problems.append(f"steps {idle} change nothing" if idle else
                        INCONSISTENT + "; ".join(str(v) for v in violations[:5]))
    raise TaskGenerationError(
        f"no draw of user-known values works ({config.draws} tried); last: {problems[-1]}")


def _idle_writes(task: Task, specs: Mapping[str, ServiceSpec], calls: list[ToolCallRecord]) -> list[int]:
    """Update steps that leave the fields they set as they were initially (a no-op the rubric cannot see)."""
    idle = []
    for step, call in zip(task.plan.steps, calls, strict=True):
        spec = specs[step.service_id]
        tool = spec.tool(step.tool)
        data = call.result.get("data")
        if tool.effect != Effect.UPDATE or not isinstance(data, dict):
            continue
        rows = task.initial_state.services[step.service_id].tables.get(tool.entity or "", {})
        before = rows.get(data.get("id"))
        names = {f.name for f in spec.entity(tool.entity or "").fields}
        fields = (set(call.arguments) | set(tool.sets)) & names
        if before is not None and all(before.get(f) == data.get(f) for f in fields):
            idle.append(step.index)
    return idle


def _complete(task: Task, asked: Task, specs: Mapping[str, ServiceSpec], gold: GoldRun,
              trap_criteria: list[Criterion], writer: InstructionWriter) -> Task:
    """The task with its rubric and instruction; ``asked`` is what the user asks for (a threshold
    trap keeps a write in the request that the gold plan, and the rubric, leave out)."""
    task = task.model_copy(update={"rubric": build_rubric(task, specs, gold) + trap_criteria})
    task.instruction = writer.write(asked, specs)
    task.difficulty = task_difficulty(task, specs)
    return task


def _resolve_step(step: PlanStep, plan: Plan, world: WorldState, specs: Mapping[str, ServiceSpec],
                  rng: random.Random) -> PlanStep:
    args = {}
    tool = specs[step.service_id].tool(step.tool)
    params = tool.parameter_properties()
    together = _one_record_filters(step, world, params, rng)
    for name, binding in step.args.items():
        if name in together:
            binding = binding.model_copy(update={"value": together[name]})
        elif binding.kind == "user_known":
            schema = params.get(name) if isinstance(params.get(name), dict) else {}
            candidates = [v for v in _world_values(name, binding, step, plan, world, specs) if satisfies(v, schema)]
            if candidates:
                binding = binding.model_copy(update={"value": rng.choice(candidates)})
            elif binding.path is None and not is_entity_ref(binding.type) and schema.get("pattern") \
                    and tool.effect not in PAGE_EFFECTS:
                # the world's values of the type have another form than the API's (``+1-555-…`` for E.164):
                # the user states one in the API's form (a look-up by it would find nobody: no fallback there)
                binding = binding.model_copy(update={"value": schema_value(schema, rng)})
            else:
                raise TaskGenerationError(
                    f"step {step.index} {name}: the world has no value for {binding.path or binding.type}")
        args[name] = binding
    return step.model_copy(update={"args": args})


def _one_record_filters(step: PlanStep, world: WorldState, params: Mapping[str, Any],
                        rng: random.Random) -> dict[str, Any]:
    """A step filtered by several fields of one table (a look-up by a channel and a plan) asks for
    what one record holds: those user-known values are drawn from one row, so the look-up finds it (drawn
    one by one, they rarely meet in a record)."""
    paths = {n: b.path.split(".") for n, b in step.args.items()
             if b.kind == "user_known" and b.path and b.path.count(".") == 2}
    tables = Counter((p[0], p[1]) for p in paths.values())
    table = next((t for t, count in sorted(tables.items()) if count > 1), None)
    if table is None or table[0] not in world.services:
        return {}
    names = sorted(n for n, p in paths.items() if (p[0], p[1]) == table)
    rows = world.services[table[0]].tables.get(table[1], {})

    def fits(row: dict[str, Any], name: str) -> bool:
        schema = params.get(name) if isinstance(params.get(name), dict) else {}
        return row.get(paths[name][2]) not in (None, "") and satisfies(row[paths[name][2]], schema)

    fitting = [rows[r] for r in sorted(rows) if all(fits(rows[r], n) for n in names)]
    if not fitting:
        return {}
    row = rng.choice(fitting)
    return {n: row[paths[n][2]] for n in names}


def _world_values(name: str, binding: ArgBinding, step: PlanStep, plan: Plan, world: WorldState,
                  specs: Mapping[str, ServiceSpec]) -> list[Any]:
    """Real values for a user-known binding: from the named table field, else any value of its type
    (for a person, from fields of a compatible role: an employee's email for ``employee_email``)."""
    if binding.path:
        service_id, entity, field = binding.path.split(".")
        if service_id in world.services:
            rows = world.services[service_id].tables.get(entity, {})
            return [rows[r][field] for r in sorted(rows) if rows[r].get(field) not in (None, "")]
    if binding.type is None:
        return []
    order = [step.service_id] + [s for s in plan.services if s != step.service_id] + sorted(world.services)
    spec = specs[step.service_id]
    wanted = wanted_role(spec, spec.tool(step.tool), name)
    for service_id in dict.fromkeys(order):
        if service_id in world.services:
            found = _typed_values(specs[service_id], world, binding.type, wanted)
            if found:
                return found
    return []


def _typed_values(spec: ServiceSpec, world: WorldState, type_name: str, wanted: Role | None) -> list[Any]:
    tables = world.services[spec.id].tables
    found: set[Any] = set()
    if is_entity_ref(type_name) and parse_entity_ref(type_name)[0] == spec.id:
        found |= set(tables.get(parse_entity_ref(type_name)[1], {}))
    for entity in spec.entities:
        for field in entity.fields:
            if field.type == type_name and compatible(field_role(spec, entity, field), wanted):
                found |= {r[field.name] for r in tables.get(entity.name, {}).values()
                          if isinstance(r.get(field.name), str) and r[field.name]}
    return sorted(found)


def _report_sources(plan: Plan, specs: Mapping[str, ServiceSpec]) -> dict[str, ArgBinding]:
    """The id (and for look-ups one telling field) of the record the last step returns; for a last
    step that names no record (an entity-less read, an action, or a derived transition that answers with
    the API's own response, such as an access token instead of the account it made), one field of its result."""
    last = plan.steps[-1]
    spec = specs[last.service_id]
    tool = spec.tool(last.tool)
    if tool.entity is None or tool.effect == Effect.ACTION or not _answers_with_record(tool):
        path = reportable_path(tool)
        if path is None:
            return {}
        return {"result" if path == "$" else snake_case(path): ArgBinding(kind="step_output", step=last.index, path=path)}
    if tool.effect == Effect.DELETE:
        return {}
    prefix = "items[0]." if tool.effect in (Effect.LIST, Effect.SEARCH) else ""
    noun = "_".join(entity_noun(spec, tool.entity).split())
    sources = {f"{noun}_id": ArgBinding(kind="step_output", step=last.index, path=f"{prefix}id")}
    if tool.effect in READ_EFFECTS:
        fields = spec.entity(tool.entity).fields
        telling = next((f for f in fields if f.required and f.type == "money"), None) or next(
            (f for f in fields if f.required and f.enum), None)
        if telling is not None:
            name = telling.name if telling.name.startswith(noun) else f"{noun}_{telling.name}"
            sources[name] = ArgBinding(kind="step_output", step=last.index, path=f"{prefix}{telling.name}",
                                       type=telling.type)
    return sources


def _answers_with_record(tool: ToolSpec) -> bool:
    """Whether the tool's result is its record (a page of records for a list), as the CRUD conventions state it;
    a returns schema that lists other properties (``{token, type}``) is the API's own answer."""
    if tool.effect not in RECORD_EFFECTS | PAGE_EFFECTS:
        return True
    declared = (merge_all_of(tool.returns) if isinstance(tool.returns, dict) else {}).get("properties") or {}
    return not declared or ("items" if tool.effect in PAGE_EFFECTS else "id") in declared


def _domain(plan: Plan, specs: Mapping[str, ServiceSpec]) -> str:
    counts = Counter(specs[s.service_id].domain for s in plan.steps)
    top = max(counts.values())
    return "+".join(sorted(d for d, c in counts.items() if c == top))


def _writes(plan: Plan, specs: Mapping[str, ServiceSpec]) -> list[PlanStep]:
    return [s for s in plan.steps if specs[s.service_id].tool(s.tool).changes_state]


def _capabilities(plan: Plan, specs: Mapping[str, ServiceSpec]) -> list[str]:
    found = set()
    flows = [(plan.steps[b.step], step) for step in plan.steps for b in step.args.values()
             if b.kind == "step_output" and b.step is not None]
    if flows:
        found.add("sequential-dependency")
    if crosses_services(plan):
        found.add("cross-env-data-flow")
    if any(a.service_id != b.service_id and specs[b.service_id].tool(b.tool).changes_state for a, b in flows):
        found.add("cross-service-constraint")
    if len({s.service_id for s in _writes(plan, specs)}) > 1:
        found.add("multi-service-write")
    if any(specs[s.service_id].tool(s.tool).effect in (Effect.LIST, Effect.SEARCH) for s in plan.steps):
        found.add("lookup")
    return sorted(found)
