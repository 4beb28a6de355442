"""Seeded, type-valid values for shared types and JSON schemas.

Used by the seeded world generators, the generated verification tests and the offline
world model. Every function takes an explicit ``random.Random`` so results depend only on
the seed.
"""

from __future__ import annotations

import bisect
import itertools
import random
import re
import re._parser as sre_parse  # the parser rstr generates from, for the shortest match's length
import string
from collections.abc import Sequence
from datetime import UTC, date, datetime, timedelta
from functools import lru_cache
from typing import Any

from rstr.xeger import Xeger

from compoworld_assets.engine.types import SHARED_TYPES, TYPE_KEY, is_entity_ref, parse_entity_ref

FIRST_NAMES = ["Ada", "Bruno", "Chen", "Dalia", "Emeka", "Farah", "Gustav", "Hana", "Ines", "Jonas", "Kavya",
               "Liam", "Mei", "Nadia", "Omar", "Priya", "Quinn", "Rosa", "Sven", "Tariq", "Uma", "Viktor",
               "Wen", "Yara", "Zoe"]
LAST_NAMES = ["Abbott", "Berg", "Costa", "Diaz", "Eriksen", "Fischer", "Garcia", "Haddad", "Ito", "Jensen",
              "Kowalski", "Larsen", "Moreau", "Novak", "Okafor", "Patel", "Quint", "Rossi", "Sato", "Tanaka",
              "Ueda", "Varga", "Weber", "Xu", "Young"]
COMPANIES = ["Acme Corp", "Globex", "Initech", "Umbrella Labs", "Stark Supplies", "Wayne Logistics",
             "Hooli", "Vandelay Imports", "Soylent Foods", "Cyberdyne Systems", "Tyrell Biotech",
             "Wonka Industries", "Oceanic Travel", "Pied Piper", "Massive Dynamic"]
CITIES = [("Berlin", "DE"), ("Lisbon", "PT"), ("Toronto", "CA"), ("Osaka", "JP"), ("Austin", "US"),
          ("Lyon", "FR"), ("Nairobi", "KE"), ("Melbourne", "AU"), ("Madrid", "ES"), ("Chicago", "US"),
          ("Seoul", "KR"), ("Dublin", "IE")]
STREETS = ["Maple Ave", "Harbour St", "Linden Rd", "Station Sq", "Orchard Ln", "Mill Rd", "King St"]
CURRENCIES = ["USD", "EUR", "GBP", "JPY", "CAD", "AUD"]
COUNTRY_CURRENCY = {"DE": "EUR", "PT": "EUR", "FR": "EUR", "ES": "EUR", "IE": "EUR", "CA": "CAD", "JP": "JPY",
                    "US": "USD", "AU": "AUD", "KE": "KES", "KR": "KRW"}
WORDS = ["quarterly", "review", "invoice", "launch", "onboarding", "renewal", "budget", "migration",
         "roadmap", "audit", "shipment", "contract", "follow-up", "support", "design", "hiring", "travel"]

EPOCH = date(2026, 1, 1)


def person_name(rng: random.Random) -> str:
    return f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}"


def email_for(name: str, rng: random.Random) -> str:
    local = name.lower().replace(" ", ".")
    domain = rng.choice(COMPANIES).lower().split()[0]
    return f"{local}@{domain}.example.com"


def phrase(rng: random.Random, words: int = 3) -> str:
    return " ".join([rng.choice(WORDS) for _ in range(words)]).capitalize()


def shared_value(type_name: str, rng: random.Random) -> Any:
    """A random valid value of a shared type (entity ids: a plausible id string)."""
    if is_entity_ref(type_name):
        _, entity = parse_entity_ref(type_name)
        return f"{entity[:3].lower()}_{rng.randint(1, 9999):04d}"
    match type_name:
        case "email":
            return email_for(person_name(rng), rng)
        case "phone":
            return f"+1-555-{rng.randint(100, 999)}-{rng.randint(1000, 9999)}"
        case "person_name":
            return person_name(rng)
        case "company_name":
            return rng.choice(COMPANIES)
        case "date":
            return (EPOCH + timedelta(days=rng.randint(0, 364))).isoformat()
        case "datetime":
            moment = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(minutes=15 * rng.randint(0, 35000))
            return moment.isoformat().replace("+00:00", "Z")
        case "money":
            return round(rng.uniform(5, 5000), 2)
        case "currency":
            return rng.choice(CURRENCIES)
        case "url":  # shaped as the seeder's record URLs (``seeding``), so one check sees what tools produce
            return f"https://{rng.choice(COMPANIES).lower().split()[0]}.example.com/{rng.choice(WORDS)}/{rng.randint(1, 99)}"
        case "address":
            return f"{rng.randint(1, 250)} {rng.choice(STREETS)}"
        case "city":
            return rng.choice(CITIES)[0]
        case "country":
            return rng.choice(CITIES)[1]
        case "file_path":
            return f"/docs/{rng.choice(WORDS)}/{rng.choice(WORDS)}-{rng.randint(1, 99)}.txt"
    raise KeyError(f"unknown shared type {type_name!r}")


