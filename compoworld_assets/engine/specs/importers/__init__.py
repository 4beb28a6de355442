"""Importers from real tool-specification formats into :class:`ServiceSpec`.

Every entry point returns an :class:`ImportResult` and never raises for bad input: an unreadable
file, a malformed tool or a broken ``$ref`` becomes a :class:`QuarantinedSpec` and the rest
still imports. Files and documents are bounded first (:mod:`.limits`, :mod:`.document`), each
document is imported under a time limit, and tool schemas are repaired (:mod:`.schema_repair`);
:mod:`.guard` turns anything that still goes wrong into a quarantine row.

Format detection (``kind="auto"``): a document with an ``openapi``/``swagger`` key is OpenAPI;
a ``tools`` array whose entries have ``inputSchema`` (bare or in a JSON-RPC ``result``) is an MCP
tools/list result; a ``services`` header makes a CompoWorld gateway list; episodes with ``messages`` and
the four gateway meta-tools (the reference system's published trajectories) give the services their
replies show (:mod:`.trajectory_rows`); anything else is OpenAI/BFCL function JSON (BFCL when it uses
the Gorilla dialect).
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any, Literal

import yaml

from compoworld_assets.engine.specs.importers.compoworld import import_compoworld_tools, service_header
from compoworld_assets.engine.specs.importers.document import UnreadableSpec, parse_json
from compoworld_assets.engine.specs.importers.guard import guarded
from compoworld_assets.engine.specs.importers.mcp import import_mcp_tools, is_mcp_document
from compoworld_assets.engine.specs.importers.openai_functions import import_openai_functions
from compoworld_assets.engine.specs.importers.openapi import import_openapi
from compoworld_assets.engine.specs.importers.seed_data import attach_seed_data, companion_data, is_data_path
from compoworld_assets.engine.specs.importers.service_ids import (
    assign_service_ids,
    spec_fingerprint,
    with_service_id,
)
from compoworld_assets.engine.specs.importers.trajectory_rows import (
    import_trajectory_rows,
    is_trajectory_rows,
)
from compoworld_assets.engine.specs.limits import DEFAULT_LIMITS, ImportLimits
from compoworld_assets.engine.specs.model import ImportResult, QuarantinedSpec
from compoworld_assets.engine.workers import WorkerLost, run_isolated, worker_count

SpecKind = Literal["openai", "bfcl", "openapi", "mcp", "compoworld", "trajectories", "auto"]
SPEC_SUFFIXES = (".json", ".yaml", ".yml", ".jsonl")

__all__ = [
    "SpecKind",
    "dedupe_service_ids",
    "detect_kind",
    "import_compoworld_tools",
    "import_document",
    "import_mcp_tools",
    "import_openai_functions",
    "import_openapi",
    "import_spec_dir",
    "import_spec_file",
]


def _json_lines(text: str, location: str, kind: str) -> tuple[list[Any], list[QuarantinedSpec]]:
    documents: list[Any] = []
    bad: list[QuarantinedSpec] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            documents.append(parse_json(line))
        except (json.JSONDecodeError, UnreadableSpec) as error:
            bad.append(
                QuarantinedSpec.from_error(kind, f"{location}:{number}", f"invalid JSON line: {error}", line)
            )
    return documents, bad


def _starts_with_json_object_line(text: str) -> bool:
    """Whether ``text`` looks like JSON lines: its first line alone is a JSON object."""
    first_line = text.lstrip().split("\n", 1)[0]
    try:
        return isinstance(parse_json(first_line), dict)
    except (json.JSONDecodeError, UnreadableSpec):
        return False


def read_spec_file(
    path: Path, kind: str = "auto", limits: ImportLimits = DEFAULT_LIMITS
) -> tuple[Any, list[QuarantinedSpec]]:
    """Parse JSON, YAML or JSON lines (also JSON lines saved as ``.json``, as BFCL does).

    Bad lines of a JSON-lines file are quarantined; a file that yields nothing, or is larger than
    :attr:`ImportLimits.max_file_bytes`, raises UnreadableSpec.
    """
    try:
        size = path.stat().st_size
        if size > limits.max_file_bytes:
            raise UnreadableSpec(f"file is {size} bytes (the limit is {limits.max_file_bytes})")
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise UnreadableSpec(f"unreadable file: {error}") from error
    suffix = path.suffix.lower()
    if suffix in (".yaml", ".yml"):
        try:
            return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)), []
        except (yaml.YAMLError, RecursionError, ValueError, OverflowError) as error:
            raise UnreadableSpec(f"invalid YAML: {type(error).__name__}: {str(error)[:500]}") from error
    if suffix != ".jsonl":
        try:
            return parse_json(text, limits), []
        except json.JSONDecodeError as error:
            if not _starts_with_json_object_line(text):
                raise UnreadableSpec(f"invalid JSON: {error}") from error
            whole_file_error = error
    documents, bad = _json_lines(text, location_of(path), kind)
    if not documents:
        reason = f"invalid JSON: {whole_file_error}" if suffix != ".jsonl" else "no valid JSON lines"
        raise UnreadableSpec(reason)
    return documents, bad


def location_of(path: Path) -> str:
    """``path`` as storable text (undecodable bytes in a file name become U+FFFD)."""
    return os.fsencode(path).decode("utf-8", "replace")


def detect_kind(data: Any) -> Literal["openapi", "mcp", "compoworld", "trajectories", "functions"]:
    if isinstance(data, dict) and ("openapi" in data or "swagger" in data):
        return "openapi"
    if is_trajectory_rows(data):
        return "trajectories"
    if is_mcp_document(data):
        return "mcp"
    if service_header(data):
        return "compoworld"
    return "functions"


def import_document(
    data: Any,
    *,
    location: str,
    kind: SpecKind = "auto",
    service_id: str | None = None,
    domain: str | None = None,
    limits: ImportLimits = DEFAULT_LIMITS,
) -> ImportResult:
    """Import one parsed document of the given (or detected) kind; never raises (see :mod:`.guard`)."""
    return guarded(
        lambda clean: _import_kind(clean, location, kind, service_id, domain),
        data,
        kind=kind,
        location=location,
        limits=limits,
    )


def _import_kind(data: Any, location: str, kind: SpecKind, service_id: str | None, domain: str | None
                 ) -> ImportResult:
    detected = detect_kind(data) if kind == "auto" else kind
    if detected == "openapi":
        return import_openapi(data, location=location, service_id=service_id, domain=domain)
    if detected == "mcp":
        return import_mcp_tools(data, location=location, service_id=service_id, domain=domain)
    if detected == "compoworld":
        return import_compoworld_tools(data, location=location, domain=domain)
    if detected == "trajectories":
        return import_trajectory_rows(data, location=location, domain=domain)
    function_kind = detected if detected in ("openai", "bfcl") else None
    return import_openai_functions(
        data, location=location, service_id=service_id, domain=domain, kind=function_kind
    )


def import_spec_file(
    path: str | Path,
    kind: SpecKind = "auto",
    *,
    service_id: str | None = None,
    domain: str | None = None,
    limits: ImportLimits = DEFAULT_LIMITS,
) -> ImportResult:
    """Import one spec file; an unreadable file becomes a single quarantined entry."""
    path = Path(path)
    location = location_of(path)
    try:
        data, bad_lines = read_spec_file(path, kind, limits)
    except UnreadableSpec as error:
        return ImportResult(quarantined=[QuarantinedSpec.from_error(kind, location, error, _head(path))])
    result = import_document(data, location=location, kind=kind, service_id=service_id, domain=domain,
                             limits=limits)
    result.quarantined[:0] = bad_lines
    data_path = companion_data(path)
    if data_path is not None:
        _attach(result, data_path)
    return result


def _attach(result: ImportResult, data_path: Path) -> None:
    """Give the file's one service the seed world in ``data_path`` (:mod:`.seed_data`)."""
    location = location_of(data_path)
    if len(result.specs) != 1:
        result.quarantined.append(QuarantinedSpec.from_error(
            "seed_data", location, f"seed data needs a spec file with one service, this one has {len(result.specs)}",
            ""))
        return
    spec, rejected = attach_seed_data(result.specs[0], data_path, location)
    result.specs[0] = spec
    result.quarantined.extend(rejected)


