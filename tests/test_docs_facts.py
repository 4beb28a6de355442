"""Facts the README and docs/ state that code can check: extras, the DuckDB schema, CLI verbs and
defaults, and the names of jobs, schedules, sensors and assets. A doc that goes stale fails here."""

import re
import tomllib
from pathlib import Path

import pytest

from compoworld_assets.asset_index import ASSET_PARTITIONS
from compoworld_assets.cli import build_parser

REPO = Path(__file__).resolve().parents[1]
DOCS = {path.relative_to(REPO).as_posix(): path.read_text(encoding="utf-8")
        for path in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), REPO / "specs" / "README.md"]}


def _subcommands() -> dict:
    parser = build_parser()
    [sub] = [a for a in parser._actions if a.dest == "command"]
    return sub.choices


def test_the_extras_the_architecture_names_are_the_projects():
    extras = set(tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"])
    [line] = [line for line in DOCS["docs/architecture.md"].splitlines() if "extras:" in line]
    assert set(re.findall(r"(\w+) \(", line.split("extras:")[1])) == extras


def test_the_duckdb_schema_named_in_the_docs_is_the_io_managers():
    from resources.storage import SCHEMA

    named = {(doc, m) for doc, text in DOCS.items() for line in text.splitlines()
             if "duckdb" in line.lower() for m in re.findall(r"schema `(\w+)`", line)}
    assert named and {m for _, m in named} == {SCHEMA}, named


def test_every_cli_verb_the_docs_use_exists_and_the_readme_lists_every_verb():
    verbs = set(_subcommands())
    used = {(doc, v) for doc, text in DOCS.items() for v in re.findall(r"compoworld ([\w-]+)", text)}
    assert {v for _, v in used} <= verbs | {"main"}, sorted(u for u in used if u[1] not in verbs)
    commands = DOCS["README.md"].split("## Commands", 1)[1]
    assert {v for v in verbs if f"compoworld {v}" not in commands} == set()


def test_the_run_defaults_the_readme_states_are_the_parsers():
    run = _subcommands()["run"]
    defaults = {a.option_strings[0]: a.default for a in run._actions if a.option_strings}
    stated = dict(re.findall(r"\[(--[a-z-]+) ([\w./]+)\]", DOCS["README.md"]))
    assert stated and all(str(defaults[flag]) == value for flag, value in stated.items()), (stated, defaults)
    from compoworld_assets.defs.tasks.assets import TaskRoundConfig
    from compoworld_assets.task_volume import MIN_PLANS

    assert defaults["--tasks"] is None and TaskRoundConfig().plan_count(37) == MIN_PLANS
    assert f"{MIN_PLANS:,} plans" in DOCS["README.md"]


@pytest.fixture(scope="module")
def definitions():
    from compoworld_assets.definitions import defs

    return defs()


def test_every_job_schedule_and_sensor_the_docs_name_exists(definitions):
    names = ({j.name for j in definitions.jobs} | {s.name for s in definitions.schedules}
             | {s.name for s in definitions.sensors})
    named = {(doc, n) for doc, text in DOCS.items() for n in re.findall(r"`(\w+_(?:job|schedule|sensor))`", text)}
    assert named and {n for _, n in named} <= names, sorted(x for x in named if x[1] not in names)


def test_the_assets_of_the_readmes_pipeline_table_exist():
    table = DOCS["README.md"].split("## Pipeline (Dagster assets)", 1)[1].split("\n\n", 2)[1]
    named = {n for n in re.findall(r"`([a-z_/]+)`", table) if not n.startswith("data/")}  # data/...: folders
    assert named and named <= set(ASSET_PARTITIONS), sorted(named - set(ASSET_PARTITIONS))
