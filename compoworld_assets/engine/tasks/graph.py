"""The tool dependency graph: which tool's output can feed which tool's input.

Nodes are tools, named by their qualified name (``crm_get_contact``). Two kinds of edge:

* **type edge** ``t1 → t2``: an output path of ``t1`` carries a type that a parameter of
  ``t2`` takes. Only *information-carrying* types make edges: entity references
  (``crm.Contact.id``) and the identifying shared types in :data:`IDENTIFYING_TYPES`
  (email, phone, file path, URL). Dates, money, cities and the like are shared by almost
  every tool and say nothing about *which* record to act on, so they would connect nearly
  everything to everything. An identifying type only feeds a parameter that is required
  or that filters a list/search (an optional ``email`` of an update tool is an overwrite, not
  a lookup); entity references feed any parameter. Per (t1, t2, parameter) one output path is
  kept (the shortest, non-list paths first), only paths every result fills count (an optional
  field may be empty), a delete tool's output never feeds tools on the record it just deleted,
  and a create never feeds the delete of its own entity (the pair leaves no trace to check).
  A shared type's edges grow with producers × consumers (every URL output meets every URL
  parameter); above :data:`DENSE_PAIRS` pairs the type keeps a seeded sample of :data:`FANOUT`
  edges per producing tool and per consumer parameter (:func:`_type_edges`), so the graph grows
  linearly with the library.
* **state edge** ``t1 → t2`` (same service): ``t1`` creates or updates an entity that ``t2``
  reads, lists, searches, updates or deletes; the edge names the parameter of ``t2`` that
  finds the record (its key, a list filter or the search ``query``) and the output path of
  ``t1`` that fills it.

Person edges (emails, phones) join only compatible roles (:mod:`compoworld_assets.engine.library.roles`):
a candidate's email never fills a payslip's ``employee_email``; a role-less field (``to``,
``recipient_email``) goes with anyone, except where it filters a list or search: there it finds only
the people its records are seeded with (:func:`~compoworld_assets.engine.library.seeding.wanted_role`),
and a URL made for its record (anything but a company website) finds only records of the entity that
holds it (:func:`~compoworld_assets.engine.library.seeding.url_reaches`). The edge keeps the evidence
in ``roles``.

Node attributes: the tool's ``service_id``, ``tool``, ``domain``, ``effect``, ``entity``,
``changes_state``; ``code`` (it runs as verified code) and ``walkable`` (task walks may use it:
code, or a world-model tool that :func:`simulation_walkable` admits).

Edge attributes: ``kind``, ``type``, ``parameter``, ``output_path``, ``cross_service``, ``roles``.
"""

from __future__ import annotations

import math
import random
import statistics
from collections import Counter
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any, NamedTuple
from xml.sax.saxutils import escape

import networkx as nx
import polars as pl

from compoworld_assets.engine.library.roles import Role, compatible, output_role
from compoworld_assets.engine.library.seeding import url_reaches, wanted_role
from compoworld_assets.engine.service_build import BuiltService
from compoworld_assets.engine.specs.model import Effect, ServiceSpec, ToolSpec
from compoworld_assets.engine.synthesis.offline import is_code_tool
from compoworld_assets.engine.types import TYPE_KEY, entity_ref, is_entity_ref
from compoworld_assets.engine.values import matches_pattern, merge_all_of, shared_value

IDENTIFYING_TYPES = frozenset({"email", "phone", "file_path", "url"})
PERSON_TYPES = frozenset({"email", "phone"})
LOOKUP_EFFECTS = frozenset({Effect.READ, Effect.LIST, Effect.SEARCH, Effect.UPDATE, Effect.DELETE})
SEARCH_FIELD_TYPES = ("person_name", "company_name", None)
# A type whose producer outputs × consumer parameters exceed this gets sampled edges (see _type_edges).
DENSE_PAIRS = 100_000
# Edges kept per producing tool and per consumer parameter of a dense type.
FANOUT = 16
# A dense type's tool or parameter draws ``fanout`` × this many candidates to find ``fanout`` admissible ones.
FANOUT_DRAWS = 4
DOMAIN_COLOURS = ("#4a78b5", "#c0392b", "#27ae60", "#8e44ad", "#d68910", "#16a085", "#7f8c8d", "#d35400",
                  "#2c3e50", "#b03a2e", "#1f618d", "#7d6608", "#117864", "#6c3483", "#a04000")

