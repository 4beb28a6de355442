"""Task previews as Markdown: instruction, house rules and rubric in words, for people to read.

:func:`tasks_markdown` picks tasks by seed (the same seed and tasks give the same page) and is
what ``docs/examples/tasks.md`` and the ``sampled_tasks`` asset's ``examples`` metadata show.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from compoworld_assets.engine.canonical import content_hash
from compoworld_assets.engine.tasks.model import Task

KIND_WORDS = {"state": "must hold", "answer": "must report", "negative": "must not happen"}


def kind_of(task: Task) -> str:
    """The task's workflow pattern (:mod:`.workflows`), or ``walk``."""
    return str(task.difficulty.get("pattern", "walk"))


def pick(tasks: Sequence[Task], seed: int, n: int = 20) -> list[Task]:
    """``n`` tasks chosen by ``seed`` (by the hash of seed and task id), taking every pattern and level in turn so
    that each kind of task shows; in that order."""
    ranked = sorted(tasks, key=lambda t: content_hash(["preview", seed, t.task_id]))
    groups: dict[tuple[str, str], list[Task]] = {}
    for task in ranked:
        groups.setdefault((kind_of(task), str(task.difficulty.get("level", "?"))), []).append(task)
    chosen: list[Task] = []
    while len(chosen) < min(n, len(ranked)):
        for key in sorted(groups):
            if groups[key] and len(chosen) < n:
                chosen.append(groups[key].pop(0))
    return chosen


def task_markdown(task: Task, number: int | None = None) -> str:
    level = task.difficulty.get("level", "?")
    head = f"### {'' if number is None else f'{number}. '}`{task.task_id}`"
    facts = [f"**{kind_of(task).replace('_', ' ')}**", f"level **{level}**", f"split {task.split}",
             "services " + ", ".join(task.services)]
    if task.capabilities:
        facts.append("capabilities " + ", ".join(task.capabilities))
    if task.traps:
        facts.append("trap " + ", ".join(t.kind.replace("_", " ") for t in task.traps))
    lines = [head, "", " · ".join(facts), ""]
    lines += [f"> {line}" if line else ">" for line in task.instruction.splitlines()]
    if task.report_fields:
        lines += ["", f"Answer form (stated by the agent interface): `{task.answer_form()}`"]
    rules = task.house_rules
    if rules:
        lines += ["", "House rules:", *[f"- {rule}" for rule in rules]]
    lines += ["", "Rubric:"]
    lines += [f"- *{KIND_WORDS[c.kind]}*: {c.description}" for c in task.rubric]
    return "\n".join(lines)


def tasks_markdown(tasks: Sequence[Task], seed: int, n: int = 20, title: str = "Example tasks",
                   source: str = "") -> str:
    """A page of ``n`` tasks picked by ``seed``, with the mix of levels, styles and traps of all ``tasks``."""
    chosen = pick(tasks, seed, n)
    levels = Counter(t.difficulty.get("level", "?") for t in tasks)
    kinds = Counter(kind_of(t) for t in tasks)
    traps = Counter(t.traps[0].kind if t.traps else "none" for t in tasks)
    summary = [f"{len(tasks)} tasks" + (f" from {source}" if source else "") + f"; {len(chosen)} shown, picked by "
               f"seed {seed}, every pattern and level in turn.", "",
               "| | patterns | levels | traps |", "|---|---|---|---|",
               "| share | " + " | ".join(_shares(c, len(tasks)) for c in (kinds, levels, traps)) + " |"]
    parts = [f"# {title}", "", *summary, ""]
    parts += [task_markdown(task, i + 1) + "\n" for i, task in enumerate(chosen)]
    return "\n".join(parts).rstrip() + "\n"


def _shares(counts: Counter[str], total: int) -> str:
    return ", ".join(f"{key} {count / total:.0%}" for key, count in sorted(counts.items())) if total else "–"