def schema_value(schema: dict[str, Any], rng: random.Random, depth: int = 0) -> Any:
    """A random value valid against a (simple) JSON schema, honouring ``x-cw-type``."""
    if not isinstance(schema, dict) or not schema:
        return phrase(rng, 2)
    if schema.get("enum"):
        return rng.choice(list(schema["enum"]))
    if "const" in schema:
        return schema["const"]
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            options = [s for s in schema[key] if isinstance(s, dict) and s.get("type") != "null"]
            return schema_value(options[0] if options else schema[key][0], rng, depth)
    if isinstance(schema.get("allOf"), list):
        return schema_value(merge_all_of(schema), rng, depth)
    if schema.get(TYPE_KEY) and (schema[TYPE_KEY] in SHARED_TYPES or is_entity_ref(schema[TYPE_KEY])):
        value = shared_value(schema[TYPE_KEY], rng)
        if not isinstance(schema.get("pattern"), str) or matches_pattern(schema["pattern"], value):
            return value  # else the pattern says more than the type (an https URL of one host): drawn from it
    json_type = schema.get("type", "string")
    if isinstance(json_type, list):
        json_type = next((t for t in json_type if t != "null"), "string")
    match json_type:
        case "string":
            fmt = schema.get("format")
            if fmt == "date":
                return shared_value("date", rng)
            if fmt == "date-time":
                return shared_value("datetime", rng)
            if fmt == "email":
                return shared_value("email", rng)
            if fmt in ("uri", "url"):
                return shared_value("url", rng)
            if isinstance(schema.get("pattern"), str):
                limit, least = schema.get("maxLength"), schema.get("minLength")
                matching = pattern_value(schema["pattern"], rng, limit if isinstance(limit, int) else None,
                                         least if isinstance(least, int) else 0)
                if matching is not None:
                    return matching
            low = int(schema.get("minLength", 1))
            high = max(low, min(int(schema.get("maxLength", 24)), 24))
            text = phrase(rng, 2)
            if len(text) < low:
                text += "".join(rng.choice(string.ascii_lowercase) for _ in range(low - len(text)))
            return text[:high]
        case "integer":
            low = int(schema.get("minimum", 0))
            high = int(schema.get("maximum", max(low + 100, 100)))
            return rng.randint(low, high)
        case "number":
            low = float(schema.get("minimum", 0))
            high = float(schema.get("maximum", max(low + 1000, 1000)))
            return round(rng.uniform(low, high), 2)
        case "boolean":
            return rng.random() < 0.5
        case "array":
            if depth > 3:
                return []
            count = max(int(schema.get("minItems", 0)), 1)
            return [schema_value(schema.get("items") or {}, rng, depth + 1) for _ in range(count)]
        case "object":
            if depth > 3:
                return {}
            props = schema.get("properties") or {}
            required = set(schema.get("required") or props)
            value = {k: schema_value(v, rng, depth + 1) for k, v in props.items() if k in required}
            for name in sorted(required - set(props)):
                value[name] = phrase(rng, 2)
            extra = schema.get("additionalProperties")
            if isinstance(extra, dict) or extra is None:  # ``minProperties`` asks for more than are required
                while len(value) < int(schema.get("minProperties", 0)) and len(value) < 8:
                    value[f"{phrase(rng, 1).lower()}_{len(value)}"] = schema_value(extra or {}, rng, depth + 1)
            return value
        case "null":
            return None
    return phrase(rng, 2)


def matches_pattern(pattern: str, value: Any) -> bool:
    """Whether ``value`` is a string ``pattern`` finds (a pattern Python cannot read constrains nothing)."""
    try:
        return isinstance(value, str) and re.search(pattern, value) is not None
    except (re.error, RecursionError, OverflowError):
        return True