NODE_SCHEMA = {
    "qualified_name": pl.String, "service_id": pl.String, "tool": pl.String, "domain": pl.String,
    "effect": pl.String, "entity": pl.String, "changes_state": pl.Boolean, "code": pl.Boolean,
    "walkable": pl.Boolean, "in_degree": pl.Int64, "out_degree": pl.Int64,
}
EDGE_SCHEMA = {
    "source": pl.String, "target": pl.String, "source_service": pl.String, "target_service": pl.String,
    "kind": pl.String, "type": pl.String, "parameter": pl.String, "output_path": pl.String,
    "cross_service": pl.Boolean, "roles": pl.String,
}


def carries_information(type_name: str) -> bool:
    return is_entity_ref(type_name) or type_name in IDENTIFYING_TYPES


def simulation_walkable(tool: ToolSpec) -> bool:
    """Whether a world-model tool whose probe passed may be a step of a task.

    Its result is type-checked and seeded by the call and the state it reads (cached for an LLM), so a
    replay gives the same outcome. A read changes nothing; a create, update or delete of a named
    entity changes exactly the record the spec says
    (:func:`~compoworld_assets.engine.world_model.offline.spec_change`), so the rubric can check it;
    an ``action`` whose spec names no effect counts only through the result it hands the next step
    (the sampler never ends a walk on one). A write that names no entity has nothing to check.
    """
    if not tool.changes_state or tool.effect == Effect.ACTION:
        return True
    return tool.entity is not None and tool.effect in (Effect.CREATE, Effect.UPDATE, Effect.DELETE)


def runs_as_code(tool: ToolSpec, routes: Mapping[str, str] | None) -> bool:
    """Whether ``tool`` runs as verified code: as ``routes`` (tool → ``code``/``world_model``, a built service's
    ``implementation``) says, else by the offline synthesizer's rule."""
    return routes[tool.name] == "code" if routes and tool.name in routes else is_code_tool(tool)


def build_dependency_graph(specs: Iterable[ServiceSpec],
                           implementation: Mapping[str, Mapping[str, str]] | None = None,
                           simulated: Mapping[str, Iterable[str]] | None = None,
                           fanout: int | None = FANOUT) -> nx.MultiDiGraph:
    """The dependency graph of ``specs``.

    ``implementation`` (service id → tool → ``code``/``world_model``, as in ``BuiltService``)
    marks which tools run as deterministic code (node attribute ``code``); for tools it does
    not list the offline synthesizer's rule decides. ``simulated`` (service id → the world-model
    tools whose probe passed, ``BuiltService.simulated``) lets those of them that
    :func:`simulation_walkable` admits be walked (node attribute ``walkable``). ``fanout`` bounds the
    type edges of a dense type (:func:`_type_edges`); None keeps every one.
    """
    specs = sorted(specs, key=lambda s: s.id)
    graph = nx.MultiDiGraph()
    for spec in specs:
        routes = (implementation or {}).get(spec.id)
        usable = set((simulated or {}).get(spec.id, ()))
        for tool in spec.tools:
            code = runs_as_code(tool, routes)
            walkable = code or (tool.name in usable and simulation_walkable(tool))
            graph.add_node(spec.qualified_tool_name(tool.name), service_id=spec.id, tool=tool.name,
                           domain=spec.domain, effect=tool.effect.value if tool.effect else None,
                           entity=tool.entity, changes_state=tool.changes_state, code=code, walkable=walkable)
    type_edges, graph.graph["sampled_types"] = _type_edges(specs, fanout)
    for spec in specs:
        for tool in spec.tools:
            source = spec.qualified_tool_name(tool.name)
            for (target, parameter), (path, type_name, roles) in sorted(type_edges.get(source, {}).items()):
                graph.add_edge(source, target, key=f"type:{parameter}:{path}", kind="type", type=type_name,
                               parameter=parameter, output_path=path,
                               cross_service=graph.nodes[target]["service_id"] != spec.id, roles=roles)
            _add_state_edges(graph, spec, tool)
    return graph


