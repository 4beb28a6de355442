"""Parsing spec files and bounding what they hold, before any importer looks at them.

:func:`parse_json` reads JSON without Python's failure modes: integers of more digits than
:attr:`ImportLimits.max_int_digits` and ``NaN``/``Infinity`` become placeholders that
:func:`sanitize_document` leaves out (``int()`` refuses more than 4,300 digits), and nesting
past the stack becomes an :class:`UnreadableSpec`.

:func:`sanitize_document` copies a parsed document, iteratively (no recursion), into plain JSON:
strings NFC-normalised, lone surrogates replaced by U+FFFD, NUL characters removed and cut to
:attr:`ImportLimits.max_string_chars`; keys made strings; YAML dates written as ISO strings;
non-finite numbers, oversized integers and values JSON has no type for left out. A document
deeper than :attr:`ImportLimits.max_depth` or with more than :attr:`ImportLimits.max_nodes` values
(a YAML alias counts at every use, so an alias bomb or a self-referencing anchor is bounded) is
rejected with :class:`DocumentRejected`. The copy is a tree: nothing after this shares a node.
"""

from __future__ import annotations

import json
import math
import unicodedata
from datetime import date, datetime, time
from typing import Any

from compoworld_assets.engine.deadline import check_deadline
from compoworld_assets.engine.specs.importers.context import Repairs
from compoworld_assets.engine.specs.limits import DEFAULT_LIMITS, ImportLimits

_DEADLINE_EVERY = 4096


class UnreadableSpec(ValueError):
    """A file that cannot be parsed at all."""


class DocumentRejected(ValueError):
    """A parsed document beyond the import limits; the message is the quarantine reason, ``pointer``
    (a JSON pointer, "" for the whole document) where the limit was passed."""

    def __init__(self, reason: str, pointer: str = "") -> None:
        super().__init__(reason)
        self.pointer = pointer


class _LeftOut:
    """A parsed value the document cannot keep (the reason is the repair's)."""

    def __init__(self, reason: str) -> None:
        self.reason = reason


OVERSIZED_INTEGER = _LeftOut("integers with too many digits left out")
NON_FINITE_NUMBER = _LeftOut("non-finite numbers (NaN, Infinity) left out")


def parse_json(text: str, limits: ImportLimits = DEFAULT_LIMITS) -> Any:
    """``json.loads`` with bounded integers and numbers; raises JSONDecodeError or UnreadableSpec."""

    def parse_int(literal: str) -> Any:
        return OVERSIZED_INTEGER if len(literal.lstrip("-")) > limits.max_int_digits else int(literal)

    try:
        return json.loads(text, parse_int=parse_int, parse_constant=lambda _: NON_FINITE_NUMBER)
    except RecursionError as error:
        raise UnreadableSpec("JSON nested too deeply to parse") from error


def _clean_string(text: str, limits: ImportLimits, repairs: Repairs, location: str) -> str:
    """NFC, no lone surrogates or NUL characters, at most ``max_string_chars`` characters."""
    if len(text) > limits.max_string_chars:
        repairs.note(f"strings longer than {limits.max_string_chars} characters cut", location, text[:200])
        text = text[: limits.max_string_chars]
    if text.isascii():
        if "\x00" in text:
            repairs.note("NUL characters removed", location, text[:200])
            text = text.replace("\x00", "")
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        repairs.note("lone surrogates replaced by U+FFFD", location, ascii(text[:200]))
        text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if "\x00" in text:
        repairs.note("NUL characters removed", location, text[:200])
        text = text.replace("\x00", "")
    return text if unicodedata.is_normalized("NFC", text) else unicodedata.normalize("NFC", text)


