"""The static screen on LLM-written modules: internals, dynamic code and reflection never reach the sandbox."""

import pytest

from compoworld_assets.engine.library import builtin_service_ids, builtin_spec
from compoworld_assets.engine.runtime.sandbox import ALLOWED_IMPORTS
from compoworld_assets.engine.synthesis.offline import OfflineSynthesizer
from compoworld_assets.engine.synthesis.screen import screen_module


def test_every_offline_module_passes_the_screen():
    for service_id in builtin_service_ids():
        source = OfflineSynthesizer().synthesize(builtin_spec(service_id)).source
        assert screen_module(source, ALLOWED_IMPORTS) == [], service_id


@pytest.mark.parametrize(("snippet", "needle"), [
    ("__import__.__self__.deny = None", "uses __import__"),
    ("x = ().__class__.__base__.__subclasses__()", ".__subclasses__"),
    ("import typing\nsys = typing.sys", ".sys"),
    ("import json\no = json.os", ".os"),
    ("def f():\n    raise ValueError\ntry:\n    f()\nexcept ValueError as e:\n    g = e.__traceback__.tb_frame.f_back",
     ".tb_frame"),
    ("eval('1')", "uses eval"),
    ("getattr(str, 'join')", "uses getattr"),
    ("name = '__glob' 'als__'", "names interpreter internals (__globals__)"),
    ("open('/etc/passwd')", "uses open"),
    ("import socket", "imports socket"),
    ("from os import path", "imports from os"),
    ("from . import sibling", "imports from ."),
    ("import json\njson.loads = lambda text: {}", "changes the module attribute json.loads"),
    ("import json as j\ndel j.dumps", "changes the module attribute j.dumps"),
])
def test_each_forbidden_construct_is_named_with_its_line(snippet, needle):
    problems = screen_module(snippet + "\n\ndef handle(state, tool, args):\n    return {}\n", ALLOWED_IMPORTS)
    assert problems and any(needle in p for p in problems), problems
    assert problems[0].startswith("line ")


def test_ordinary_service_code_is_left_alone():
    source = '''
import datetime, json, re
from dataclasses import dataclass

@dataclass
class Row:
    id: str
    def __post_init__(self):
        self.id = self.id.strip()

def handle(state, tool, args):
    rows = state["tables"].setdefault("Row", {})
    row = Row(args.get("id", ""))
    rows[row.id] = {"id": row.id, "at": datetime.date(2026, 1, 2).isoformat(), "raw": json.dumps(args)}
    return {"success": True, "data": {"id": row.id, "ok": bool(re.match(r"\\w+", row.id))}}
'''
    assert screen_module(source, ALLOWED_IMPORTS) == []
