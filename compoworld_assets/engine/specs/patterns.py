"""Regular expressions from specs, made usable by Python's ``re``.

Every consumer of a spec's ``pattern`` uses Python's ``re``: jsonschema (``format: regex`` in
its meta-schema check, the ``pattern`` keyword), the value generators, and service modules in
the sandbox, which may import only ``re``. Specs are written for other engines (ECMAScript,
Java, PCRE), so about 2% of the patterns in the APIs.guru corpus do not compile in ``re``,
nearly all for Unicode property classes such as AWS's ``^[\\p{L}\\p{Z}\\p{N}_.:/=+\\-@]*$``.

:func:`python_pattern` keeps a pattern ``re`` compiles, and otherwise translates what has an
exact ``re`` equivalent: ``\\p{..}`` / ``\\P{..}`` (general categories, scripts and the other
properties the ``regex`` module knows, also in Java's ``\\p{IsLetter}`` spelling) become the
character ranges ``regex`` assigns them,
``\\x{hh}`` becomes ``\\xhh``, ``(?<name>`` / ``\\k<name>`` become ``(?P<name>`` / ``(?P=name)``,
``\\z`` becomes ``\\Z``, and a ``-`` next to a class escape inside ``[...]`` (``[\\s-_]``, a
literal ``-`` in PCRE) is escaped. Anything else that ``re`` rejects is left out by the caller,
with the reason returned here.
"""

from __future__ import annotations

import re
import warnings
from functools import lru_cache

import regex

_CLASS_ESCAPES = frozenset("dDsSwW")
_MAX_CODE_POINT = 0x10FFFF


class Untranslatable(ValueError):
    """A construct with no exact ``re`` equivalent (the message says which)."""


