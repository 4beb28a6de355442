from __future__ import annotations

from compoworld_assets.engine.differential.compare import (
    CYCLE_MARKER,
    call_agreement,
    plain,
    reference_failed,
    result_matches,
    values_equal,
)


class Node:
    def __init__(self, name, parent=None):
        self.name = name
        self.parent = parent
        self.children = {}
        self._hidden = "x"


def test_plain_turns_objects_into_public_attribute_dicts_and_breaks_cycles():
    root = Node("root")
    child = Node("child", root)
    root.children["child"] = child
    assert plain(root) == {
        "children": {"child": {"children": {}, "name": "child", "parent": CYCLE_MARKER}},
        "name": "root",
        "parent": None,
    }


def test_plain_normalises_keys_tuples_and_sets():
    assert plain({0: (1, {"b", "a"})}) == {"0": [1, ["a", "b"]]}


def test_values_equal_numbers_by_value_but_not_booleans():
    assert values_equal(2, 2.0)
    assert values_equal({"x": [0.1 + 0.2]}, {"x": [0.3]})
    assert not values_equal(True, 1)
    assert not values_equal(1, "1")
    assert not values_equal({"x": 1}, {"x": 1, "y": 2})
    assert not values_equal([1, 2], [2, 1])


def test_result_matches_on_the_reference_keys_only():
    ours = {"success": True, "data": {"id": 3, "title": "t", "extra": 1}}
    assert result_matches({"id": 3, "title": "t"}, ours)
    assert not result_matches({"id": 3, "title": "u"}, ours)
    assert not result_matches({"id": 3, "status": "Open"}, ours)
    assert not result_matches({"id": 3}, {"success": True, "data": [3]})


def test_result_matches_unwraps_a_single_value_for_non_dict_results():
    assert result_matches(7, {"success": True, "data": {"result": 7}})
    assert result_matches(None, {"success": True, "data": None})
    assert not result_matches(None, {"success": True, "data": {}})
    assert not result_matches(7, {"success": True, "data": {"a": 7, "b": 8}})


def test_reference_failure_is_a_dict_with_an_error_key():
    assert reference_failed({"error": "no such file"})
    assert not reference_failed({"result": "error"})
    assert not reference_failed("error")


def test_call_agreement_cases():
    failure = {"success": False, "error": {"code": "not_found", "message": "m"}}
    success = {"success": True, "data": {"a": 1}}
    assert call_agreement(True, {"a": 1}, success) == (True, True)
    assert call_agreement(True, {"a": 2}, success) == (True, False)
    assert call_agreement(False, {"error": "x"}, failure) == (True, True)
    assert call_agreement(False, {"error": "x"}, success) == (False, False)
    assert call_agreement(True, {"a": 1}, failure) == (False, False)
