"""The leaderboard plot: valid SVG, one interval per headline metric, placed on a 0–1 axis."""

import base64
import xml.etree.ElementTree as ET

from compoworld_assets.engine.evaluation.plot import (
    LABEL_WIDTH,
    PLOT_WIDTH,
    interval_plot_svg,
    svg_markdown_image,
)

NS = {"svg": "http://www.w3.org/2000/svg"}
ROWS = [
    {"benchmark": "bfcl", "model": "sft", "metric": "accuracy", "mean": 0.5, "ci_low": 0.25, "ci_high": 0.75,
     "n": 12, "k": 2},
    {"benchmark": "bfcl", "model": "base", "metric": "accuracy", "mean": 0.1, "ci_low": 0.0, "ci_high": 0.3,
     "n": 12, "k": 2},
    {"benchmark": "bfcl", "model": "base", "metric": "pass^k", "mean": 0.1, "ci_low": 0.0, "ci_high": 0.3,
     "n": 12, "k": 2},
    {"benchmark": "tau2", "model": "a<b&c", "metric": "reward", "mean": 1.0, "ci_low": 1.0, "ci_high": 1.0,
     "n": 6, "k": 2},
]


def test_one_dot_and_one_interval_per_headline_row_on_the_unit_axis():
    root = ET.fromstring(interval_plot_svg(ROWS))
    dots = root.findall("svg:circle", NS)
    assert len(dots) == 3, "pass^k is not a headline metric"
    assert [float(d.get("cx")) for d in dots] == [LABEL_WIDTH + 0.1 * PLOT_WIDTH, LABEL_WIDTH + 0.5 * PLOT_WIDTH,
                                                  LABEL_WIDTH + PLOT_WIDTH]
    intervals = [e for e in root.findall("svg:line", NS) if e.get("stroke-width") == "4"]
    assert [(float(e.get("x1")), float(e.get("x2"))) for e in intervals][1] == (
        LABEL_WIDTH + 0.25 * PLOT_WIDTH, LABEL_WIDTH + 0.75 * PLOT_WIDTH)
    labels = [t.text for t in root.findall("svg:text", NS)]
    assert "a<b&c · tau2 · reward (n=6, k=2)" in labels, "labels are escaped and survive parsing"


def test_empty_board_still_draws_and_embeds_as_markdown():
    svg = interval_plot_svg([])
    assert "no scores yet" in svg
    markdown = svg_markdown_image(svg)
    assert markdown.startswith("![leaderboard](data:image/svg+xml;base64,")
    assert base64.b64decode(markdown.split(",", 1)[1].rstrip(")")).decode() == svg


def test_command_line_draws_every_suite_result_file(tmp_path):
    import json

    from compoworld_assets.engine.evaluation.plot import main

    for name in ("base", "sft"):
        (tmp_path / f"{name}.json").write_text(json.dumps({"rows": [r for r in ROWS if r["model"] == name]}))
    main([str(tmp_path / "base.json"), str(tmp_path / "sft.json"), "--out", str(tmp_path / "board.svg")])
    assert len(ET.parse(tmp_path / "board.svg").getroot().findall("svg:circle", NS)) == 2
