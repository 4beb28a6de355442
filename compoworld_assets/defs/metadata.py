"""What a researcher sees of a table in the Dagster UI: its row count, column schema and a preview.

Column descriptions are the dbt doc blocks in ``dbt/models/docs/pipeline_columns.md`` (one block per
``<table>__<column>``); the dbt staging models reference the same blocks, so the Dagster catalog and
the dbt docs never disagree. Previews are Markdown (Dagster renders it in the asset's metadata).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import dagster as dg
import polars as pl

DOCS_FILE = Path(__file__).resolve().parents[2] / "dbt" / "models" / "docs" / "pipeline_columns.md"
# Tables that share one set of column docs.
DOC_TABLE = {"sft_checkpoint": "checkpoint", "rl_checkpoint": "checkpoint"}
_DOC_BLOCK = re.compile(r"{%\s*docs\s+(\w+)\s*%}(.*?){%\s*enddocs\s*%}", re.DOTALL)
# Who answers for an asset, and what it is made with (the UI shows both on every asset).
DATA_OWNERS = ["team:data"]
TRAINING_OWNERS = ["team:training"]
EVALUATION_OWNERS = ["team:evaluation"]
TABLE_KINDS = {"python", "polars", "duckdb"}
CELL_CHARS = 160
MESSAGE_CHARS = 600


@functools.cache
def column_docs() -> dict[str, str]:
    """Doc block name → text."""
    return {name: " ".join(text.split()) for name, text in _DOC_BLOCK.findall(DOCS_FILE.read_text("utf-8"))}


def column_description(table: str, column: str) -> str | None:
    return column_docs().get(f"{DOC_TABLE.get(table, table)}__{column}")


def table_schema(table: str, frame: pl.DataFrame | pl.LazyFrame) -> dg.TableSchema:
    return dg.TableSchema(columns=[
        dg.TableColumn(name, type=str(dtype), description=column_description(table, name))
        for name, dtype in frame.collect_schema().items()])


def table_metadata(table: str, frame: pl.DataFrame | pl.LazyFrame) -> dict[str, dg.MetadataValue]:
    """``dagster/row_count`` and ``dagster/column_schema`` (types and descriptions) of a stored frame."""
    rows = frame.select(pl.len()).collect().item() if isinstance(frame, pl.LazyFrame) else len(frame)
    return {"dagster/row_count": dg.MetadataValue.int(rows),
            "dagster/column_schema": dg.MetadataValue.table_schema(table_schema(table, frame))}


def _cell(value: Any, limit: int = CELL_CHARS) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    text = " ".join(text.split()).replace("|", "\\|")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def markdown_table(rows: Iterable[Mapping[str, Any]], columns: Sequence[str]) -> str:
    lines = [f"| {' | '.join(columns)} |", f"|{' --- |' * len(columns)}"]
    lines += [f"| {' | '.join(_cell(row.get(c, '')) for c in columns)} |" for row in rows]
    return "\n".join(lines)


def task_preview(tasks: Sequence[Any], limit: int = 3) -> dg.MetadataValue:
    """The first ``limit`` tasks (``tasks`` sorted by id): services, split, instruction and rubric."""
    if not tasks:
        return dg.MetadataValue.md("_no tasks_")
    parts = []
    for task in tasks[:limit]:
        quoted = "\n".join(f"> {line}" for line in task.instruction.splitlines() or [""])
        criteria = [{"kind": c.kind, "weight": c.weight, "criterion": c.description} for c in task.rubric]
        parts.append(f"#### `{task.task_id}` · {task.split} · {' + '.join(task.services)}\n\n{quoted}\n\n"
                     f"{markdown_table(criteria, ['kind', 'weight', 'criterion'])}")
    return dg.MetadataValue.md(f"{len(tasks)} tasks; the first {min(limit, len(tasks))}:\n\n" + "\n\n".join(parts))


def _message_markdown(message: Mapping[str, Any]) -> str:
    role = message.get("role", "?")
    lines = []
    if message.get("content"):
        text = str(message["content"])
        text = text if len(text) <= MESSAGE_CHARS else text[: MESSAGE_CHARS - 1] + "…"
        label = f"{role} ({message['tool_call_id']})" if message.get("tool_call_id") else role
        lines.append(f"**{label}:** " + text.replace("\n", "  \n"))
    for call in message.get("tool_calls") or []:
        function = call.get("function", {})
        lines.append(f"**{role} calls** `{function.get('name')}({_cell(function.get('arguments', ''), 300)})`")
    return "\n\n".join(lines) or f"**{role}:** _(empty)_"


def conversation_preview(title: str, sample: Mapping[str, Any], facts: Mapping[str, Any] | None = None) -> dg.MetadataValue:
    """One sample (CompoWorld format: tools, messages, meta) as a readable conversation."""
    tools = ", ".join(f"`{t['function']['name']}`" for t in sample.get("tools", []) if "function" in t)
    header = [f"#### {title}"]
    header += [f"- **{k}:** {_cell(v)}" for k, v in (facts or {}).items()]
    if tools:
        header.append(f"- **tools offered:** {tools}")
    body = "\n\n".join(_message_markdown(m) for m in sample.get("messages", []))
    return dg.MetadataValue.md("\n".join(header) + "\n\n" + body)
