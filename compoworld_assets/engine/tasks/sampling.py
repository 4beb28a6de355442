"""Seeded random walks over the dependency graph, turned into fully bound plans.

A walk draws services, then tools: it starts in a service (favouring those in fewer plans so far, and not
those whose last walks gave no new plan), and each next step picks a service by the mean weight of its
edges, then one of those edges. Drawn by tool, a service with a thousand tools (GitHub's API in the
APIs.guru corpus) started most walks and drew most of the others into it.

A walk moves along graph edges, preferring edges that cross a service boundary, carry an entity
reference, lead to a state-changing tool, and have not been used by earlier walks of the same batch
(coverage); it prefers the pairs a workflow chains (a read, then an act on what
was read; a create, then a notice to whoever it concerns) over handing a person's email from
one new record to another, and avoids looking records up by a value that is not a reference
(an email from one service often matches nothing in another, so the look-up comes back
empty). Person edges already join compatible roles only (:mod:`.graph`). Only walkable tools (node
attribute ``walkable``: code, or a world-model tool whose result is type-checked and whose state
change the spec determines, :func:`.graph.simulation_walkable`) are used, so replaying a plan is
deterministic and its effects are checkable. A simulated ``action`` (its spec names no effect) is
walked only where its result feeds the next step or the answer: a walk ends only on a step the
rubric can check (:func:`can_end_a_task`), and it is never the write a plan needs (``require_write``):
offline it changes nothing a criterion could check.

Every service with a cross-service edge gets its chances: while some such service is in no accepted
plan yet, a share of the walks (``bridge_probability``) starts on one of its cross-service edges (a
"bridge", in or out of it), until it is covered or ``bridge_attempts`` such walks failed; in the second
half of the round the same holds for services in fewer than ``bridge_plans`` plans (instantiation may
still lose a plan to values no world can give, and a service's only plan with it). Without
this a service of a few tools joined to a large library by one edge is almost never reached. A bridge
is an edge a walk can go on from (its target ends a task or leads on): an edge into a simulated action
that returns nothing is a dead end, and a service joined only by such edges is not reachable
(:func:`bridged_services`).

Every required argument of a step is bound (:class:`ArgBinding`):

* the parameter named by the walked edge: ``step_output`` of the previous step at the edge's
  output path (``items[]`` becomes ``items[0]``);
* other information-carrying parameters (entity references, emails...): the most recent
  earlier output of the same type whose person role fits the parameter's and that no other
  parameter of the step takes already, else ``user_known``. A user-known binding's ``path`` names
  where instantiation draws the real value from: ``service.Entity.field`` for a record key,
  a list filter or a search query (so the lookup finds something), or None for "any value of
  this type in the world";
* everything else (free text, numbers, enums, dates): a ``constant`` left open (``value=None``);
  instantiation draws it from the task's world (:mod:`compoworld_assets.engine.tasks.arguments`);
* a create whose record a later step reads a field of is also given that field's parameter, bound as
  above (left out, the record would hold the field empty and the later step get ``''``).

A list step gets one filter (never a paging parameter, :func:`is_paging_parameter`) and a plain update
one changed field (a parameter its record has as a field, when it has one), so neither is a no-op.
Walks without a ``step_output`` binding that crosses a service boundary are rejected, and
plans are deduplicated by :meth:`Plan.plan_hash`. With ``level_mix`` the sampler keeps plans
until each difficulty level (:func:`.difficulty.plan_level`) has its share, topping up from the
others when a level runs short.
"""

from __future__ import annotations

import itertools
import random
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

import networkx as nx

from compoworld_assets.engine.library.roles import compatible, output_role, parameter_role
from compoworld_assets.engine.library.seeding import url_reaches, wanted_role
from compoworld_assets.engine.library.wording import words
from compoworld_assets.engine.specs.model import (
    READ_ONLY_EFFECTS,
    Effect,
    ServiceSpec,
    ToolSpec,
)
from compoworld_assets.engine.tasks.difficulty import parse_mix, plan_level
from compoworld_assets.engine.tasks.graph import (
    PERSON_TYPES,
    always_present_paths,
    carries_information,
    reportable_path,
)
from compoworld_assets.engine.tasks.model import ArgBinding, Plan, PlanStep
from compoworld_assets.engine.types import TYPE_KEY, is_entity_ref

