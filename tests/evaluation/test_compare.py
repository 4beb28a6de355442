"""Paired comparison of suite reports (``engine/evaluation/compare.py``)."""

import json

from compoworld_assets.engine.evaluation.compare import comparison_rows, main


def _report(model, successes, calls):
    return {"model": model, "scores": {"compoworld_heldout": {
        "success": {f"t{i}": [float(s)] for i, s in enumerate(successes)},
        "made_tool_call": {f"t{i}": [float(c)] for i, c in enumerate(calls)}}}}


def test_rows_compare_every_later_report_with_the_first_on_shared_metrics():
    base = _report("base", [0] * 50, [0] * 50)
    sft = _report("sft", [1] * 10 + [0] * 40, [1] * 50)
    del sft["scores"]["compoworld_heldout"]["made_tool_call"]["t0"]
    rows = {r["metric"]: r for r in comparison_rows([base, sft])}
    assert rows["success"]["difference"] == 0.2 and rows["success"]["significant"] == "yes, higher"
    assert rows["made_tool_call"]["n"] == 49 and rows["made_tool_call"]["difference"] == 1.0
    worse = {r["metric"]: r for r in comparison_rows([sft, base], metrics=["success"])}
    assert list(worse) == ["success"] and worse["success"]["significant"] == "yes, lower"
    tie = comparison_rows([base, _report("same", [0] * 50, [0] * 50)])
    assert {r["significant"] for r in tie} == {"no"}


def test_cli_prints_and_writes_the_markdown_table(tmp_path, capsys):
    paths = []
    for report in (_report("base", [0] * 20, [0] * 20), _report("sft", [1] * 5 + [0] * 15, [1] * 20)):
        path = tmp_path / f"{report['model']}.json"
        path.write_text(json.dumps(report))
        paths.append(str(path))
    main([*paths, "--metrics", "success", "--out", str(tmp_path / "lift.md")])
    printed = capsys.readouterr().out
    assert printed == (tmp_path / "lift.md").read_text()
    assert "| compoworld_heldout | success | 20 × 1 | base: 0.000 | sft: 0.250" in printed