def import_spec_dir(path: str | Path, kind: SpecKind = "auto") -> ImportResult:
    """Import every spec file under ``path`` (recursively, sorted), one service id per distinct API."""
    root = Path(path)
    result = ImportResult()
    if not root.is_dir():
        result.quarantined.append(QuarantinedSpec.from_error(kind, location_of(root), "not a directory", ""))
        return result
    files = sorted(p for p in root.rglob("*")
                   if p.is_file() and p.suffix.lower() in SPEC_SUFFIXES and not is_data_path(p.relative_to(root)))
    for imported in import_spec_files(files, kind):
        result.extend(imported)
    return dedupe_service_ids(result)


# A worker pays an interpreter start and the importers' imports (~1 s): worth it from this many files.
FILES_PER_WORKER = 64
# Files go to a worker this many at a time (one spec can be most of a corpus's bytes: GitHub's).
FILES_PER_BATCH = 4


def import_spec_files(files: list[Path], kind: SpecKind = "auto", workers: int | None = None) -> list[ImportResult]:
    """:func:`import_spec_file` of each file, in order; in ``workers`` processes (default: one per core for 64
    files or more; a paper-scale sample's 430 files took 13.8 s in one, 8.0 s in two), where a file whose import raises or kills
    its process is quarantined with why and the others are imported."""
    count = worker_count(len(files), FILES_PER_WORKER) if workers is None else workers
    if count <= 1:
        return [import_spec_file(file, kind) for file in files]
    outcomes = run_isolated([(str(file), kind) for file in files], _import_job, count, _start_importer,
                            batch=FILES_PER_BATCH)
    return [_lost(file, kind, outcome) if isinstance(outcome, WorkerLost) else outcome
            for file, outcome in zip(files, outcomes, strict=True)]