def built_services_graph(built: Mapping[str, BuiltService]) -> nx.MultiDiGraph:
    """The dependency graph of built services, with their tools' implementations and probe results."""
    return build_dependency_graph([built[sid].spec for sid in sorted(built)],
                                  {sid: b.implementation for sid, b in built.items()},
                                  {sid: b.simulated for sid, b in built.items()})


def _consumers_by_type(specs: list[ServiceSpec]) -> dict[str, list[_Consumer]]:
    """The parameters an information-carrying type may fill, by type (see the module doc)."""
    found: dict[str, list[_Consumer]] = {}
    for spec in specs:
        for tool in spec.tools:
            required = set(tool.required_parameters())
            params = tool.parameter_properties()
            for parameter, type_name in sorted(tool.input_types().items()):
                if not carries_information(type_name) or not admits_type_values(type_name, params[parameter]):
                    continue
                lookup = tool.effect in (Effect.LIST, Effect.SEARCH)
                if is_entity_ref(type_name) or parameter in required or lookup:
                    wanted = wanted_role(spec, tool, parameter) if type_name in PERSON_TYPES else None
                    found.setdefault(type_name, []).append(_Consumer(spec, tool, parameter, wanted))
    return found


# Values of a shared type drawn to test whether a parameter's pattern admits what other tools produce.
TYPE_VALUE_SAMPLES = 5


def admits_type_values(type_name: str, schema: Any) -> bool:
    """Whether the values of ``type_name`` other tools produce fit the parameter ``schema``'s ``pattern``.

    A pattern can say more than the shared type (an Azure container URL for ``url``, an ARN for an id):
    then any producer's URL would break the call, so the parameter takes no edge and its value is drawn
    from the pattern instead. Entity references name records, whose ids the service makes.
    """
    pattern = schema.get("pattern") if isinstance(schema, dict) else None
    return not isinstance(pattern, str) or is_entity_ref(type_name) or _pattern_admits(type_name, pattern)


@lru_cache(maxsize=4096)
def _pattern_admits(type_name: str, pattern: str) -> bool:
    values = (shared_value(type_name, random.Random(f"{type_name}:{i}")) for i in range(TYPE_VALUE_SAMPLES))
    return all(matches_pattern(pattern, str(value)) for value in values)


def _path_order(path: str) -> tuple[int, int, str]:
    return ("[]" in path, path.count("."), path)


class _Producer(NamedTuple):
    spec: ServiceSpec
    tool: ToolSpec
    path: str
    role: Role | None


class _Consumer(NamedTuple):
    spec: ServiceSpec
    tool: ToolSpec
    parameter: str
    role: Role | None  # the person it wants (wanted_role), for person types


# (producer output, consumer parameter, the edge's role evidence) of a pair the rules admit.
_Admitted = tuple[_Producer, _Consumer, str]