def _compile_error(pattern: str) -> str | None:
    """Why ``re`` cannot compile ``pattern`` (None when it can)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # FutureWarning "possible nested set" on ECMAScript classes
        try:
            re.compile(pattern)
        except (re.error, OverflowError, RecursionError, ValueError) as error:
            return str(error) or type(error).__name__
    return None


def python_pattern(pattern: str) -> tuple[str | None, str]:
    """(a pattern ``re`` compiles with the same meaning, "") or (None, why it cannot be had)."""
    error = _compile_error(pattern)
    if error is None:
        return pattern, ""
    try:
        translated = _translate(pattern)
    except Untranslatable as why:
        return None, f"{why} (re: {error})"
    still = _compile_error(translated)
    if still is not None:
        return None, f"no Python equivalent (re: {still})"
    return translated, ""


def _translate(pattern: str) -> str:
    out: list[str] = []
    state = _ClassState()
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            index = _escape(pattern, index, out, state)
            continue
        if state.open:
            index = _class_char(pattern, index, out, state)
            continue
        if char == "[":
            state.start(out, pattern, index)
            index = state.body_start
            continue
        if pattern.startswith("(?<", index) and pattern[index + 3 : index + 4] not in ("=", "!"):
            out.append("(?P<")
            index += 3
            continue
        out.append(char)
        index += 1
    if state.open:
        raise Untranslatable("unterminated character class")
    return "".join(out)


class _ClassState:
    """Where the scanner is inside ``[...]``; property ranges collect here until the class closes."""

    def __init__(self) -> None:
        self.open = False
        self.body_start = 0
        self.spans: list[tuple[int, int]] = []
        self.after_class_escape = False

    def start(self, out: list[str], pattern: str, index: int) -> None:
        self.open = True
        self.spans = []
        self.after_class_escape = False
        position = index + 1
        prefix = "["
        if pattern.startswith("^", position):
            prefix, position = "[^", position + 1
        if pattern.startswith("]", position):  # a leading ']' is literal in every dialect
            prefix, position = prefix + "\\]", position + 1
        out.append(prefix)
        self.body_start = position

    def close(self, out: list[str]) -> None:
        out.append(_class_body(self.spans) + "]")
        self.open = False


def _class_char(pattern: str, index: int, out: list[str], state: _ClassState) -> int:
    char = pattern[index]
    if char == "]":
        state.close(out)
        return index + 1
    if char == "-" and (state.after_class_escape or _class_escape_at(pattern, index + 1)):
        out.append("\\-")
    elif char == "[" and pattern.startswith("[:", index):
        raise Untranslatable("POSIX bracket expressions are not supported")
    elif char in "[&~|":
        out.append("\\" + char)  # literal in other engines; "possible set operation" in re
    else:
        out.append(char)
    state.after_class_escape = False
    return index + 1


def _class_escape_at(pattern: str, index: int) -> bool:
    return pattern.startswith("\\", index) and pattern[index + 1 : index + 2] in {*_CLASS_ESCAPES, "p", "P"}


def _escape(pattern: str, index: int, out: list[str], state: _ClassState) -> int:
    if index + 1 >= len(pattern):
        raise Untranslatable("trailing backslash")
    kind = pattern[index + 1]
    if kind in "pP":
        name, end = _property_name(pattern, index + 2)
        spans = _property_spans(name, negated=kind == "P")
        if state.open:
            state.spans.extend(spans)
            state.after_class_escape = True
        else:
            out.append("[" + _class_body(spans) + "]")
        return end
    state.after_class_escape = state.open and kind in _CLASS_ESCAPES
    if kind == "x" and pattern.startswith("{", index + 2):
        close = pattern.find("}", index + 3)
        digits = pattern[index + 3 : close] if close > 0 else ""
        if not digits or len(digits) > 6 or not all(c in "0123456789abcdefABCDEF" for c in digits):
            raise Untranslatable(f"bad \\x{{...}} escape at position {index}")
        out.append(_code_point(int(digits, 16)))
        return close + 1
    if kind == "k" and pattern.startswith("<", index + 2) and not state.open:
        close = pattern.find(">", index + 3)
        if close < 0:
            raise Untranslatable(f"bad \\k<...> at position {index}")
        out.append(f"(?P={pattern[index + 3 : close]})")
        return close + 1
    out.append("\\Z" if kind == "z" and not state.open else pattern[index : index + 2])
    return index + 2


def _property_name(pattern: str, index: int) -> tuple[str, int]:
    if pattern.startswith("{", index):
        close = pattern.find("}", index + 1)
        if close < 0:
            raise Untranslatable(f"unterminated \\p{{ at position {index}")
        return pattern[index + 1 : close], close + 1
    if index >= len(pattern):
        raise Untranslatable("\\p without a property name")
    return pattern[index], index + 1


@lru_cache(maxsize=1)
def _all_code_points() -> str:
    return "".join(map(chr, range(_MAX_CODE_POINT + 1)))


@lru_cache(maxsize=256)
def _property_spans(name: str, negated: bool) -> tuple[tuple[int, int], ...]:
    """The code point ranges ``regex`` assigns ``\\p{name}`` (or ``\\P{name}``)."""
    if not name or len(name) > 64 or not all(c.isalnum() or c in "_&=:.- " for c in name):
        raise Untranslatable(f"unknown Unicode property {name!r}")
    for spelling in (name, name.removeprefix("Is")):  # Java spells \p{IsLetter}, \p{IsLatin}
        try:
            matcher = regex.compile(("\\P{%s}+" if negated else "\\p{%s}+") % spelling)
            break
        except regex.error:
            continue
    else:
        raise Untranslatable(f"unknown Unicode property {name!r}")
    return tuple((m.start(), m.end() - 1) for m in matcher.finditer(_all_code_points()))


def _class_body(spans: list[tuple[int, int]] | tuple[tuple[int, int], ...]) -> str:
    """``re`` class items for the union of ``spans`` (merged, each end escaped)."""
    merged: list[list[int]] = []
    for low, high in sorted(spans):
        if merged and low <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], high)
        else:
            merged.append([low, high])
    return "".join(
        _code_point(low) if low == high else f"{_code_point(low)}-{_code_point(high)}" for low, high in merged
    )


def _code_point(value: int) -> str:
    """One code point as a class- and pattern-safe token: ASCII alphanumerics literal, the rest escaped."""
    if value > _MAX_CODE_POINT:
        raise Untranslatable(f"code point {value:#x} is beyond Unicode")
    char = chr(value)
    if char.isascii() and char.isalnum():
        return char
    return f"\\x{value:02x}" if value < 0x100 else f"\\u{value:04x}" if value < 0x10000 else f"\\U{value:08x}"