EdgeId = tuple[str, str, str]
_SEGMENT_END = re.compile(r"[.\[]")
PAGING_WORDS = frozenset({"page", "pages", "per", "size", "offset", "limit", "skip", "take", "cursor", "token",
                          "marker", "max", "results", "items", "continuation", "next", "starting", "start", "top", "after", "before"})
NOTICE_WORDS = frozenset({"send", "notify", "invite", "share", "email", "message", "post", "reply", "remind",
                          "announce", "to", "recipient", "attendee", "invitee"})


@dataclass(frozen=True)
class WalkConfig:
    min_length: int = 2
    max_length: int = 5
    min_services: int = 2
    cross_service_bonus: float = 3.0
    reference_bonus: float = 2.0
    write_bonus: float = 1.5
    uncovered_bonus: float = 2.0
    value_lookup_factor: float = 0.1
    read_act_bonus: float = 2.0
    create_notify_bonus: float = 2.0
    person_chain_factor: float = 0.4
    stop_probability: float = 0.35
    require_write: bool = True
    attempts_per_plan: int = 40
    bridge_probability: float = 0.5
    bridge_attempts: int = 40
    bridge_plans: int = 3  # in a round's second half, plans a bridged service is walked into before bridging leaves it
    level_mix: tuple[tuple[str, float], ...] = ()  # e.g. (("easy", .3), ("medium", .4), ("hard", .3))
    level_style: str = "goal"  # the instruction style plan levels assume

    def __post_init__(self) -> None:
        if not 1 <= self.min_length <= self.max_length:
            raise ValueError("need 1 <= min_length <= max_length")
        if self.min_services < 1:
            raise ValueError("min_services must be >= 1")
        if self.level_mix:
            parse_mix(dict(self.level_mix))


@dataclass(frozen=True)
class _Edge:
    target: str
    key: str
    parameter: str
    output_path: str
    type: str
    cross_service: bool
    notice: bool = False


@dataclass
class _Tool:
    """What binding needs to know about one tool, computed once per sampling run."""

    service_id: str
    spec: ServiceSpec
    tool: ToolSpec
    key: str | None
    outputs: list[tuple[str, str]]
    can_end: bool = True  # see can_end_a_task
    writes: bool = False  # see _writes
    edges: list[_Edge] = field(default_factory=list)


@dataclass
class _Coverage:
    edges: Counter[EdgeId] = field(default_factory=Counter)
    starts: Counter[str] = field(default_factory=Counter)  # accepted walks by start tool
    services: Counter[str] = field(default_factory=Counter)  # accepted plans by service
    bridge_tries: Counter[str] = field(default_factory=Counter)
    misses: Counter[str] = field(default_factory=Counter)  # walks in a row from a service that gave no new plan


def sample_plans(graph: nx.MultiDiGraph, specs: Iterable[ServiceSpec], seed: int, n: int,
                 config: WalkConfig = WalkConfig()) -> list[Plan]:
    """Up to ``n`` distinct plans (fewer only when the attempts run out), deterministic in ``seed``."""
    specs = list(specs)
    tools = _tool_index(graph, specs)
    starts: dict[str, list[str]] = {}
    for name, info in sorted(tools.items()):
        if info.edges:
            starts.setdefault(info.service_id, []).append(name)
    if not starts:
        return []
    bridges = _bridges(tools)
    rng = random.Random(f"plans:{seed}")
    coverage = _Coverage()
    plans: list[Plan] = []
    spare: list[Plan] = []
    seen: set[str] = set()
    quota = _Quota(config, n, {s.id: s for s in specs})
    for _ in range(n * config.attempts_per_plan):
        if len(plans) >= n:
            break
        # first every bridged service its first plan; in the round's second half, more for those still in few
        wanted = 1 if len(plans) < n // 2 else config.bridge_plans
        origin, walk = _walk(tools, starts, bridges, coverage, rng, config, wanted)
        plan = _bind(walk, tools, rng) if walk else None
        if plan is None or not _acceptable(plan, tools, config) or plan.plan_hash() in seen:
            coverage.misses[origin] += 1
            continue
        coverage.misses[origin] = 0
        seen.add(plan.plan_hash())
        if not quota.take(plan):
            spare.append(plan)
            continue
        plans.append(plan)
        coverage.starts[walk[0][0]] += 1
        coverage.services.update(plan.services)
        coverage.edges.update((a[0], b[0], b[1].key) for a, b in itertools.pairwise(walk) if b[1] is not None)
    return plans + spare[:max(n - len(plans), 0)]


