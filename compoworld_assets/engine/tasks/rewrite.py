"""A model rewrites a workflow's request into natural prose; the rubric never depends on the prose.

The template request (:mod:`.workflows.build`) states every fact the agent is given and none it must find.
A rewrite is kept only if it still does: :func:`refusal` refuses one that drops a fact (an address, a number,
a quoted title, a label), adds a value the scenario does not have, or reveals a value the agent must find (a
record id, the limit in a policy, the approver, a frozen account, a reported answer). The request's last
paragraph (what to report, with the JSON keys) is never sent to the model and stays as written. A refused
rewrite keeps the template and the reason is recorded on the task (``difficulty["writer"]``).

Rewrites are cached by the hash of what the model is asked (model, prompt, request) in the world model's
cache file, so a rerun reads the same prose instead of asking again and stays byte-identical.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

from compoworld_assets.engine.canonical import content_hash
from compoworld_assets.engine.tasks.model import Task
from compoworld_assets.engine.tasks.realism import EMAIL, INTERNAL_ID

REQUEST_PROMPT = (
    "Rewrite the message below as its writer would really send it to a colleague: natural, concise, in the first "
    "person. Keep every name, email address, number, date, quoted title and record label exactly as written. Do "
    "not add any fact, value, step or record, and do not name tools or APIs. Answer with the message only.\n\n"
    "{text}"
)
REPORT_MARK = "\n\nWhen you are done"
QUOTED = re.compile(r'"([^"]+)"')
WITH_DIGITS = re.compile(r"\b[\w-]*\d[\w,.:-]*\w|\b\d\b")


def facts(text: str) -> set[str]:
    """What a request states that the agent may need word for word: addresses, quoted titles, values with digits."""
    return {m.casefold() for m in EMAIL.findall(text)} | {q.casefold() for q in QUOTED.findall(text)} | \
        {w.casefold().rstrip(".,") for w in WITH_DIGITS.findall(EMAIL.sub(" ", text))}


def hidden_values(task: Task) -> set[str]:
    """Values the agent must find, not be told: what the rubric checks, protects or expects reported that the
    template does not state (an approver's address, a frozen account, a chosen record's label, an answer)."""
    found: set[str] = set()
    for criterion in task.rubric:
        check = criterion.check
        values: list[Any] = [*(check.get("match") or {}).values(), *(check.get("fields") or {}).values(),
                             *(check.get("mentions") or {}).get("values", []), check.get("value")]
        found |= {str(v).casefold() for v in values if isinstance(v, (str, int, float)) and not isinstance(v, bool)
                  and len(str(v)) >= 3}
    for trap in task.traps:
        found |= {m.group(0).casefold() for m in re.finditer(r"[\d,]+\.\d\d", trap.rule)}
    stated = task.instruction.casefold()
    return {value for value in found if value not in stated}


def refusal(template: str, rewritten: str, hidden: Iterable[str]) -> str | None:
    """Why a rewrite of ``template`` may not be used (None: it may)."""
    if not rewritten.strip():
        return "the rewrite is empty"
    given, kept = facts(template), facts(rewritten)
    folded = rewritten.casefold()
    dropped = sorted(f for f in given if f not in folded)
    if dropped:
        return f"drops {dropped[0]!r}"
    ids = sorted(set(INTERNAL_ID.findall(rewritten)) - set(INTERNAL_ID.findall(template)))
    if ids:
        return f"reveals the record id {ids[0]!r}"
    leaked = sorted(h for h in hidden if h in folded)
    if leaked:
        return f"reveals {leaked[0]!r}, which the agent must find"
    added = sorted(f for f in kept - given if not any(f in g for g in given))
    if added:
        return f"adds {added[0]!r}"
    return None


class RequestRewriter:
    """Rewrites workflow requests with ``completion`` (litellm's, bounded and retried by the caller); ``cache``
    holds each model answer under the hash of what was asked (any object with ``get``/``put`` of dicts)."""

    def __init__(self, model: str, completion: Callable[..., Any], cache: Any = None, **completion_kwargs: Any):
        self.model = model
        self.completion = completion
        self.cache = cache
        self.completion_kwargs = completion_kwargs

    def revise(self, task: Task) -> Task:
        request, mark, report = task.instruction.partition(REPORT_MARK)
        prompt = REQUEST_PROMPT.format(text=request)
        key = "instruction:" + content_hash([self.model, prompt])
        cached = self.cache.get(key) if self.cache is not None else None
        if cached is not None:
            text = str(cached.get("text", ""))
        else:
            response = self.completion(model=self.model, messages=[{"role": "user", "content": prompt}],
                                       temperature=0, **self.completion_kwargs)
            text = (response.choices[0].message.content or "").strip()
            if self.cache is not None:
                self.cache.put(key, {"text": text})
        reason = refusal(request, text, hidden_values(task))
        difficulty = dict(task.difficulty)
        if reason is not None:
            difficulty["writer"] = f"template (the rewrite {reason})"
            return task.model_copy(update={"difficulty": difficulty})
        difficulty["writer"] = self.model
        return task.model_copy(update={"instruction": text + mark + report, "difficulty": difficulty})
