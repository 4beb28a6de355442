"""The red-team corpus of issue 12: every hostile module is contained and harms nothing around it.

Each case runs in its own process tree (see ``redteam_harness``): the sandbox's parent holds a fake
API key, a second service runs next to the hostile one, and the bait (files outside scratch,
listeners on 127.0.0.1, a victim process) is checked after ``close()``. The same corpus goes
through ``LLMSynthesizer`` with a stub model that answers with the attack hidden in an otherwise
correct module: the synthesizer must not keep it. A self-test runs a few cases through an
executor without any isolation to show that the checks do see escapes.
"""

from __future__ import annotations

import ast

import pytest
from redteam_harness import Case, load_corpus, run_case, service_source, top_level_names

CORPUS = load_corpus()
CATEGORIES = ("fs", "env", "net", "proc", "sig", "ptrace", "hook", "interp", "proto", "thread", "res", "ns", "misc")

# Cases the sandbox in the tree does not contain yet, with why; remove an entry once it is fixed
# (strict=False: a fixed case just shows as XPASS).
KNOWN_ESCAPES: dict[str, str] = {}
KNOWN_SYNTHESIZER_ESCAPES: dict[str, str] = {}


def _params(known: dict[str, str]) -> list:
    return [
        pytest.param(case, id=case.name, marks=[pytest.mark.xfail(reason=known[case.name], strict=False)])
        if case.name in known
        else pytest.param(case, id=case.name)
        for case in CORPUS
    ]


def _has_load_time_code(case: Case) -> bool:
    def is_definition(node: ast.stmt) -> bool:
        docstring = isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        return docstring or isinstance(node, (ast.FunctionDef, ast.ClassDef))

    return not all(is_definition(n) for n in ast.parse(case.text).body)


def test_the_corpus_covers_every_kind_of_attack_with_a_description():
    names = [c.name for c in CORPUS]
    assert len(CORPUS) >= 55 and len(set(names)) == len(names)
    assert all(c.doc for c in CORPUS), [c.name for c in CORPUS if not c.doc]
    assert {n.split("_")[0] for n in names} == set(CATEGORIES)
    load_time = [c.name for c in CORPUS if _has_load_time_code(c)]
    assert len(load_time) >= 6, load_time


def test_hidden_attacks_do_not_clash_with_the_service_they_hide_in():
    """The synthesizer cases paste a corpus module into a generated service: no shared names."""
    service = top_level_names(service_source())
    for case in CORPUS:
        assert not (top_level_names(case.text) - {"handle"}) & service, case.name


@pytest.mark.slow
@pytest.mark.parametrize("case", _params(KNOWN_ESCAPES))
def test_hostile_module_is_contained(case, tmp_path):
    outcome = run_case(case, tmp_path / "case")
    assert outcome.contained, f"{case.name} ({case.doc}) escaped:\n  " + "\n  ".join(outcome.escapes)


@pytest.mark.slow
@pytest.mark.parametrize("case", _params(KNOWN_SYNTHESIZER_ESCAPES))
def test_synthesizer_does_not_keep_a_hostile_module(case, tmp_path):
    outcome = run_case(case, tmp_path / "case", mode="synthesizer")
    assert outcome.contained, f"{case.name} ({case.doc}):\n  " + "\n  ".join(outcome.escapes)
    assert outcome.reason in ("rejected", "kept_other"), outcome.reason


BENIGN = Case(name="benign_control", doc="does nothing hostile", text="def handle(state, tool, args):\n    return None\n")


@pytest.mark.slow
def test_a_benign_module_passes_every_check_and_the_synthesizer_keeps_it(tmp_path):
    """The controls: no false alarm from the harness, and a module the synthesizer does keep (so
    "not kept" above means rejected for the attack, not for the way the harness builds the reply)."""
    direct = run_case(BENIGN, tmp_path / "direct")
    assert direct.contained and direct.reason == "harmless", direct.escapes
    synthesized = run_case(BENIGN, tmp_path / "synth", mode="synthesizer")
    assert synthesized.reason == "kept"
    assert synthesized.escapes == ["the synthesizer kept the hostile module"]


SELF_TEST = {
    "fs_open_secret": "a secret of the parent reached the reply",
    "fs_write_canary": "the parent's file notes.txt was changed",
    "env_os_environ": "a secret of the parent reached the reply",
    "net_import_socket": "the parent's TCP listener got a connection",
    "sig_kill_victim": "an unrelated process was killed",
}


@pytest.mark.parametrize("name", sorted(SELF_TEST))
def test_the_harness_sees_escapes_from_an_executor_without_isolation(name, tmp_path):
    case = next(c for c in CORPUS if c.name == name)
    outcome = run_case(case, tmp_path / "case", executor_module="unsandboxed")
    assert any(SELF_TEST[name] in e for e in outcome.escapes), outcome.escapes
