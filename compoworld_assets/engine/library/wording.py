"""Names made readable: the words of identifiers, and operationIds split into phrases.

Tool, entity and field names come as ``snake_case``, ``camelCase``, ``CamelCase`` or, from
some imported specs, as one run of lower-case letters (``createnewdocument``). Run-together
names are split by a small dynamic programme over a vocabulary (common API verbs and nouns,
plus the words of the spec's own descriptions and names), so the split needs no outside data
and is deterministic.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from compoworld_assets.engine.specs.model import ServiceSpec

_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_TOKEN = re.compile(r"[A-Za-z]+")

API_WORDS = frozenset({
    "a", "add", "all", "an", "and", "api", "approve", "archive", "assign", "attach", "book", "by", "cancel",
    "change", "check", "close", "comment", "complete", "confirm", "contact", "copy", "create", "data",
    "delete", "detail", "details", "document", "download", "edit", "email", "enable", "disable", "event",
    "export", "fetch", "file", "find", "for", "from", "get", "group", "id", "import", "in", "info", "invite",
    "invoice", "issue", "item", "items", "job", "link", "list", "login", "logout", "mark", "message", "move",
    "new", "note", "of", "on", "open", "order", "page", "patch", "pay", "payment", "post", "profile",
    "publish", "put", "read", "record", "refund", "register", "reject", "remove", "rename", "reply", "report",
    "request", "reserve", "reset", "restore", "retrieve", "run", "save", "schedule", "search", "send", "set",
    "share", "show", "start", "status", "stop", "submit", "sync", "tag", "task", "the", "ticket", "to",
    "update", "upload", "user", "users", "vault", "verify", "view", "with", "workspace"
})


def words(name: str) -> list[str]:
    """Lower-case words of a snake_case, kebab-case, camelCase or CamelCase name."""
    return list(_words(name))


@lru_cache(maxsize=65536)
def _words(name: str) -> tuple[str, ...]:
    found: list[str] = []
    for part in re.split(r"[^A-Za-z0-9]+", name):
        found += [w.lower() for w in _CAMEL.findall(part)]
    return tuple(found)


def vocabulary(texts: Iterable[str]) -> frozenset[str]:
    """The API words plus every word (two letters or more) of ``texts``."""
    found = set(API_WORDS)
    for text in texts:
        found |= {w for token in _TOKEN.findall(text or "") for w in words(token) if len(w) > 1}
    return frozenset(found)


def split_run(run: str, known: frozenset[str]) -> list[str]:
    """A run of letters split into the fewest known words (unknown letters cost a lot).

    ``split_run("createnewdocument", vocab)`` → ``["create", "new", "document"]``; letters
    no known word covers stay together as one piece, and a run mostly of such letters stays whole.
    """
    n = len(run)
    best: list[tuple[float, list[str]]] = [(0.0, [])] + [(float("inf"), [])] * n
    for end in range(1, n + 1):
        for start in range(max(0, end - 24), end):
            piece = run[start:end]
            cost = 1.0 if piece in known else 3.0 + 2.0 * len(piece)
            total = best[start][0] + cost
            if total < best[end][0]:
                best[end] = (total, best[start][1] + [piece])
    pieces = best[n][1]
    unknown = sum(len(p) for p in pieces if p not in known)
    return pieces if unknown * 2 <= n else [run]


def readable(name: str, known: frozenset[str] = API_WORDS) -> str:
    """``createNewDocument`` / ``create_new_document`` / ``createnewdocument`` → ``create new document``."""
    out: list[str] = []
    for word in words(name):
        out += split_run(word, known) if len(word) > 8 and word not in known else [word]
    return " ".join(out)


_VOCABULARIES: dict[tuple[str, ...], frozenset[str]] = {}


def spec_vocabulary(spec: ServiceSpec) -> frozenset[str]:
    """The words a spec itself uses (names and descriptions), for splitting its run-together names.

    Kept per spec (by id, version and tool and entity names) since every phrase of a task asks for it.
    """
    key = (spec.id, spec.version, spec.description, *(t.name for t in spec.tools), *(e.name for e in spec.entities))
    if key not in _VOCABULARIES:
        _VOCABULARIES[key] = _spec_vocabulary(spec)
    return _VOCABULARIES[key]


def _spec_vocabulary(spec: ServiceSpec) -> frozenset[str]:
    texts = [spec.name, spec.description]
    texts += [t for tool in spec.tools for t in (tool.description, *tool.parameter_properties())]
    texts += [t for e in spec.entities for t in (e.name, e.description, *(f.name for f in e.fields))]
    return vocabulary(texts)


def noun_phrase(entity: str) -> str:
    """An entity name as a noun phrase: ``LeaveRequest`` → ``leave request``."""
    return " ".join(words(entity))


def a_or_an(phrase: str) -> str:
    """The indefinite article a phrase takes by its sound's usual spelling: ``an estimated date``, ``a due date``."""
    return "an" if phrase[:1].lower() in "aeio" or phrase.lower().startswith(("un", "hour")) else "a"
