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
    target_service: str
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
    weights: list[float] = field(default_factory=list)  # per edge, see _weigh_edges
    changed_fields: dict[tuple[str, ...], list[str]] = field(default_factory=dict)  # see _changed_field_choices


class _Coverage:
    """What a round's walks have covered so far, and each start service's weight (:func:`_start_service`),
    kept current as the counts change: recomputed for every service on every walk, the weights were a
    sixth of a paper-scale round's planning."""

    def __init__(self, start_services: Iterable[str]) -> None:
        self.edges: Counter[EdgeId] = Counter()
        self.starts: Counter[str] = Counter()  # accepted walks by start tool
        self.services: Counter[str] = Counter()  # accepted plans by service
        self.bridge_tries: Counter[str] = Counter()
        self.misses: Counter[str] = Counter()  # walks in a row from a service that gave no new plan
        self.start_services = list(start_services)
        self.start_weights = [1.0] * len(self.start_services)
        self._position = {s: i for i, s in enumerate(self.start_services)}

    def missed(self, origin: str) -> None:
        self.misses[origin] += 1
        self._reweigh(origin)

    def hit(self, origin: str) -> None:
        self.misses[origin] = 0
        self._reweigh(origin)

    def accept(self, plan: Plan, walk: list[tuple[str, _Edge | None]]) -> None:
        self.starts[walk[0][0]] += 1
        self.services.update(plan.services)
        self.edges.update((a[0], b[0], b[1].key) for a, b in itertools.pairwise(walk) if b[1] is not None)
        for service_id in plan.services:
            self._reweigh(service_id)

    def _reweigh(self, service_id: str) -> None:
        position = self._position.get(service_id)
        if position is not None:
            self.start_weights[position] = 1.0 / ((1 + self.services[service_id]) * (1 + self.misses[service_id]))


def sample_plans(graph: nx.MultiDiGraph, specs: Iterable[ServiceSpec], seed: int, n: int,
                 config: WalkConfig = WalkConfig(), covered: frozenset[str] = frozenset()) -> list[Plan]:
    """Up to ``n`` distinct plans (fewer only when the attempts run out), deterministic in ``seed``.

    ``covered``: services the round's other plans already use (its workflow drafts); walks start in the others
    while any of them can start one, so the walks reach what no workflow pattern fits."""
    specs = list(specs)
    tools = _tool_index(graph, specs)
    starts: dict[str, list[str]] = {}
    for name, info in sorted(tools.items()):
        if info.edges:
            starts.setdefault(info.service_id, []).append(name)
    starts = {s: names for s, names in starts.items() if s not in covered} or starts
    if not starts:
        return []
    bridges = _bridges(tools)
    _weigh_edges(tools, config)
    rng = random.Random(f"plans:{seed}")
    coverage = _Coverage(starts)
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
        plan = None
        if walk and _walk_acceptable(walk, tools, config):
            plan = _bind(walk, tools, rng)
        elif walk:  # nine in ten walks end here: refused before binding, with binding's draws (see _skip_binding)
            _skip_binding(walk, tools, rng)
        if plan is None or not _acceptable(plan, tools) or plan.plan_hash() in seen:
            coverage.missed(origin)
            continue
        coverage.hit(origin)
        seen.add(plan.plan_hash())
        if not quota.take(plan):
            spare.append(plan)
            continue
        plans.append(plan)
        coverage.accept(plan, walk)
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
    notices: dict[tuple[str, str], bool] = {}
    for name, info in tools.items():
        for _, target, key, data in sorted(graph.out_edges(name, keys=True, data=True)):
            if target in tools and not _finds_nothing(info.tool, tools[target].tool, data["output_path"]):
                parameter = data["parameter"]
                if (target, parameter) not in notices:
                    notices[target, parameter] = is_notice(tools[target], parameter)
                info.edges.append(_Edge(target, key, parameter, data["output_path"], data["type"],
                                        data["cross_service"], tools[target].service_id, notices[target, parameter]))
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
    """Service id (in order) → the cross-service edges into or out of it that a walk can go on from, as (source tool,
    edge): the edge's target can end a task or leads on (a simulated action that returns nothing and feeds
    no other tool is a dead end, and a bridge into it could never become a plan)."""
    found: dict[str, list[tuple[str, _Edge]]] = {}
    for name, info in sorted(tools.items()):
        for edge in info.edges:
            if edge.cross_service and (tools[edge.target].can_end or tools[edge.target].edges):
                for service_id in (info.service_id, tools[edge.target].service_id):
                    found.setdefault(service_id, []).append((name, edge))
    return dict(sorted(found.items()))


def _walk(tools: dict[str, _Tool], starts: dict[str, list[str]], bridges: dict[str, list[tuple[str, _Edge]]],
          coverage: _Coverage, rng: random.Random, config: WalkConfig, wanted: int
          ) -> tuple[str, list[tuple[str, _Edge | None]]]:
    """The service a walk was drawn for (its start, or the bridged service), and the walk (empty when too short)."""
    uncovered = [s for s in bridges
                 if coverage.services[s] < wanted and coverage.bridge_tries[s] < config.bridge_attempts]
    if uncovered and rng.random() < config.bridge_probability:
        fewest = min(coverage.services[s] for s in uncovered)  # every service its first plan, then its second...
        service_id = rng.choice([s for s in uncovered if coverage.services[s] == fewest])
        coverage.bridge_tries[service_id] += 1
        source, edge = rng.choice(bridges[service_id])
        walk: list[tuple[str, _Edge | None]] = [(source, None), (edge.target, edge)]
    else:
        service_id = _start_service(coverage, rng)
        names = starts[service_id]
        walk = [(rng.choices(names, weights=[1.0 / (1 + coverage.starts[n]) for n in names])[0], None)]
    visited = {name for name, _ in walk}
    while len(walk) < config.max_length:
        if len(walk) >= config.min_length and tools[walk[-1][0]].can_end and rng.random() < config.stop_probability:
            break
        current = walk[-1][0]
        options = [i for i, e in enumerate(tools[current].edges) if e.target not in visited]
        if not options:
            break
        edge = tools[current].edges[rng.choices(options, weights=_edge_weights(current, options, tools, coverage,
                                                                                   config))[0]]
        walk.append((edge.target, edge))
        visited.add(edge.target)
    while walk and not tools[walk[-1][0]].can_end:
        walk.pop()
    return service_id, (walk if len(walk) >= config.min_length else [])


