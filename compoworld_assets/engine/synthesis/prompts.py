"""The coding agent's prompts, and reading its code back out of a reply.

The contract and the CRUD conventions are quoted from the modules that define them, so the
prompt cannot drift from what the runtime and the verification actually enforce.
"""

from __future__ import annotations

import re

from compoworld_assets.engine.runtime import executor
from compoworld_assets.engine.specs import model
from compoworld_assets.engine.specs.model import ServiceSpec

PROMPT_VERSION = "2"
MAX_FAILURES_SHOWN = 40

_CODE_BLOCK_RE = re.compile(r"```[ \t]*(?:python|py)?[ \t]*\n(.*?)```", re.DOTALL | re.IGNORECASE)

SYSTEM_PROMPT = f"""You write Python modules that implement the tools of a simulated software service.

THE MODULE CONTRACT
{(executor.__doc__ or "").strip()}

Envelopes: success is {{"success": true, "data": ...}}; failure is
{{"success": false, "error": {{"code": ..., "message": ...}}}} with code one of
"invalid_arguments" (missing/unknown/ill-typed arguments), "not_found" (an id that is not stored),
"conflict" or "unknown_tool". Never raise: every failure is an error envelope, and a call that fails
must leave the state unchanged.

THE CONVENTIONS OF THE SPEC
{(model.__doc__ or "").strip()}

Further rules:
* Records live in state["tables"][EntityName][record_id] and always carry their "id".
* New ids are f"{{id_prefix}}_{{n:04d}}" where n is state["counters"][EntityName] + 1 (store the new n).
* list/search return {{"items": [...records sorted by id...], "count": number of items returned}}.
* delete returns {{"deleted": record_id}}; create/read/update return the full stored record.
* Same-service ids passed to create/update must name stored records, else "not_found".
* Validate arguments against the tool's parameters schema (required, JSON types, enums, email/date/
  datetime/currency formats) and answer "invalid_arguments" when they do not fit.
* Every returned value must match the tool's "returns" JSON schema.
* Be deterministic: no clock, no randomness, no module-level mutable state; the same state and
  arguments must give the same result and the same new state.
* Tools with "implementable": false must answer an "unknown_tool" error envelope.

Reply with the complete module in a single ```python code block."""


def initial_prompt(spec: ServiceSpec, reference_source: str | None) -> str:
    parts = [f"Implement every tool of this service spec:\n```json\n{spec.model_dump_json(indent=2)}\n```"]
    if reference_source:
        parts.append(
            "Here is a working module for the tools whose semantics follow the conventions; keep its "
            "behaviour for those tools and add the remaining ones (`action` tools: give them plausible, "
            "deterministic semantics on the state):\n```python\n" + reference_source + "```"
        )
    return "\n\n".join(parts)


def repair_prompt(failures: list[tuple[str, str, str]]) -> str:
    """Ask for a corrected module, listing the failing checks as (tool, check, detail)."""
    lines = [f"- {tool} / {check}: {detail}" for tool, check, detail in failures[:MAX_FAILURES_SHOWN]]
    if len(failures) > MAX_FAILURES_SHOWN:
        lines.append(f"- ... and {len(failures) - MAX_FAILURES_SHOWN} more")
    return (
        "The generated verification tests failed these checks (tool / check: detail):\n"
        + "\n".join(lines)
        + "\n\nFix them and reply with the corrected complete module in a single ```python code block."
    )


NO_CODE_PROMPT = "Your reply had no ```python code block. Reply with the complete module in one such block."


def syntax_error_prompt(error: str) -> str:
    return (
        f"The module does not load: {error}\nReply with the corrected complete module in one ```python block."
    )


def violation_prompt(violations: list[str]) -> str:
    listed = "\n".join(f"- {v}" for v in violations[:5])
    return (
        "The module was rejected: it uses what a service module may not (interpreter internals, dynamic "
        "code, reflection, files, processes, threads, sockets, signals, modules outside the allowlist):\n"
        f"{listed}\nA service keeps all its data in `state`. Reply with the complete module in one ```python "
        "block that only reads and writes `state`."
    )


def extract_code(reply: str) -> str | None:
    """The module in a reply: the longest fenced block defining ``handle`` (else the longest block)."""
    blocks = [b.strip("\n") + "\n" for b in _CODE_BLOCK_RE.findall(reply or "") if b.strip()]
    if not blocks:
        return None
    with_handle = [b for b in blocks if re.search(r"^def handle\(", b, re.MULTILINE)]
    return max(with_handle or blocks, key=len)
