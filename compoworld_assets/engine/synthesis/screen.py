"""A static screen for LLM-written service modules: constructs no service needs are rejected before they run.

A service module reads and writes its ``state`` dict with the allowlisted standard modules. It never
needs the interpreter's internals: dunder attributes (``__globals__``, ``__subclasses__``,
``__self__``...), frames and tracebacks, patching a module (``json.loads = ...``), dynamic code (``eval``, ``exec``, ``compile``,
``__import__``), reflection (``getattr``, ``globals``, ``vars``...), files (``open``), or a module
reached through another module's attributes (``typing.sys``, ``json.os``). The sandbox is the
boundary and holds without this screen; the screen exists because an attack that fails *inside*
the sandbox (a path that does not exist there, an EPERM) looks to verification like an ordinary
bug, so a hostile module could otherwise be kept. A rejected round tells the model why.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable

# Dunder attributes a service may use: object protocol methods on its own classes.
SAFE_DUNDERS = frozenset({
    "__init__", "__post_init__", "__repr__", "__str__", "__eq__", "__ne__", "__lt__", "__le__", "__gt__",
    "__ge__", "__hash__", "__len__", "__iter__", "__next__", "__contains__", "__getitem__", "__setitem__",
    "__delitem__", "__bool__", "__enter__", "__exit__", "__name__", "__doc__", "__future__", "__all__",
})
# Attributes of frames, tracebacks, generators and code objects, and modules reached through modules.
FORBIDDEN_ATTRIBUTES = frozenset({
    "f_back", "f_globals", "f_locals", "f_builtins", "f_code", "tb_frame", "tb_next", "gi_frame", "gi_code",
    "cr_frame", "cr_code", "ag_frame", "ag_code", "co_code", "co_consts",
    "os", "sys", "_os", "_sys", "builtins", "modules", "subprocess", "ctypes", "_ctypes", "_thread", "threading",
    "gc", "importlib", "posix", "_posixsubprocess", "socket", "_socket", "signal", "resource", "marshal",
    "pickle", "shutil", "_io", "io",
})
FORBIDDEN_NAMES = frozenset({
    "__import__", "__builtins__", "__loader__", "__spec__", "eval", "exec", "compile", "globals", "locals",
    "vars", "getattr", "setattr", "delattr", "open", "breakpoint", "input", "memoryview", "exit", "quit",
    "help", "super",
})
_DUNDER = re.compile(r"__[A-Za-z0-9_]+__")


def screen_module(source: str, allowed_imports: Iterable[str]) -> list[str]:
    """Problems found in ``source`` (empty: it passed), each with its line; a syntax error is one problem."""
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        return [f"line {exc.lineno}: SyntaxError: {exc.msg}"]
    allowed = frozenset(allowed_imports)
    modules = _module_names(tree)
    problems = []
    for node in ast.walk(tree):
        problem = _problem(node, allowed) or _module_mutation(node, modules)
        if problem:
            problems.append(f"line {getattr(node, 'lineno', '?')}: {problem}")
    return sorted(set(problems), key=lambda p: (int(p.split(":")[0][5:]) if p[5:6].isdigit() else 0, p))


def _module_names(tree: ast.AST) -> frozenset[str]:
    """The names an ``import`` statement binds to a module."""
    return frozenset((alias.asname or alias.name.partition(".")[0]) for node in ast.walk(tree)
                     if isinstance(node, ast.Import) for alias in node.names)


def _module_mutation(node: ast.AST, modules: frozenset[str]) -> str | None:
    """Assigning to (or deleting) an attribute of an imported module changes it for the whole interpreter."""
    if (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store | ast.Del)
            and isinstance(node.value, ast.Name) and node.value.id in modules):
        return f"changes the module attribute {node.value.id}.{node.attr} (a service may not patch modules)"
    return None


def _problem(node: ast.AST, allowed: frozenset[str]) -> str | None:
    if isinstance(node, ast.Import):
        bad = [a.name for a in node.names if a.name.partition(".")[0] not in allowed]
        return f"imports {', '.join(bad)} (allowed: the standard modules of the sandbox's allowlist)" if bad else None
    if isinstance(node, ast.ImportFrom):
        if node.level or (node.module or "").partition(".")[0] not in allowed:
            return f"imports from {'.' * node.level}{node.module or ''} (not in the sandbox's allowlist)"
        return None
    if isinstance(node, ast.Attribute):
        if (_DUNDER.fullmatch(node.attr) and node.attr not in SAFE_DUNDERS) or node.attr in FORBIDDEN_ATTRIBUTES:
            return f"uses the attribute .{node.attr} (interpreter internals or a module reached through another)"
        return None
    if isinstance(node, ast.Name) and node.id in FORBIDDEN_NAMES:
        return f"uses {node.id} (dynamic code, reflection or files: a service only reads and writes state)"
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        dunders = sorted(set(_DUNDER.findall(node.value)) - SAFE_DUNDERS)
        if dunders:
            return f"a string names interpreter internals ({', '.join(dunders)})"
    return None
