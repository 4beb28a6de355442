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


def clean_string(text: str, limits: ImportLimits, repairs: Repairs, location: str) -> str:
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
    """A bounded plain-JSON tree copy of ``data`` (see the module docstring); raises DocumentRejected."""
    holder: list[Any] = []
    cleaner = _Cleaner(limits, repairs, location)
    if not cleaner.add(holder, None, data, ""):
        return None
    stack = list(cleaner.pending)
    cleaner.pending.clear()
    while stack:
        source, target, depth, pointer = stack.pop()
        if depth > limits.max_depth:
            raise DocumentRejected(f"document nests deeper than {limits.max_depth} levels", pointer)
        if isinstance(source, dict):
            for key, value in source.items():
                name = cleaner.key(key, pointer)
                if name in target:
                    repairs.note("keys equal after Unicode normalisation merged", f"{location}#{pointer}", name)
                cleaner.add(target, name, value, f"{pointer}/{_escape(name)}", depth)
        else:
            for index, value in enumerate(source):
                cleaner.add(target, None, value, f"{pointer}/{index}", depth)
        stack.extend(cleaner.pending)
        cleaner.pending.clear()
    return holder[0] if holder else None


class _Cleaner:
    def __init__(self, limits: ImportLimits, repairs: Repairs, location: str) -> None:
        self.limits = limits
        self.repairs = repairs
        self.location = location
        self.nodes = 0
        self.max_int = 10**limits.max_int_digits
        self.pending: list[tuple[Any, Any, int, str]] = []

    def add(self, target: Any, key: str | None, value: Any, pointer: str, depth: int = 0) -> bool:
        """Put the cleaned ``value`` into ``target`` (a list when ``key`` is None); False if left out.

        Containers are put in empty and queued in :attr:`pending` to be filled."""
        self.nodes += 1
        if self.nodes > self.limits.max_nodes:
            raise DocumentRejected(f"document holds more than {self.limits.max_nodes} values")
        if self.nodes % _DEADLINE_EVERY == 0:
            check_deadline()
        if isinstance(value, dict):
            cleaned: Any = {}
            self.pending.append((value, cleaned, depth + 1, pointer))
        elif isinstance(value, (list, tuple)):
            cleaned = []
            self.pending.append((value, cleaned, depth + 1, pointer))
        else:
            cleaned = self.scalar(value, pointer)
            if isinstance(cleaned, _LeftOut):
                self.repairs.note(cleaned.reason, f"{self.location}#{pointer}", _preview(value))
                return False
        if key is None:
            target.append(cleaned)
        else:
            target[key] = cleaned
        return True

    def scalar(self, value: Any, pointer: str) -> Any:
        if value is None or isinstance(value, bool):
            return value
        if isinstance(value, str):
            return clean_string(value, self.limits, self.repairs, f"{self.location}#{pointer}")
        if isinstance(value, int):
            return value if -self.max_int < value < self.max_int else OVERSIZED_INTEGER
        if isinstance(value, float):
            return value if math.isfinite(value) else NON_FINITE_NUMBER
        if isinstance(value, _LeftOut):
            return value
        if isinstance(value, (date, datetime, time)):
            return value.isoformat()
        return _LeftOut(f"values of types JSON lacks ({type(value).__name__}) left out")

    def key(self, key: Any, pointer: str) -> str:
        if isinstance(key, str):
            return clean_string(key, self.limits, self.repairs, f"{self.location}#{pointer}")
        if isinstance(key, bool) or key is None:
            return json.dumps(key)
        return clean_string(str(key), self.limits, self.repairs, f"{self.location}#{pointer}")


def _escape(name: str) -> str:
    return name.replace("~", "~0").replace("/", "~1")


def _preview(value: Any) -> str:
    if isinstance(value, _LeftOut):
        return value.reason
    if isinstance(value, int):
        return f"an integer of {value.bit_length()} bits"
    return repr(value)[:200]
