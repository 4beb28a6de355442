"""The leaderboard as a picture: one line per (model, benchmark) headline metric, mean and 95% interval.

Plain SVG text (no plotting library): Dagster shows it in the asset's metadata as a markdown image,
and it can be written next to the docs as it is.
"""

from __future__ import annotations

import base64
from typing import Any
from xml.sax.saxutils import escape

HEADLINE_METRICS = ("success", "accuracy", "reward")
LABEL_WIDTH = 330
PLOT_WIDTH = 400
ROW_HEIGHT = 22
MARGIN = 12
AXIS_HEIGHT = 28


def headline_rows(rows: list[dict[str, Any]], metrics: tuple[str, ...] = HEADLINE_METRICS) -> list[dict[str, Any]]:
    """The rows to draw, ordered by benchmark then model."""
    return sorted((r for r in rows if r["metric"] in metrics), key=lambda r: (r["benchmark"], r["model"], r["metric"]))


def _x(value: float) -> float:
    return LABEL_WIDTH + max(0.0, min(1.0, value)) * PLOT_WIDTH


def interval_plot_svg(rows: list[dict[str, Any]], metrics: tuple[str, ...] = HEADLINE_METRICS) -> str:
    """An SVG of every headline metric on a 0–1 axis: a bar over the interval and a dot at the mean."""
    drawn = headline_rows(rows, metrics)
    height = MARGIN * 2 + AXIS_HEIGHT + ROW_HEIGHT * max(len(drawn), 1)
    width = LABEL_WIDTH + PLOT_WIDTH + MARGIN * 2
    parts = [(f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'font-family="sans-serif" font-size="12">'),
             f'<rect width="{width}" height="{height}" fill="white"/>']
    axis_y = MARGIN + ROW_HEIGHT * max(len(drawn), 1) + 4
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        x = _x(tick)
        parts.append(f'<line x1="{x:.1f}" y1="{MARGIN}" x2="{x:.1f}" y2="{axis_y}" stroke="#ddd"/>')
        parts.append(f'<text x="{x:.1f}" y="{axis_y + 16}" text-anchor="middle" fill="#555">{tick:g}</text>')
    if not drawn:
        parts.append(f'<text x="{MARGIN}" y="{MARGIN + 14}" fill="#555">no scores yet</text>')
    for index, row in enumerate(drawn):
        y = MARGIN + ROW_HEIGHT * index + ROW_HEIGHT / 2
        label = escape(f"{row['model']} · {row['benchmark']} · {row['metric']} (n={row['n']}, k={row['k']})")
        parts.append(f'<text x="{MARGIN}" y="{y + 4:.1f}" fill="#222">{label}</text>')
        parts.append(f'<line x1="{_x(row["ci_low"]):.1f}" y1="{y:.1f}" x2="{_x(row["ci_high"]):.1f}" y2="{y:.1f}" '
                     f'stroke="#4a78b5" stroke-width="4" stroke-linecap="round"/>')
        parts.append(f'<circle cx="{_x(row["mean"]):.1f}" cy="{y:.1f}" r="4.5" fill="#c0392b">'
                     f'<title>{row["mean"]:.3f} [{row["ci_low"]:.3f}, {row["ci_high"]:.3f}]</title></circle>')
    parts.append("</svg>")
    return "\n".join(parts)


def svg_markdown_image(svg: str, alt: str = "leaderboard") -> str:
    """Markdown that shows ``svg`` inline (a base64 data URI), as Dagster's metadata viewer renders it."""
    encoded = base64.b64encode(svg.encode("utf-8")).decode("ascii")
    return f"![{alt}](data:image/svg+xml;base64,{encoded})"


def main(argv: list[str] | None = None) -> None:
    """``python -m compoworld_assets.engine.evaluation.plot RESULT.json... --out board.svg`` (suite outputs)."""
    import argparse
    import json
    from pathlib import Path

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("results", nargs="+", type=Path, help="files written by training.benchmark_suite --out")
    parser.add_argument("--out", required=True, type=Path)
    args = parser.parse_args(argv)
    rows = [row for path in args.results for row in json.loads(path.read_text(encoding="utf-8"))["rows"]]
    args.out.write_text(interval_plot_svg(rows), encoding="utf-8")


if __name__ == "__main__":
    main()