def _type_edges(specs: list[ServiceSpec], fanout: int | None
                ) -> tuple[dict[str, dict[tuple[str, str], tuple[str, str, str]]], list[str]]:
    """Source tool → (target tool, parameter) → (output path, type, roles) of every type edge, and the
    types whose edges were sampled.

    Per type, every producer output meets every consumer parameter while their pairs stay under
    :data:`DENSE_PAIRS`. Above it (a ``url`` of a corpus of thousands of APIs: the pairs grow with the
    square of the library) each producing tool keeps ``fanout`` admissible consumer parameters and each
    consumer parameter ``fanout`` admissible producing tools, drawn in an order seeded by their names,
    and the graph holds the union: the edges grow linearly, a tool keeps edges of the type unless
    none of its ``fanout`` × :data:`FANOUT_DRAWS` draws is admissible (a rare role among thousands),
    and the same library gives the same graph. A drawn pair meets every output of its tool, so the edge
    keeps the shortest admissible path, as an exact pair would.
    """
    consumers = _consumers_by_type(specs)
    producers = _producers_by_type(specs)
    found: dict[str, dict[tuple[str, str], tuple[str, str, str]]] = {}
    sampled: list[str] = []
    for type_name in sorted(set(producers) & set(consumers)):
        outs, ins = producers[type_name], consumers[type_name]
        if fanout is None or len(outs) * len(ins) <= DENSE_PAIRS:
            admitted = _admitted(((p, c) for p in outs for c in ins), type_name)
        else:
            sampled.append(type_name)
            admitted = (edge for edges in _sampled_pairs(outs, ins, type_name, fanout) for edge in edges)
        for producer, consumer, roles in admitted:
            source = producer.spec.qualified_tool_name(producer.tool.name)
            key = (consumer.spec.qualified_tool_name(consumer.tool.name), consumer.parameter)
            kept = found.setdefault(source, {}).get(key)
            if kept is None or _path_order(producer.path) < _path_order(kept[0]):
                found[source][key] = (producer.path, type_name, roles)
    return found, sampled


def type_pairs(specs: Iterable[ServiceSpec]) -> dict[str, tuple[int, int]]:
    """Type → (producer outputs, consumer parameters): how dense each type's edges would be."""
    specs = sorted(specs, key=lambda s: s.id)
    producers, consumers = _producers_by_type(specs), _consumers_by_type(specs)
    return {t: (len(producers[t]), len(consumers[t])) for t in sorted(set(producers) & set(consumers))}


def _sampled_pairs(outs: list[_Producer], ins: list[_Consumer], type_name: str,
                   fanout: int) -> Iterable[list[_Admitted]]:
    """The admitted pairs of each producing tool with up to ``fanout`` consumers, then of each consumer
    with up to ``fanout`` producing tools (a tool's pairs: those of its outputs that are admitted)."""
    by_tool: dict[str, list[_Producer]] = {}
    for producer in outs:
        by_tool.setdefault(producer.spec.qualified_tool_name(producer.tool.name), []).append(producer)
    tools = list(by_tool.values())
    for name, group in by_tool.items():
        draws = _draws(len(ins), fanout, f"{type_name}:{name}")
        yield from _first_admitted(([(p, ins[i]) for p in group] for i in draws), type_name, fanout)
    for consumer in ins:
        draws = _draws(len(tools), fanout,
                       f"{type_name}:{consumer.spec.qualified_tool_name(consumer.tool.name)}:{consumer.parameter}")
        yield from _first_admitted(([(p, consumer) for p in tools[i]] for i in draws), type_name, fanout)


def _draws(n: int, fanout: int, name: str) -> list[int]:
    return random.Random(f"fanout:{name}").sample(range(n), min(n, fanout * FANOUT_DRAWS))


def _first_admitted(candidates: Iterable[list[tuple[_Producer, _Consumer]]], type_name: str,
                    fanout: int) -> list[list[_Admitted]]:
    """The first ``fanout`` candidates (a producing tool's outputs with one consumer) with an admitted pair."""
    kept: list[list[_Admitted]] = []
    for pairs in candidates:
        if len(kept) == fanout:
            break
        admitted = list(_admitted(pairs, type_name))
        if admitted:
            kept.append(admitted)
    return kept


def _admitted(pairs: Iterable[tuple[_Producer, _Consumer]], type_name: str) -> Iterable[_Admitted]:
    for producer, consumer in pairs:
        roles = _admits(producer, consumer, type_name)
        if roles is not None:
            yield producer, consumer, roles