def merge_all_of(schema: dict[str, Any]) -> dict[str, Any]:
    """One schema for an ``allOf``: its parts' properties and required names merged, and every other
    keyword of a part (``type``, ``items``, ``enum``, ``pattern``, ``minLength``...) kept where the schema
    and earlier parts do not set it (``{"allOf": [{"type": "array", "items": ...}, {"description": ...}]}``
    is that array).

    Parts that are not dicts are skipped; later parts win on a property both declare.
    """
    merged: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
    parts = [merge_all_of(p) for p in schema.get("allOf") or [] if isinstance(p, dict)]
    properties: dict[str, Any] = dict(merged.get("properties") or {})
    required: list[str] = list(merged.get("required") or [])
    for part in parts:
        properties.update(part.get("properties") or {})
        required.extend(r for r in part.get("required") or [] if r not in required)
        for keyword, value in part.items():
            if keyword not in ("properties", "required"):
                merged.setdefault(keyword, value)
    if properties:
        merged["properties"] = properties
        merged.setdefault("type", "object")
    if required:
        merged["required"] = required
    return merged


_PATTERN_ATOM = re.compile(r"\\[dwsDWS.\\^$\-]|\[\^?(?:\\.|[^\]\\])+\]|[A-Za-z0-9_\-:/@#.= ]")
_PATTERN_COUNT = re.compile(r"\{(\d+)(?:,(\d*))?\}|[?+*]")
_ESCAPE_CLASSES = {"d": string.digits, "w": string.ascii_letters + string.digits + "_", "s": " "}
MAX_PATTERN_REPEAT = 8
XEGER_TRIES = 5
MAX_GENERATED_LENGTH = 4096


def pattern_value(pattern: str, rng: random.Random, max_length: int | None = None, min_length: int = 0) -> str | None:
    """A string matching ``pattern`` (no longer than ``max_length``, no shorter than ``min_length``), or None
    when none was found.

    Simple patterns are generated here (:func:`_simple_pattern_value`); others (groups, alternation,
    negated classes) by rstr's ``Xeger`` (:class:`_Xeger`), checked against the pattern afterwards.
    """
    def fits(text: str) -> bool:
        return (max_length is None or len(text) <= max_length) and len(text) >= min_length

    for _ in range(XEGER_TRIES if min_length else 1):
        found = _simple_pattern_value(pattern, rng)
        if found is None:
            break
        if fits(found):
            return found
    try:
        compiled = re.compile(pattern)
        shortest = _parsed(pattern).getwidth()[0]
    except (re.error, RecursionError, OverflowError):
        return None
    if shortest > min(max_length or MAX_GENERATED_LENGTH, MAX_GENERATED_LENGTH):
        return None  # nested counts (``(a{1000}){1000}``) would build a string too long to use
    generator = _Xeger(rng)
    for _ in range(XEGER_TRIES):
        try:
            text = generator.xeger(pattern)
        except Exception:  # noqa: BLE001 - sre constructs rstr cannot generate: no value, as for any pattern
            return None
        if compiled.search(text) and fits(text):
            return text
    return None


@lru_cache(maxsize=4096)
def _parsed(pattern: str) -> Any:
    """The pattern as sre parses it: read, never changed, by the generator (a spec repeats its patterns)."""
    return sre_parse.parse(pattern)


class _Xeger(Xeger):
    """rstr's generator (pinned release), deterministic in the random instance it is given: a negated class
    draws from its characters in a fixed order (rstr takes them from a set, whose order changes with the
    process's hash seed), and a repeat counts at most ``MAX_PATTERN_REPEAT`` beyond its minimum.

    A bracket class is drawn from without listing its characters (:class:`_ClassChars`): a class over most
    of Unicode (``[\\u0020-\\uD7FF...]``, common in AWS specs) was a list of ~60K characters built again for
    every character drawn. The draws are the same as rstr's (one ``choice`` over the same sequence).
    """

    def __init__(self, rng: random.Random) -> None:
        super().__init__(rng)
        # ``.``: one printable character but a newline, drawn as rstr's ``printable(1, exclude="\\n")`` draws it,
        # without listing that alphabet again for every character.
        self._cases = {**self._cases, "any": lambda _: self._random.choice(_ANY_CHARACTER)}

    def xeger(self, string_or_regex: Any) -> str:
        result = self._build_string(_parsed(getattr(string_or_regex, "pattern", string_or_regex)))
        self._cache.clear()
        return result

    def _handle_in(self, value: Any) -> Any:
        return self._random.choice(_class_choices(tuple(value)))  # sre's class items are tuples of constants

    def _handle_repeat(self, start_range: int, end_range: int, value: Any) -> str:
        return super()._handle_repeat(start_range, min(end_range, start_range + MAX_PATTERN_REPEAT), value)