class _Quota:
    """How many plans of each level (:func:`.difficulty.plan_level`) a targeted mix still wants."""

    def __init__(self, config: WalkConfig, n: int, specs: dict[str, ServiceSpec]) -> None:
        self.specs = specs
        self.style = config.level_style
        self.left: dict[str, int] | None = None
        if config.level_mix:
            shares = parse_mix(dict(config.level_mix))
            self.left = {level: int(share * n) for level, share in shares.items()}
            for level in sorted(shares, key=lambda lv: -shares[lv])[:n - sum(self.left.values())]:
                self.left[level] += 1

    def take(self, plan: Plan) -> bool:
        if self.left is None:
            return True
        level = plan_level(plan, self.specs, self.style)
        if self.left[level] <= 0:
            return False
        self.left[level] -= 1
        return True


def edge_coverage(graph: nx.MultiDiGraph, plans: Iterable[Plan]) -> set[tuple[str, str]]:
    """The (source tool, target tool) pairs of consecutive plan steps joined by a step-output binding."""
    covered: set[tuple[str, str]] = set()
    for plan in plans:
        for step in plan.steps:
            for binding in step.args.values():
                if binding.kind == "step_output" and binding.step is not None:
                    pair = (plan.steps[binding.step].qualified_name, step.qualified_name)
                    if graph.has_edge(*pair):
                        covered.add(pair)
    return covered


def _tool_index(graph: nx.MultiDiGraph, specs: Iterable[ServiceSpec]) -> dict[str, _Tool]:
    by_id = {s.id: s for s in specs}
    tools: dict[str, _Tool] = {}
    for name, data in sorted(graph.nodes(data=True)):
        spec = by_id.get(data["service_id"])
        if spec is None or not data["walkable"]:
            continue
        tool = spec.tool(data["tool"])
        reliable = always_present_paths(tool.returns)
        outputs = sorted(((p, t) for p, t in tool.output_types().items() if p in reliable),
                         key=lambda item: ("[]" in item[0], item[0].count("."), item[0]))
        tools[name] = _Tool(data["service_id"], spec, tool, spec.key_parameter(tool), outputs,
                            can_end=data["code"] or can_end_a_task(tool), writes=_writes(tool, data["code"]))
    for name, info in tools.items():
        for _, target, key, data in sorted(graph.out_edges(name, keys=True, data=True)):
            if target in tools and not _finds_nothing(info.tool, tools[target].tool, data["output_path"]):
                info.edges.append(_Edge(target, key, data["parameter"], data["output_path"], data["type"],
                                        data["cross_service"], is_notice(tools[target], data["parameter"])))
    return tools


def can_end_a_task(tool: ToolSpec) -> bool:
    """Whether a simulated tool's step can be a plan's last: the rubric checks the record it names
    (not for an ``action``, whose spec names no effect), or the answer reports a field of its result."""
    return (tool.entity is not None and tool.effect != Effect.ACTION) or reportable_path(tool) is not None


def _writes(tool: ToolSpec, code: bool) -> bool:
    """Whether a step of ``tool`` changes state a rubric can check: any state-changing code tool, or a
    simulated create/update/delete (its spec names the record). A simulated ``action`` does not count:
    its spec names no effect, so the world model changes nothing a criterion could look at."""
    return tool.changes_state and (code or tool.effect != Effect.ACTION)


def _finds_nothing(source: ToolSpec, target: ToolSpec, output_path: str) -> bool:
    """Listing other records by the id of one just created: nothing can point at it yet."""
    return source.effect == Effect.CREATE and target.effect in (Effect.LIST, Effect.SEARCH) \
        and output_path == "id" and target.entity != source.entity


def bridged_services(graph: nx.MultiDiGraph, specs: Iterable[ServiceSpec]) -> set[str]:
    """The services a walk can reach across a service boundary (see :func:`_bridges`)."""
    return set(_bridges(_tool_index(graph, specs)))