def _producers_by_type(specs: list[ServiceSpec]) -> dict[str, list[_Producer]]:
    """The reliable output paths of every tool that carry information, by type, shortest paths first."""
    found: dict[str, list[_Producer]] = {}
    for spec in specs:
        for tool in spec.tools:
            reliable = always_present_paths(tool.returns)
            for path, type_name in sorted(tool.output_types().items(), key=lambda item: _path_order(item[0])):
                if carries_information(type_name) and path in reliable:
                    role = output_role(spec, tool, path) if type_name in PERSON_TYPES else None
                    found.setdefault(type_name, []).append(_Producer(spec, tool, path, role))
    return found


def _admits(producer: _Producer, consumer: _Consumer, type_name: str) -> str | None:
    """The edge's role evidence when ``producer``'s output may fill ``consumer``'s parameter, else None."""
    spec, tool, target_spec, target_tool = producer.spec, producer.tool, consumer.spec, consumer.tool
    if spec.id == target_spec.id and tool.name == target_tool.name:
        return None
    if tool.effect == Effect.DELETE and tool.entity and type_name == entity_ref(spec.id, tool.entity):
        return None  # the record it just deleted
    if _undoes(tool, target_tool, spec, target_spec):
        return None
    if type_name == "url" and not url_reaches(spec, tool, producer.path, target_spec, target_tool, consumer.parameter):
        return None
    if not compatible(producer.role, consumer.role):
        return None
    return role_evidence(producer.role, consumer.role)


def role_evidence(produced: Role | None, wanted: Role | None) -> str:
    """``customer (payer_email: word 'payer') -> anyone`` for a person edge; empty for other edges."""
    if produced is None and wanted is None:
        return ""
    return f"{produced or 'anyone'} -> {wanted or 'anyone'}"


def always_present_paths(schema: Any, path: str = "") -> set[str]:
    """Output paths (as in ``ToolSpec.output_types``) that every successful result fills.

    A path is always present when each property on the way is required and not nullable; list
    items count as present (a look-up that finds nothing fails at instantiation instead).
    """
    if not isinstance(schema, dict) or _nullable(schema):
        return set()
    found = {path or "$"}
    required = set(schema.get("required") or [])
    for name, sub in (schema.get("properties") or {}).items():
        if name in required:
            found |= always_present_paths(sub, f"{path}.{name}" if path else name)
    if isinstance(schema.get("items"), dict):
        found |= always_present_paths(schema["items"], f"{path}[]")
    return found


SCALAR_JSON_TYPES = ("string", "integer", "number", "boolean")


def reportable_path(tool: ToolSpec) -> str | None:
    """A top-level field of ``tool``'s result that a final answer can report.

    For a last step that names no record (an entity-less read or an ``action``) the answer is what
    checks it: a non-nullable scalar of the returns object, required ones first, then shared-typed
    ones; ``$`` (the whole result) when the tool returns one scalar (a check that answers ``"true"``).
    An optional field the gold run's result lacks makes the task fail at instantiation
    (quarantined), never a check of nothing.
    """
    schema = merge_all_of(tool.returns) if isinstance(tool.returns, dict) else {}
    if _nullable(schema):
        return None
    if schema.get("type") in SCALAR_JSON_TYPES and schema.get("format") != "binary":
        return "$"
    required = set(schema.get("required") or [])
    candidates = []
    for name, sub in (schema.get("properties") or {}).items():
        field = merge_all_of(sub) if isinstance(sub, dict) else None
        if field is not None and not _nullable(field) and field.get("type") in SCALAR_JSON_TYPES \
                and field.get("format") != "binary":
            candidates.append((name not in required, not field.get(TYPE_KEY), name))
    return min(candidates)[2] if candidates else None


def _nullable(schema: dict[str, Any]) -> bool:
    branches = schema.get("anyOf") or schema.get("oneOf") or []
    return schema.get("type") == "null" or any(
        isinstance(b, dict) and b.get("type") == "null" for b in branches)