def _start_service(coverage: _Coverage, rng: random.Random) -> str:
    """The service a walk starts in (then one of its tools, favouring those fewer walks started from).

    Favoured: services in fewer plans so far, and not those whose last walks gave no new plan
    (:meth:`_Coverage._reweigh`). Drawn by tool, a service with a thousand tools would start a hundred times
    the walks of one with ten; drawn by plans alone, a small service whose few distinct walks are all taken
    would keep its share of the attempts and the round would end short of its plans."""
    return rng.choices(coverage.start_services, weights=coverage.start_weights)[0]


def _weigh_edges(tools: dict[str, _Tool], config: WalkConfig) -> None:
    """Each tool's ``weights``: the part of :func:`_edge_weights` that coverage does not change, per edge."""
    for name, info in tools.items():
        info.weights = [_fixed_weight(name, e, tools, config) for e in info.edges]


def _edge_weights(source: str, options: list[int], tools: dict[str, _Tool], coverage: _Coverage,
                  config: WalkConfig) -> list[float]:
    """The weights of a walk's next edges (``options``, positions in the source's ``edges``): each edge's fixed
    weight times its coverage factor (an edge no accepted walk used yet gets ``uncovered_bonus``, one used
    ``u`` times ``1 / (1 + u)``), shared out among the edges into the same service, so that a walk picks the
    next service by its edges' mean weight and not by how many tools it has (a service with a thousand tools
    taking a type would otherwise draw nearly every walk)."""
    info = tools[source]
    edges, fixed, used = info.edges, info.weights, coverage.edges
    into = Counter(edges[i].target_service for i in options)
    weights = []
    for i in options:
        edge = edges[i]
        uses = used[(source, edge.target, edge.key)]
        weight = fixed[i] * (config.uncovered_bonus if uses == 0 else 1.0 / (1 + uses))
        weights.append(weight / into[edge.target_service])
    return weights


def _fixed_weight(source: str, edge: _Edge, tools: dict[str, _Tool], config: WalkConfig) -> float:
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
    return weight


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


def _walk_acceptable(walk: list[tuple[str, _Edge | None]], tools: dict[str, _Tool], config: WalkConfig) -> bool:
    """What a walk's plan needs that its tools alone decide: enough services, and a write the rubric can check."""
    if len({tools[name].service_id for name, _ in walk}) < config.min_services:
        return False
    return not config.require_write or any(tools[name].writes and tools[name].can_end for name, _ in walk)


def _acceptable(plan: Plan, tools: dict[str, _Tool]) -> bool:
    """What a bound plan of an acceptable walk (:func:`_walk_acceptable`) needs besides."""
    return not _deletes_own_creation(plan, tools) and crosses_services(plan)


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


def _skip_binding(walk: list[tuple[str, _Edge | None]], tools: dict[str, _Tool], rng: random.Random) -> None:
    """The draws :func:`_bind` would make for ``walk``, without binding it: a refused walk takes its share of
    the round's random stream as it did when it was bound first and refused after, so the plans of every
    round sampled before stay the same."""
    for name, edge in walk:
        fields = _changed_field_choices(tools[name], {edge.parameter} if edge is not None else set())
        if fields:
            rng.choice(fields)


def _parameters_to_bind(info: _Tool, bound: dict[str, ArgBinding], rng: random.Random) -> list[str]:
    tool = info.tool
    params = tool.parameter_properties()
    wanted = [p for p in tool.required_parameters() if p in params and p not in bound]
    if tool.effect == Effect.LIST and not bound:
        filters = sorted((p for p in params if not is_paging_parameter(p)),
                         key=lambda p: (not _typed_lookup(params[p]), p))
        wanted += filters[:1]
    fields = _changed_field_choices(info, bound)
    if fields:
        wanted.append(rng.choice(fields))
    return wanted


def _changed_field_choices(info: _Tool, bound: Iterable[str]) -> list[str]:
    """The parameters a plain update (one naming no ``sets``) may change, one drawn per step; none for
    other tools. A parameter the record has as a field, where there is one: another (a path's ``owner``)
    changes nothing. Worked out once per tool and bound parameters (``info.changed_fields``)."""
    tool = info.tool
    if tool.effect != Effect.UPDATE or tool.sets:
        return []
    bound = tuple(sorted(bound))
    if bound not in info.changed_fields:
        params = tool.parameter_properties()
        candidates = sorted(p for p in params if p != info.key and p not in bound and not _is_reference(params[p]))
        written = {f.name for f in info.spec.entity(tool.entity).fields} if tool.entity else set()
        info.changed_fields[bound] = [p for p in candidates if p in written] or candidates
    return info.changed_fields[bound]


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