def _bridges(tools: dict[str, _Tool]) -> dict[str, list[tuple[str, _Edge]]]:
    """Service id → the cross-service edges into or out of it that a walk can go on from, as (source tool,
    edge): the edge's target can end a task or leads on (a simulated action that returns nothing and feeds
    no other tool is a dead end, and a bridge into it could never become a plan)."""
    found: dict[str, list[tuple[str, _Edge]]] = {}
    for name, info in sorted(tools.items()):
        for edge in info.edges:
            if edge.cross_service and (tools[edge.target].can_end or tools[edge.target].edges):
                for service_id in (info.service_id, tools[edge.target].service_id):
                    found.setdefault(service_id, []).append((name, edge))
    return found


def _walk(tools: dict[str, _Tool], starts: dict[str, list[str]], bridges: dict[str, list[tuple[str, _Edge]]],
          coverage: _Coverage, rng: random.Random, config: WalkConfig, wanted: int
          ) -> tuple[str, list[tuple[str, _Edge | None]]]:
    """The service a walk was drawn for (its start, or the bridged service), and the walk (empty when too short)."""
    uncovered = [s for s in sorted(bridges)
                 if coverage.services[s] < wanted and coverage.bridge_tries[s] < config.bridge_attempts]
    if uncovered and rng.random() < config.bridge_probability:
        fewest = min(coverage.services[s] for s in uncovered)  # every service its first plan, then its second...
        service_id = rng.choice([s for s in uncovered if coverage.services[s] == fewest])
        coverage.bridge_tries[service_id] += 1
        source, edge = rng.choice(bridges[service_id])
        walk: list[tuple[str, _Edge | None]] = [(source, None), (edge.target, edge)]
    else:
        service_id = _start_service(starts, coverage, rng)
        names = starts[service_id]
        walk = [(rng.choices(names, weights=[1.0 / (1 + coverage.starts[n]) for n in names])[0], None)]
    visited = {name for name, _ in walk}
    while len(walk) < config.max_length:
        if len(walk) >= config.min_length and tools[walk[-1][0]].can_end and rng.random() < config.stop_probability:
            break
        current = walk[-1][0]
        options = [e for e in tools[current].edges if e.target not in visited]
        if not options:
            break
        edge = rng.choices(options, weights=_edge_weights(current, options, tools, coverage, config))[0]
        walk.append((edge.target, edge))
        visited.add(edge.target)
    while walk and not tools[walk[-1][0]].can_end:
        walk.pop()
    return service_id, (walk if len(walk) >= config.min_length else [])


def _start_service(starts: dict[str, list[str]], coverage: _Coverage, rng: random.Random) -> str:
    """The service a walk starts in (then one of its tools, favouring those fewer walks started from).

    Favoured: services in fewer plans so far, and not those whose last walks gave no new plan. Drawn by
    tool, a service with a thousand tools would start a hundred times the walks of one with ten; drawn
    by plans alone, a small service whose few distinct walks are all taken would keep its share of the
    attempts and the round would end short of its plans."""
    services = list(starts)
    weights = [1.0 / ((1 + coverage.services[s]) * (1 + coverage.misses[s])) for s in services]
    return rng.choices(services, weights=weights)[0]


def _edge_weights(source: str, options: list[_Edge], tools: dict[str, _Tool], coverage: _Coverage,
                  config: WalkConfig) -> list[float]:
    """The weights of a walk's next edges: each edge's :func:`_edge_weight`, shared out among the edges into
    the same service, so that a walk picks the next service by its edges' mean weight and not by how many
    tools it has (a service with a thousand tools taking a type would otherwise draw nearly every walk)."""
    into = Counter(tools[e.target].service_id for e in options)
    return [_edge_weight(source, e, tools, coverage, config) / into[tools[e.target].service_id] for e in options]