@lru_cache(maxsize=4096)
def _class_choices(items: tuple[Any, ...]) -> Sequence[str]:
    """What one bracket class (sre's items) draws from, in a fixed order: its characters, or for a negated class
    the printable ones outside it. Cached: a spec's patterns repeat the same classes, and listing a class's items
    again for every character drawn was most of the time seeding an AWS service took. Literals and categories
    (``\\d``, ``\\w``) are characters that draw nothing at random (rstr's own alphabets)."""
    parts: list[str | range] = []
    negated = False
    for state in items:
        opcode = state[0].name.lower()
        if opcode == "negate":
            negated = not parts
        elif opcode == "range":
            parts.append(range(state[1][0], state[1][1] + 1))
        else:
            parts.append(_CLASS_ITEMS._handle_state(state))
    if negated:
        return [ch for ch in string.printable if ch not in "\n\r\x0b\x0c" and not any(_holds(part, ch) for part in parts)]
    return _ClassChars(parts)


def _holds(part: str | range, ch: str) -> bool:
    return ord(ch) in part if isinstance(part, range) else ch in part


_ANY_CHARACTER = [ch for ch in string.printable if ch != "\n"]
_CLASS_ITEMS = _Xeger(random.Random(0))  # turns a class's literals and categories into characters (no draws)


class _ClassChars(Sequence[str]):
    """The characters of a bracket class in order, its ranges kept as bounds."""

    def __init__(self, parts: list[str | range]) -> None:
        self.parts = parts
        self.starts = list(itertools.accumulate((len(part) for part in parts), initial=0))

    def __len__(self) -> int:
        return self.starts[-1]

    def __getitem__(self, index: int) -> str:  # type: ignore[override]
        if not 0 <= index < len(self):
            raise IndexError(index)
        at = bisect.bisect_right(self.starts, index) - 1
        part = self.parts[at]
        item = part[index - self.starts[at]]
        return chr(item) if isinstance(part, range) else item


def _simple_pattern_value(pattern: str, rng: random.Random) -> str | None:
    """A string fully matching a simple anchored regex, or None when the pattern is beyond it.

    Handles sequences of literal characters, ``\\d``/``\\w``/``\\s`` and bracket classes
    (ranges, escapes) with ``{n}``, ``{n,m}``, ``?``, ``+`` and ``*`` counts, e.g.
    ``^[\\da-z]{26}$`` or ``^[A-Z]{3}-\\d{4}$``; alternation, groups and look-arounds are not.
    """
    body = pattern.removeprefix("^")
    if body.endswith("$") and not body.endswith("\\$"):
        body = body[:-1]
    out: list[str] = []
    position = 0
    while position < len(body):
        atom = _PATTERN_ATOM.match(body, position)
        if atom is None:
            return None
        choices = _atom_choices(atom.group())
        if not choices:
            return None
        position = atom.end()
        low, high = 1, 1
        count = _PATTERN_COUNT.match(body, position)
        if count is not None:
            low, high = _count_bounds(count)
            position = count.end()
        out.extend(rng.choice(choices) for _ in range(rng.randint(low, high)))
    text = "".join(out)
    try:
        return text if re.search(pattern, text) else None
    except re.error:
        return None


def _count_bounds(count: re.Match[str]) -> tuple[int, int]:
    token = count.group()
    if token == "?":
        return 0, 1
    if token in "+*":
        return (1 if token == "+" else 0), MAX_PATTERN_REPEAT
    low = int(count.group(1))
    upper = count.group(2)
    if upper is None:
        return low, low
    return low, int(upper) if upper else low + MAX_PATTERN_REPEAT


@lru_cache(maxsize=4096)
def _atom_choices(atom: str) -> str:
    """The characters one pattern atom may stand for (in a stable order; empty if unsupported). Cached: a class
    over most of Unicode (``[\\u0020-\\uD7FF...]``, common in AWS specs) lists ~60K characters, and seeding a
    world draws from the same few classes again and again (it was most of the time seeding an AWS service took).
    """
    if atom.startswith("\\"):
        return _ESCAPE_CLASSES.get(atom[1], atom[1] if not atom[1].isalpha() else "")
    if not atom.startswith("["):
        return string.ascii_lowercase if atom == "." else atom
    inner = atom[1:-1]
    if inner.startswith("^"):
        return ""
    chars: list[str] = []
    index = 0
    while index < len(inner):
        if inner[index] == "\\" and index + 1 < len(inner):
            escaped = inner[index + 1]
            chars.extend(_ESCAPE_CLASSES.get(escaped, "" if escaped.isalpha() else escaped))
            index += 2
        elif index + 2 < len(inner) and inner[index + 1] == "-":
            chars.extend(chr(c) for c in range(ord(inner[index]), ord(inner[index + 2]) + 1))
            index += 3
        else:
            chars.append(inner[index])
            index += 1
    return "".join(sorted(set(chars)))