def _undoes(tool: ToolSpec, target: ToolSpec, spec: ServiceSpec, target_spec: ServiceSpec) -> bool:
    """Deleting the record just created: a walk through this edge leaves no trace to check."""
    return (spec.id == target_spec.id and tool.effect == Effect.CREATE and target.effect == Effect.DELETE
            and tool.entity == target.entity)


def _add_state_edges(graph: nx.MultiDiGraph, spec: ServiceSpec, tool: ToolSpec) -> None:
    if tool.effect not in (Effect.CREATE, Effect.UPDATE) or tool.entity is None:
        return
    source = spec.qualified_tool_name(tool.name)
    reliable = always_present_paths(tool.returns)
    outputs = {p: t for p, t in tool.output_types().items() if p in reliable}
    record_fields = set(tool.returns.get("properties") or {})
    for target_tool in spec.tools:
        if target_tool.entity != tool.entity or target_tool.effect not in LOOKUP_EFFECTS \
                or _undoes(tool, target_tool, spec, spec):
            continue
        target = spec.qualified_tool_name(target_tool.name)
        if target == source:
            continue
        link = _state_link(spec, target_tool, outputs, record_fields)
        if link is None:
            continue
        parameter, path = link
        graph.add_edge(source, target, key=f"state:{parameter}:{path}", kind="state",
                       type=entity_ref(spec.id, tool.entity), parameter=parameter, output_path=path,
                       cross_service=False, roles="")


def _state_link(spec: ServiceSpec, target: ToolSpec, outputs: dict[str, str],
                record_fields: set[str]) -> tuple[str, str] | None:
    """(parameter of ``target`` that finds the record, output path that fills it), or None."""
    key = spec.key_parameter(target)
    if key is not None and "id" in outputs:
        return key, "id"
    params = target.parameter_properties()
    if target.effect == Effect.LIST:
        filters = sorted((p for p in params if p in record_fields and p in outputs),
                         key=lambda p: (not carries_information(outputs[p]), p))
        return (filters[0], filters[0]) if filters else None
    if target.effect == Effect.SEARCH and "query" in params:
        entity = spec.entity(target.entity or "")
        for wanted in SEARCH_FIELD_TYPES:
            field = next((f for f in entity.fields
                          if f.json_type == "string" and f.required and f.enum is None
                          and f.type == wanted and f.name in record_fields), None)
            if field is not None:
                return "query", field.name
    return None