def _edge_weight(source: str, edge: _Edge, tools: dict[str, _Tool], coverage: _Coverage,
                 config: WalkConfig) -> float:
    weight = 1.0
    if edge.cross_service:
        weight *= config.cross_service_bonus
    if is_entity_ref(edge.type):
        weight *= config.reference_bonus
    target = tools[edge.target].tool
    if target.changes_state:
        weight *= config.write_bonus
    weight *= _workflow_factor(tools[source], edge, tools[edge.target], config)
    if target.effect in (Effect.LIST, Effect.SEARCH) and not is_entity_ref(edge.type):
        weight *= config.value_lookup_factor
    uses = coverage.edges[(source, edge.target, edge.key)]
    return weight * (config.uncovered_bonus if uses == 0 else 1.0 / (1 + uses))


def _workflow_factor(source: _Tool, edge: _Edge, target: _Tool, config: WalkConfig) -> float:
    """read → act and create → notify chains are preferred; a person passed from write to write is not."""
    effect = source.tool.effect
    if effect in READ_ONLY_EFFECTS and target.tool.changes_state:
        return config.read_act_bonus
    if edge.type not in PERSON_TYPES or not target.tool.changes_state:
        return 1.0
    if effect == Effect.CREATE and edge.notice:
        return config.create_notify_bonus
    return config.person_chain_factor if effect in (Effect.CREATE, Effect.UPDATE) else 1.0


def is_notice(target: _Tool, parameter: str) -> bool:
    """Whether ``target`` tells someone about something: a role-less recipient, or a sending tool."""
    named = set(words(target.tool.name)) | set(words(parameter))
    return bool(named & NOTICE_WORDS) or parameter_role(target.spec, target.tool, parameter) is None


def _acceptable(plan: Plan, tools: dict[str, _Tool], config: WalkConfig) -> bool:
    if len(plan.services) < config.min_services or _deletes_own_creation(plan, tools):
        return False
    if config.require_write and not any(tools[s.qualified_name].writes and tools[s.qualified_name].can_end
                                        for s in plan.steps):
        return False
    return crosses_services(plan)


def _deletes_own_creation(plan: Plan, tools: dict[str, _Tool]) -> bool:
    """Whether a delete removes a record the plan created (through reads of it): no trace is left."""
    for step in plan.steps:
        info = tools[step.qualified_name]
        if info.tool.effect != Effect.DELETE:
            continue
        binding = step.args.get(info.key or "")
        while binding is not None and binding.kind == "step_output" and binding.step is not None:
            source = tools[plan.steps[binding.step].qualified_name]
            if source.tool.entity != info.tool.entity or source.service_id != info.service_id:
                break
            if source.tool.effect == Effect.CREATE:
                return True
            binding = plan.steps[binding.step].args.get(source.key or "")
    return False


def crosses_services(plan: Plan) -> bool:
    """Whether some step takes a value produced by a step of another service."""
    return any(
        binding.kind == "step_output" and binding.step is not None
        and plan.steps[binding.step].service_id != step.service_id
        for step in plan.steps for binding in step.args.values()
    )


def concrete_path(output_path: str) -> str:
    """An output-types path made addressable: ``items[].id`` → ``items[0].id``."""
    return output_path.replace("[]", "[0]")


def _bind(walk: list[tuple[str, _Edge | None]], tools: dict[str, _Tool], rng: random.Random) -> Plan | None:
    steps: list[PlanStep] = []
    for index, (name, edge) in enumerate(walk):
        info = tools[name]
        args: dict[str, ArgBinding] = {}
        if edge is not None:
            args[edge.parameter] = ArgBinding(kind="step_output", step=index - 1,
                                              path=concrete_path(edge.output_path), type=edge.type)
        for parameter in _parameters_to_bind(info, args, rng):
            taken = {(b.step, b.path) for b in args.values() if b.kind == "step_output"}
            args[parameter] = _bind_parameter(info, parameter, steps, tools, taken)
        _give_read_fields(args, steps, tools)
        steps.append(PlanStep(index=index, service_id=info.service_id, tool=info.tool.name, args=args))
    return Plan(steps=steps)


