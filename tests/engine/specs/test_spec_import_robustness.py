"""Importers never raise: randomly corrupted real fixtures still give an ImportResult."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path

import pytest
import yaml

from compoworld_assets.engine.specs.importers import import_document
from compoworld_assets.engine.specs.model import ImportResult

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "specs"
GARBAGE = [
    None,
    1,
    -2.5,
    "x",
    "",
    [],
    {},
    [1, "a"],
    {"$ref": "#/nope"},
    {"$ref": 5},
    {"type": "weird"},
    {"type": ["string", "null"]},
    True,
    {"properties": "no"},
    {"items": [1]},
    {"required": [{}]},
]
TRIALS = 40


def _load(path: Path):
    text = path.read_text()
    if path.suffix == ".yaml":
        return yaml.safe_load(text)
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return [json.loads(line) for line in text.splitlines() if line.strip()]


def _paths(node, prefix=()):
    if prefix:
        yield prefix
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, child in items:
        yield from _paths(child, (*prefix, key))


def _corrupt(document, rng: random.Random):
    document = copy.deepcopy(document)
    paths = list(_paths(document))
    for path in rng.sample(paths, min(rng.randint(1, 8), len(paths))):
        parent = document
        try:
            for key in path[:-1]:
                parent = parent[key]
            parent[path[-1]] = copy.deepcopy(rng.choice(GARBAGE))
        except (KeyError, IndexError, TypeError):
            continue
    return document


@pytest.mark.parametrize(
    "name", sorted(p.name for p in FIXTURES.iterdir() if p.name != "malformed_invalid.json")
)
def test_corrupted_fixture_never_raises(name):
    document = _load(FIXTURES / name)
    rng = random.Random(name)
    for _ in range(TRIALS):
        result = import_document(_corrupt(document, rng), location=name)
        assert isinstance(result, ImportResult)
        assert all(q.reason for q in result.quarantined)


@pytest.mark.parametrize("bad_type", [[["object"]], [{"a": 1}, "object"], [None]])
def test_a_list_type_holding_unhashable_values_is_no_internal_error(bad_type):
    """A response whose ``type`` lists lists or objects (found by benchmarks/fuzz_specs.py, spec 160 of seed 0)."""
    response = {"200": {"description": "ok", "content": {"application/json": {"schema": {
        "type": bad_type, "properties": {"a": {"type": "string"}, "b": {"type": "string"}}}}}}}
    document = {"openapi": "3.0.0", "info": {"title": "Odd", "version": "1"},
                "paths": {"/things/{id}": {"get": {"operationId": "getThing", "responses": response}},
                          "/things": {"get": {"operationId": "listThings", "responses": response}}}}
    result = import_document(document, location="odd.json")
    assert [q.reason for q in result.quarantined if q.reason.startswith("internal error")] == []
    assert [t.name for t in result.specs[0].tools] == ["get_thing", "list_things"]