def graph_tables(graph: nx.MultiDiGraph) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(nodes, edges) as polars tables with fixed schemas."""
    nodes = [
        {"qualified_name": name, "service_id": data["service_id"], "tool": data["tool"],
         "domain": data["domain"],
         "effect": data["effect"], "entity": data["entity"], "changes_state": data["changes_state"],
         "code": data["code"], "walkable": data["walkable"], "in_degree": graph.in_degree(name), "out_degree": graph.out_degree(name)}
        for name, data in sorted(graph.nodes(data=True))
    ]
    edges = [
        {"source": u, "target": v, "source_service": graph.nodes[u]["service_id"],
         "target_service": graph.nodes[v]["service_id"], "kind": d["kind"], "type": d["type"],
         "parameter": d["parameter"], "output_path": d["output_path"], "cross_service": d["cross_service"],
         "roles": d.get("roles", "")}
        for u, v, d in sorted(graph.edges(data=True), key=_edge_order)
    ]
    return pl.DataFrame(nodes, schema=NODE_SCHEMA), pl.DataFrame(edges, schema=EDGE_SCHEMA)


def graph_from_tables(nodes: pl.DataFrame, edges: pl.DataFrame) -> nx.MultiDiGraph:
    """The graph :func:`graph_tables` stored: the same nodes, attributes, edge keys and edge attributes."""
    graph = nx.MultiDiGraph()
    for row in nodes.iter_rows(named=True):
        graph.add_node(row["qualified_name"], service_id=row["service_id"], tool=row["tool"], domain=row["domain"],
                       effect=row["effect"], entity=row["entity"], changes_state=row["changes_state"],
                       code=row["code"], walkable=row["walkable"])
    for row in edges.iter_rows(named=True):
        graph.add_edge(row["source"], row["target"], key=f"{row['kind']}:{row['parameter']}:{row['output_path']}",
                       kind=row["kind"], type=row["type"], parameter=row["parameter"],
                       output_path=row["output_path"], cross_service=row["cross_service"],
                       roles=row.get("roles") or "")
    return graph


def _edge_order(edge: tuple[str, str, dict[str, Any]]) -> tuple[str, ...]:
    u, v, data = edge
    return u, v, data["kind"], data["parameter"], data["output_path"]


def graph_statistics(graph: nx.MultiDiGraph) -> dict[str, object]:
    n_edges = graph.number_of_edges()
    kinds = Counter(d["kind"] for _, _, d in graph.edges(data=True))
    cross = sum(1 for _, _, d in graph.edges(data=True) if d["cross_service"])
    components = sorted((len(c) for c in nx.weakly_connected_components(graph)), reverse=True)
    out_degrees = [d for _, d in graph.out_degree()]
    in_degrees = [d for _, d in graph.in_degree()]
    services = sorted({d["service_id"] for _, d in graph.nodes(data=True)})
    return {
        "nodes": graph.number_of_nodes(),
        "edges": n_edges,
        "edges_per_tool": round(n_edges / graph.number_of_nodes(), 2) if graph.number_of_nodes() else 0.0,
        "sampled_types": list(graph.graph.get("sampled_types", [])),
        "edges_by_kind": dict(sorted(kinds.items())),
        "cross_service_edges": cross,
        "cross_service_share": round(cross / n_edges, 4) if n_edges else 0.0,
        "largest_wcc": components[0] if components else 0,
        "components": len(components),
        "isolated_nodes": sum(1 for n in graph if graph.degree(n) == 0),
        "out_degree": _summary(out_degrees),
        "in_degree": _summary(in_degrees),
        "services": len(services),
        "service_pairs_connected": service_level_graph(graph).number_of_edges(),
    }


def _summary(values: list[int]) -> dict[str, float]:
    if not values:
        return {"mean": 0.0, "median": 0.0, "max": 0.0}
    return {"mean": round(statistics.fmean(values), 2), "median": float(statistics.median(values)),
            "max": float(max(values))}


def service_level_graph(graph: nx.MultiDiGraph) -> nx.DiGraph:
    """Services as nodes; an edge per ordered pair of services joined by cross-service tool edges.

    Edge attribute ``weight`` counts the tool edges, ``types`` lists the types they carry.
    """
    services = nx.DiGraph()
    for _, data in graph.nodes(data=True):
        services.add_node(data["service_id"], domain=data["domain"])
    for u, v, data in graph.edges(data=True):
        if not data["cross_service"]:
            continue
        a, b = graph.nodes[u]["service_id"], graph.nodes[v]["service_id"]
        if services.has_edge(a, b):
            services[a][b]["weight"] += 1
            services[a][b]["types"].add(data["type"])
        else:
            services.add_edge(a, b, weight=1, types={data["type"]})
    for _, _, data in services.edges(data=True):
        data["types"] = sorted(data["types"])
    return services


def strongest_service_edges(services: nx.DiGraph, per_service: int) -> list[tuple[str, str, dict[str, Any]]]:
    """Each service's ``per_service`` heaviest outgoing pairs (ties: by target id), sorted."""
    kept = []
    for source in sorted(services):
        edges = sorted(services.out_edges(source, data=True), key=lambda e: (-e[2]["weight"], e[1]))
        kept += edges[:per_service]
    return sorted(kept)