def sanitize_document(
    data: Any, repairs: Repairs, location: str, limits: ImportLimits = DEFAULT_LIMITS
) -> Any:
    """A bounded plain-JSON tree copy of ``data`` (see the module docstring); raises DocumentRejected.

    Plain values (ASCII strings within the length limit, booleans, bounded integers, finite floats,
    None) are copied inline; everything else goes through :class:`_Cleaner`. A node's place is kept
    as a chain of (parent, key) pairs and spelled as a JSON pointer only for a repair or a rejection,
    since building pointers was most of the cost on large documents.
    """
    holder: list[Any] = []
    cleaner = _Cleaner(limits, repairs, location)
    if not cleaner.add(holder, None, data, None):
        return None
    stack = list(cleaner.pending)
    cleaner.pending.clear()
    plain = cleaner.plain
    while stack:
        source, target, depth, place = stack.pop()
        if depth > limits.max_depth:
            raise DocumentRejected(f"document nests deeper than {limits.max_depth} levels", _pointer(place))
        cleaner.count(len(source))
        if isinstance(source, dict):
            for key, value in source.items():
                name = key if type(key) is str and plain(key) else cleaner.key(key, place)
                if name in target:
                    repairs.note("keys equal after Unicode normalisation merged", cleaner.at(place), name)
                if plain(value):
                    target[name] = value
                else:
                    cleaner.add(target, name, value, (place, name), depth)
        else:
            for index, value in enumerate(source):
                if plain(value):
                    target.append(value)
                else:
                    cleaner.add(target, None, value, (place, index), depth)
        stack.extend(cleaner.pending)
        cleaner.pending.clear()
    return holder[0] if holder else None


class _Cleaner:
    def __init__(self, limits: ImportLimits, repairs: Repairs, location: str) -> None:
        self.limits = limits
        self.repairs = repairs
        self.location = location
        self.nodes = 1
        self.max_int = 10**limits.max_int_digits
        self.pending: list[tuple[Any, Any, int, Any]] = []

    def plain(self, value: Any) -> bool:
        """Whether ``value`` is kept exactly as it is (the fast path)."""
        kind = type(value)
        if kind is str:
            return value.isascii() and len(value) <= self.limits.max_string_chars and "\x00" not in value
        if kind is int:
            return -self.max_int < value < self.max_int
        if kind is float:
            return math.isfinite(value)
        return kind is bool or value is None

    def count(self, children: int) -> None:
        before = self.nodes
        self.nodes += children
        if self.nodes > self.limits.max_nodes:
            raise DocumentRejected(f"document holds more than {self.limits.max_nodes} values")
        if self.nodes // _DEADLINE_EVERY != before // _DEADLINE_EVERY:
            check_deadline()

    def at(self, place: Any) -> str:
        return f"{self.location}#{_pointer(place)}"

    def add(self, target: Any, key: str | None, value: Any, place: Any, depth: int = 0) -> bool:
        """Put the cleaned ``value`` into ``target`` (a list when ``key`` is None); False if left out.

        Containers are put in empty and queued in :attr:`pending` to be filled."""
        if isinstance(value, dict):
            cleaned: Any = {}
            self.pending.append((value, cleaned, depth + 1, place))
        elif isinstance(value, (list, tuple)):
            cleaned = []
            self.pending.append((value, cleaned, depth + 1, place))
        else:
            cleaned = self.scalar(value, place)
            if isinstance(cleaned, _LeftOut):
                self.repairs.note(cleaned.reason, self.at(place), _preview(value))
                return False
        if key is None:
            target.append(cleaned)
        else:
            target[key] = cleaned
        return True

    def scalar(self, value: Any, place: Any) -> Any:
        if value is None or isinstance(value, bool):
            return value
        if isinstance(value, str):
            return _clean_string(value, self.limits, self.repairs, self.at(place))
        if isinstance(value, int):
            return value if -self.max_int < value < self.max_int else OVERSIZED_INTEGER
        if isinstance(value, float):
            return value if math.isfinite(value) else NON_FINITE_NUMBER
        if isinstance(value, _LeftOut):
            return value
        if isinstance(value, (date, datetime, time)):
            return value.isoformat()
        return _LeftOut(f"values of types JSON lacks ({type(value).__name__}) left out")

    def key(self, key: Any, place: Any) -> str:
        if isinstance(key, str):
            return _clean_string(key, self.limits, self.repairs, self.at(place))
        if isinstance(key, bool) or key is None:
            return json.dumps(key)
        return _clean_string(str(key), self.limits, self.repairs, self.at(place))


def _pointer(place: Any) -> str:
    """The JSON pointer of a (parent, key) chain (None is the document itself)."""
    parts: list[str] = []
    while place is not None:
        place, key = place
        parts.append(str(key).replace("~", "~0").replace("/", "~1"))
    return "".join(f"/{part}" for part in reversed(parts))


def _preview(value: Any) -> str:
    if isinstance(value, _LeftOut):
        return value.reason
    if isinstance(value, int):
        return f"an integer of {value.bit_length()} bits"
    return repr(value)[:200]
