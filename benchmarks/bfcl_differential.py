"""Differential test: BFCL's human-written multi-turn backends vs our synthesized services.

Imports each backend's function docs, synthesizes it offline (code for CRUD tools, the
offline world model for the rest), adapts each entry's ``initial_config`` into our typed state
and replays the ground-truth calls on both sides. See docs/differential-bfcl.md.

    .venv/bin/python benchmarks/bfcl_differential.py [--limit N] [--backend NAME ...] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))  # run as a plain script from any working directory

from compoworld_assets.engine.differential import BACKENDS, bfcl_available, run_differential
from compoworld_assets.engine.differential.bfcl import DEFAULT_CATEGORY

COLUMNS = (  # (summary key, title, width); shares print as percentages
    ("backend", "backend", 18),
    ("entries", "entries", 7),
    ("sequences", "seqs", 5),
    ("calls", "calls", 5),
    ("reference_failures", "ref.fail", 8),
    ("our_failures", "our.fail", 8),
    ("outcome_agreement", "outcome", 7),
    ("result_match", "result", 7),
    ("state_comparable", "st.comp", 7),
    ("state_match", "st.match", 8),
    ("sequence_match", "seq.match", 9),
    ("crud_tools", "crud", 4),
    ("action_tools", "action", 6),
    ("world_model_tools", "wm", 3),
)


def _cell(value: object, width: int) -> str:
    if isinstance(value, str):
        return f"{value:<{width}}"
    if isinstance(value, float):
        return f"{value:>{width}.1%}"
    return f"{value:>{width}}"


def render_table(rows: list[dict[str, object]]) -> str:
    lines = [
        " ".join(
            _cell(title, width) if key == "backend" else f"{title:>{width}}" for key, title, width in COLUMNS
        )
    ]
    lines.extend(" ".join(_cell(row[key], width) for key, _, width in COLUMNS) for row in rows)
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None, help="entries per backend (default: all)")
    parser.add_argument("--backend", action="append", choices=BACKENDS, help="only these backends")
    parser.add_argument("--category", default=DEFAULT_CATEGORY, help="BFCL multi-turn category")
    parser.add_argument("--json", type=Path, default=None, help="also write the per-backend summaries here")
    options = parser.parse_args()
    if not bfcl_available():
        print("bfcl_eval is not importable: pip install --no-deps bfcl-eval==2026.3.23", file=sys.stderr)
        return 2
    started = time.perf_counter()
    reports = run_differential(options.backend or BACKENDS, options.limit, options.category)
    rows = [r.summary() for r in reports]
    print(render_table(rows))
    print(f"\n{options.category}; {time.perf_counter() - started:.1f} s")
    if options.json is not None:
        options.json.write_text(json.dumps(rows, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