def service_graph_svg(graph: nx.MultiDiGraph, per_service: int = 2, size: int = 900) -> str:
    """The service-level graph as an SVG picture: services on a circle grouped (and coloured) by domain,
    an arrow from each service to the ``per_service`` services its tools feed most (width grows with
    the number of tool edges; hovering shows the count and types). The library's services feed most
    other services, so drawing every pair would hide the structure; the caption says how many are drawn.

    Plain SVG text, so it needs no plotting library and the same graph always gives the same bytes.
    """
    services = service_level_graph(graph)
    order = sorted(services.nodes(data=True), key=lambda item: (item[1]["domain"], item[0]))
    domains = sorted({data["domain"] for _, data in order})
    centre, radius = size / 2, size / 2 - 225
    position = {}
    for index, (service_id, _) in enumerate(order):
        angle = 2 * math.pi * index / max(len(order), 1) - math.pi / 2
        position[service_id] = (centre + radius * math.cos(angle), centre + radius * math.sin(angle))
    drawn = strongest_service_edges(services, per_service)
    heaviest = max((d["weight"] for _, _, d in drawn), default=1)
    parts = [(f'<svg xmlns="http://www.w3.org/2000/svg" width="{size}" height="{size}" font-family="sans-serif" '
              f'font-size="11">'),
             f'<rect width="{size}" height="{size}" fill="white"/>',
             ('<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="9" markerHeight="9" '
              'markerUnits="userSpaceOnUse" orient="auto"><path d="M 0 0 L 10 5 L 0 10 z" fill="#445"/></marker>'
              '</defs>')]
    for a, b, data in drawn:
        (x1, y1), (x2, y2) = position[a], position[b]
        length = math.hypot(x2 - x1, y2 - y1) or 1.0
        x2, y2 = x2 - (x2 - x1) * 10 / length, y2 - (y2 - y1) * 10 / length
        # Bend every arrow the same way round, so a -> b and b -> a do not overlap.
        cx, cy = (x1 + x2) / 2 + (y2 - y1) * 0.15, (y1 + y2) / 2 - (x2 - x1) * 0.15
        width = 0.8 + 2.7 * math.log1p(data["weight"]) / math.log1p(heaviest)
        colour = DOMAIN_COLOURS[domains.index(services.nodes[a]["domain"]) % len(DOMAIN_COLOURS)]
        title = escape(f"{a} → {b}: {data['weight']} tool edges ({', '.join(data['types'])})")
        parts.append(f'<path d="M {x1:.1f} {y1:.1f} Q {cx:.1f} {cy:.1f} {x2:.1f} {y2:.1f}" fill="none" '
                     f'stroke="{colour}" stroke-opacity="0.6" stroke-width="{width:.2f}" marker-end="url(#arrow)">'
                     f'<title>{title}</title></path>')
    for service_id, data in order:
        x, y = position[service_id]
        colour = DOMAIN_COLOURS[domains.index(data["domain"]) % len(DOMAIN_COLOURS)]
        angle = math.degrees(math.atan2(y - centre, x - centre))
        anchor, rotate = ("end", angle + 180) if abs(angle) > 90 else ("start", angle)
        lx, ly = centre + (radius + 14) * (x - centre) / radius, centre + (radius + 14) * (y - centre) / radius
        label = escape(f"{service_id} ({data['domain']})")
        parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="7" fill="{colour}"><title>{label}: feeds '
                     f'{services.out_degree(service_id)} services, fed by {services.in_degree(service_id)}'
                     f'</title></circle>')
        parts.append(f'<text x="{lx:.1f}" y="{ly:.1f}" text-anchor="{anchor}" dominant-baseline="middle" '
                     f'transform="rotate({rotate:.1f} {lx:.1f} {ly:.1f})" fill="#222">{label}</text>')
    caption = (f"{services.number_of_nodes()} services, {services.number_of_edges()} connected pairs; "
               f"arrows: each service's {per_service} heaviest ({len(drawn)} drawn)")
    parts.append(f'<text x="{size / 2:.0f}" y="{size - 14}" text-anchor="middle" fill="#555">{escape(caption)}</text>')
    parts.append("</svg>")
    return "\n".join(parts)
