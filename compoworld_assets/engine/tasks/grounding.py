"""Whether what a run carries out of a world-model call is grounded in its world.

A world-model tool's answer is simulated: offline it is built only from the call's arguments and the
service's state, but an LLM (or an older cache) can still answer with a value nothing holds. A task
that grades such a value, or hands it to a later call, teaches an agent to copy text the world never
contained. A value of a simulated call's answer that the run *uses* (a later call's argument or a
reported value) is grounded when a record of the initial world holds it, an argument of that call or
of an earlier one gave it, or an earlier code tool's answer (code reads its state) holds it. Booleans
are not checked (true and false are in every world). The id of a record a simulated call created is
not held by the initial world, so a task that hands one on is refused: conservative, not wrong.

The rule reads only the calls and the answer, so the task validator checks gold runs with it and an
asset check checks stored trajectories with it, and both mean the same thing.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterator, Mapping
from typing import Any

from compoworld_assets.engine.runtime.state import WorldState
from compoworld_assets.engine.tasks.model import ToolCallRecord


def ungrounded_values(initial: WorldState, calls: list[ToolCallRecord], answer: Mapping[str, Any],
                      simulated: Collection[str]) -> list[tuple[str, str]]:
    """(where, detail) for every used value of a call to a ``simulated`` tool (qualified names) that is not
    grounded (see the module doc); empty when the run calls no simulated tool."""
    if not any(f"{c.service_id}_{c.tool}" in simulated for c in calls):
        return []
    stored = {_key(v) for state in initial.services.values() for table in state.tables.values()
              for record in table.values() for v in leaves(record)}
    found = []
    for index, call in enumerate(calls):
        if f"{call.service_id}_{call.tool}" not in simulated or not call.result.get("success"):
            continue
        # what the world showed before this call: code answers read the state (a later one may echo the value)
        held = stored | {_key(v) for c in calls[:index] if f"{c.service_id}_{c.tool}" not in simulated
                         for v in leaves(c.result)}
        given = {_key(v) for c in calls[:index + 1] for v in leaves(c.arguments)}
        used = {_key(v) for c in calls[index + 1:] for v in leaves(c.arguments)} | \
            {_key(v) for v in leaves(dict(answer))}
        answered = {_key(v) for v in leaves(call.result.get("data")) if not isinstance(v, bool)}
        for value in sorted(answered & used - held - given):
            found.append((f"call {index} ({call.tool}, simulated)",
                          f"{value} is used later but held by no record, argument or code answer"))
    return found


def leaves(value: Any) -> Iterator[Any]:
    """The scalars of a JSON value (None left out)."""
    if isinstance(value, dict):
        for item in value.values():
            yield from leaves(item)
    elif isinstance(value, list):
        for item in value:
            yield from leaves(item)
    elif value is not None:
        yield value


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True)