def _give_read_fields(args: dict[str, ArgBinding], steps: list[PlanStep], tools: dict[str, _Tool]) -> None:
    """A step reads a field of a record an earlier step created: that create is given the field's parameter.

    A create's optional parameters are left out otherwise, and its record then holds the field empty (or
    whatever the service sets), so the later step would get ``''`` for an email or a folder.
    """
    for binding in args.values():
        if binding.kind != "step_output" or binding.step is None:
            continue
        source = steps[binding.step]
        info = tools[source.qualified_name]
        name = _SEGMENT_END.split(binding.path or "", maxsplit=1)[0]
        if info.tool.effect != Effect.CREATE or name in ("id", *source.args) \
                or name not in info.tool.parameter_properties():  # an id is the service's to give
            continue
        taken = {(b.step, b.path) for b in source.args.values() if b.kind == "step_output"}
        given = _bind_parameter(info, name, steps[:binding.step], tools, taken)
        steps[binding.step] = source.model_copy(update={"args": {**source.args, name: given}})


def _parameters_to_bind(info: _Tool, bound: dict[str, ArgBinding], rng: random.Random) -> list[str]:
    tool = info.tool
    params = tool.parameter_properties()
    wanted = [p for p in tool.required_parameters() if p in params and p not in bound]
    if tool.effect == Effect.LIST and not bound:
        filters = sorted((p for p in params if not is_paging_parameter(p)),
                         key=lambda p: (not _typed_lookup(params[p]), p))
        wanted += filters[:1]
    if tool.effect == Effect.UPDATE and not tool.sets:
        # A parameter the record has as a field, where there is one: another (a path's ``owner``) changes nothing.
        candidates = sorted(p for p in params
                            if p != info.key and p not in bound and not _is_reference(params[p]))
        written = {f.name for f in info.spec.entity(tool.entity).fields} if tool.entity else set()
        fields = [p for p in candidates if p in written] or candidates
        if fields:
            wanted.append(rng.choice(fields))
    return wanted


def is_paging_parameter(name: str) -> bool:
    """Whether a parameter only pages through a list (``limit``, ``nextToken``, ``per_page``, ``body_page_size``):
    every word of its name is a paging word, so it filters nothing a user would ask for."""
    named = [w for w in words(name) if w != "body"]
    return bool(named) and set(named) <= PAGING_WORDS


def _typed_lookup(schema: object) -> bool:
    return isinstance(schema, dict) and carries_information(schema.get(TYPE_KEY) or "")


def _is_reference(schema: object) -> bool:
    return isinstance(schema, dict) and is_entity_ref(schema.get(TYPE_KEY))


def _bind_parameter(info: _Tool, parameter: str, steps: list[PlanStep], tools: dict[str, _Tool],
                    taken: set[tuple[int | None, str | None]]) -> ArgBinding:
    schema = info.tool.parameter_properties()[parameter]
    type_name = schema.get(TYPE_KEY) if isinstance(schema, dict) else None
    entity = info.tool.entity
    if type_name and carries_information(type_name):
        wanted = wanted_role(info.spec, info.tool, parameter) if type_name in PERSON_TYPES else None
        for earlier in reversed(steps):
            source = tools[earlier.qualified_name]
            path = next((p for p, t in source.outputs if t == type_name
                         and (earlier.index, concrete_path(p)) not in taken
                         and (type_name not in PERSON_TYPES
                              or compatible(output_role(source.spec, source.tool, p), wanted))
                         and (type_name != "url"
                              or url_reaches(source.spec, source.tool, p, info.spec, info.tool, parameter))), None)
            if path is not None:
                return ArgBinding(kind="step_output", step=earlier.index, path=concrete_path(path),
                                  type=type_name)
        if is_entity_ref(type_name):
            return ArgBinding(kind="user_known", path=type_name, type=type_name)
    if info.tool.effect == Effect.LIST and entity and info.spec.entity(entity).field(parameter) is not None:
        return ArgBinding(kind="user_known", path=f"{info.service_id}.{entity}.{parameter}", type=type_name)
    if info.tool.effect == Effect.SEARCH and parameter == "query" and entity:
        text = _search_field(info)
        if text is not None:
            return ArgBinding(kind="user_known", path=f"{info.service_id}.{entity}.{text}")
    if type_name and carries_information(type_name):
        return ArgBinding(kind="user_known", type=type_name)
    return ArgBinding(kind="constant", type=type_name)


def _search_field(info: _Tool) -> str | None:
    entity = info.spec.entity(info.tool.entity or "")
    texts = [f for f in entity.fields if f.json_type == "string" and f.required and f.enum is None
             and (f.type is None or f.type in ("person_name", "company_name"))]
    return texts[0].name if texts else None
