"""Parsing BFCL's ground-truth call strings (``cd(folder='document')``, ``sort('a.pdf')``).

A call string is one Python call expression whose callee is a bare name and whose arguments
are literals; it is parsed with :mod:`ast` and never evaluated. Positional arguments are
bound to parameter names by the caller-supplied order (the reference method's signature).
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from compoworld_assets.engine.canonical import canonical_json


class CallParseError(ValueError):
    """A call string that is not ``name(literal, ..., key=literal, ...)``."""


@dataclass(frozen=True)
class ParsedCall:
    name: str
    positional: tuple[Any, ...] = ()
    keywords: dict[str, Any] = field(default_factory=dict)


def parse_call(text: str) -> ParsedCall:
    """The callee name and literal arguments of one call string."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as exc:
        raise CallParseError(f"not a Python expression: {text!r}") from exc
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        raise CallParseError(f"not a call of a bare function name: {text!r}")
    positional = tuple(_literal(arg, text) for arg in node.args)
    keywords: dict[str, Any] = {}
    for keyword in node.keywords:
        if keyword.arg is None:
            raise CallParseError(f"**-arguments are not supported: {text!r}")
        keywords[keyword.arg] = _literal(keyword.value, text)
    return ParsedCall(name=node.func.id, positional=positional, keywords=keywords)


def _literal(node: ast.expr, text: str) -> Any:
    if isinstance(node, ast.Starred):
        raise CallParseError(f"*-arguments are not supported: {text!r}")
    try:
        return ast.literal_eval(node)
    except ValueError as exc:
        raise CallParseError(f"argument is not a literal in {text!r}: {ast.unparse(node)}") from exc


def bind_arguments(call: ParsedCall, parameter_names: Sequence[str]) -> dict[str, Any]:
    """Keyword arguments for ``call``: positional ones named in ``parameter_names`` order."""
    if len(call.positional) > len(parameter_names):
        raise CallParseError(
            f"{call.name}: {len(call.positional)} positional arguments for {len(parameter_names)} parameters"
        )
    bound = dict(zip(parameter_names, call.positional, strict=False))
    repeated = sorted(set(bound) & set(call.keywords))
    if repeated:
        raise CallParseError(f"{call.name}: arguments given twice: {repeated}")
    return {**bound, **call.keywords}


def json_ready(value: Any) -> Any:
    """``value`` as JSON data: tuples become lists, sets sorted lists, dict keys strings."""
    if isinstance(value, dict):
        return {str(k): json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_ready(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((json_ready(v) for v in value), key=canonical_json)
    return value