def _import_job(job: tuple[str, SpecKind]) -> ImportResult:
    return import_spec_file(*job)


def _start_importer() -> None:
    """Importer workers need no setup."""


def _lost(file: Path, kind: SpecKind, lost: WorkerLost) -> ImportResult:
    reason = f"the import failed: {lost.error_type}: {lost.message}"
    return ImportResult(quarantined=[QuarantinedSpec.from_error(kind, location_of(file), reason, _head(file))])


def dedupe_service_ids(result: ImportResult, seen: set[str] | None = None) -> ImportResult:
    """Give every distinct API its own service id (:mod:`.service_ids`); an API listed twice is quarantined.

    ``seen`` holds ids already in use (the built-in library's); an imported spec with one is renamed.
    """
    specs = result.specs
    # Only specs that share an original id are ever compared, so only they need a fingerprint.
    repeated = {sid for sid, n in Counter(spec.id for spec in specs).items() if n > 1}
    assigned = assign_service_ids(
        ((spec.id, spec.source.location, spec_fingerprint(spec) if spec.id in repeated else "") for spec in specs),
        seen or ())
    deduped = ImportResult(quarantined=list(result.quarantined))
    for spec, service_id in zip(specs, assigned, strict=True):
        if service_id is None:
            deduped.quarantined.append(QuarantinedSpec.from_error(
                spec.source.kind, spec.source.location,
                f"duplicate of service {spec.id!r}: same content as a spec imported before", spec.id))
        else:
            deduped.specs.append(with_service_id(spec, service_id))
    return deduped


def _head(path: Path) -> str:
    try:
        with path.open("rb") as handle:
            return handle.read(2000).decode("utf-8", errors="replace")
    except OSError:
        return ""
