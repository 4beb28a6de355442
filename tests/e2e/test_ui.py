"""The Dagster UI in a real browser: Debian's chromium driven by Playwright against ``dagster dev``.

Screenshots land in ``test-artifacts/`` (git-ignored); docs/screenshots/ holds copies for the docs.
"""

import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from dagster_dev import dagster_dev, graphql

pytestmark = [pytest.mark.slow, pytest.mark.e2e]

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
VIEWPORT = {"width": 1800, "height": 1500}
# One asset per stage whose name the graph prints whole (long names are abbreviated in the nodes).
STAGE_ASSETS = ["service_specs", "services", "tool_catalog", "dependency_graph", "sampled_tasks", "rubrics",
                "trajectories", "sft_dataset", "rl_tasks", "catalog_by_domain"]
STAGE_GROUPS = ["services", "tasks", "trajectories", "datasets", "training", "evaluation", "reporting"]
RUNS = "{ runsOrError { ... on Runs { results { runId status jobName assetSelection { path } } } } }"
CLI_RUNS = ("{ runsOrError { ... on Runs { results { runId status jobName parentRunId "
            "tags { key value } } } } }")
DEPENDENCIES = "{ assetNodes { assetKey { path } dependencyKeys { path } } }"
CLI_JOBS = ["import_specs_job", "build_services_job", "catalog_and_graph_job", "task_round_job", "datasets_job"]
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def browser_page():
    if not CHROMIUM.exists():
        pytest.fail("Debian's chromium is required: apt-get install -y chromium")
    playwright_api = pytest.importorskip("playwright.sync_api")
    with playwright_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport=VIEWPORT)
        page.add_init_script("localStorage.setItem('communityNux', '1')")  # no newsletter dialog
        page.set_default_timeout(60_000)
        yield page
        browser.close()


def show_whole_graph(page, url: str) -> None:
    """The global asset graph with every group expanded and zoomed out to fit (for the screenshot)."""
    page.goto(f"{url}/asset-groups")
    page.locator("foreignObject").first.wait_for()
    page.mouse.click(VIEWPORT["width"] - 300, 300)
    page.keyboard.press("Alt+e")  # expand all groups
    for _ in range(4):
        page.mouse.click(VIEWPORT["width"] - 28, VIEWPORT["height"] - 149)  # zoom out
        time.sleep(0.3)
    deadline = time.monotonic() + 60
    while missing(STAGE_GROUPS, page.content()) and time.monotonic() < deadline:
        time.sleep(2)
    time.sleep(1)


def missing(names: list[str], html: str) -> list[str]:
    """Names absent from the rendered page's DOM (labels, titles, links)."""
    return [name for name in names if name not in html]


def asset_pages_missing(page, url: str) -> list[str]:
    """Stage assets whose own page does not show them as a materializable asset of the graph.

    The graph canvas renders only the nodes in view (and shortens labels at a zoom that fits the
    whole graph), so each asset is checked on its page instead.
    """
    absent = []
    for name in STAGE_ASSETS:
        page.goto(f"{url}/assets/{name}")
        try:
            page.get_by_text("Lineage").first.wait_for(timeout=30_000)
        except Exception:  # noqa: BLE001 - recorded as missing, the assertion reports it
            absent.append(name)
            continue
        if name not in page.content() or "Asset not found" in page.content():
            absent.append(name)
    return absent


def wait_for_run(url: str, timeout_s: float = 300.0) -> dict:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        runs = graphql(url, RUNS)["runsOrError"]["results"]
        if runs and runs[0]["status"] in ("SUCCESS", "FAILURE", "CANCELED"):
            return runs[0]
        time.sleep(2)
    raise TimeoutError("the run launched from the UI did not finish")


def test_asset_graph_and_materialize_from_the_ui(project_env, tmp_path, browser_page):
    ARTIFACTS.mkdir(exist_ok=True)
    page = browser_page
    with dagster_dev(project_env, tmp_path / "dagster_dev.log") as url:
        show_whole_graph(page, url)
        assert missing(STAGE_GROUPS, page.content()) == []
        page.screenshot(path=ARTIFACTS / "asset-graph.png")
        assert asset_pages_missing(page, url) == []

        page.goto(f"{url}/assets/service_specs")
        page.locator("button:visible").filter(has_text=re.compile(r"^Materialize$")).first.click()
        page.get_by_role("button", name="Confirm").click()  # quarantined_specs comes along (one multi-asset)
        run = wait_for_run(url)
        assert run["status"] == "SUCCESS", run
        assert sorted(a["path"][0] for a in run["assetSelection"]) == ["quarantined_specs", "service_specs"]

        page.goto(f"{url}/runs/{run['runId']}")
        page.get_by_text("RUN_SUCCESS").first.wait_for()
        page.screenshot(path=ARTIFACTS / "run.png")
        page.goto(f"{url}/assets/service_specs?view=checks")
        page.get_by_text("service_ids_unique").first.wait_for()
        page.screenshot(path=ARTIFACTS / "checks.png")
        page.goto(f"{url}/automation")
        page.get_by_text("nightly_task_round_schedule").first.wait_for()
        page.screenshot(path=ARTIFACTS / "automation.png")
    assert (ARTIFACTS / "asset-graph.png").stat().st_size > 10_000


def cli_runs(url: str) -> list[dict]:
    runs = graphql(url, CLI_RUNS)["runsOrError"]["results"]
    return [r for r in runs if {"key": "compoworld/command", "value": "run"} in r["tags"]]


def wait_for_child(url: str, parent: str, timeout_s: float = 300.0) -> dict:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        children = [r for r in graphql(url, CLI_RUNS)["runsOrError"]["results"] if r["parentRunId"] == parent]
        if children and children[0]["status"] in ("SUCCESS", "FAILURE", "CANCELED"):
            return children[0]
        time.sleep(2)
    raise TimeoutError(f"no finished re-execution of {parent}")


def test_a_cli_run_is_on_the_timeline_and_re_executes_from_the_ui(project_env, tmp_path, browser_page):
    """``compoworld run`` (40 walks) then the UI: lineage, timeline, re-execution, task preview, per-partition checks."""
    ARTIFACTS.mkdir(exist_ok=True)
    page = browser_page
    subprocess.run([sys.executable, "-m", "compoworld_assets.cli", "run", "--data-dir", project_env["COMPOWORLD_DATA_DIR"],
                    "--tasks", "40"], cwd=REPO, env=project_env, check=True, timeout=1200)
    with dagster_dev(project_env, tmp_path / "dagster_dev.log") as url:
        nodes = graphql(url, DEPENDENCIES)["assetNodes"]
        upstream = {"/".join(n["assetKey"]["path"]): {"/".join(d["path"]) for d in n["dependencyKeys"]} for n in nodes}
        assert "dependency_graph" in upstream["sampled_tasks"], "tasks are sampled from the stored graph"
        assert {"base_model", "sft_checkpoint", "rl_checkpoint"} <= upstream["benchmark_scores"]
        page.goto(f"{url}/assets/sampled_tasks?view=lineage")
        page.get_by_text("dependency_graph").first.wait_for()
        time.sleep(2)
        page.screenshot(path=ARTIFACTS / "lineage.png")

        runs = cli_runs(url)
        assert sorted(r["jobName"] for r in runs) == sorted(CLI_JOBS) and all(r["status"] == "SUCCESS" for r in runs)
        page.goto(f"{url}/overview/activity/timeline")
        page.get_by_text("catalog_and_graph_job").first.wait_for()
        page.get_by_role("button", name="1hr").click()
        time.sleep(2)
        page.screenshot(path=ARTIFACTS / "timeline.png")

        [graph_run] = [r["runId"] for r in runs if r["jobName"] == "catalog_and_graph_job"]
        page.goto(f"{url}/runs/{graph_run}")
        page.get_by_text("RUN_SUCCESS").first.wait_for()
        page.get_by_role("button", name="Re-execute all (*)").click()
        child = wait_for_child(url, graph_run)
        assert (child["status"], child["jobName"]) == ("SUCCESS", "catalog_and_graph_job"), child
        page.goto(f"{url}/runs/{child['runId']}")
        page.get_by_text("RUN_SUCCESS").first.wait_for()
        page.get_by_text("Re-executions (1)").first.wait_for()
        page.screenshot(path=ARTIFACTS / "reexecuted-run.png")

        page.goto(f"{url}/assets/sampled_tasks?partition=r000")
        row = page.locator("tr").filter(has=page.locator("td", has_text="preview")).first
        row.get_by_text("[Show Markdown]").click()
        page.get_by_text("tasks; the first").first.wait_for()
        assert page.locator("text=/task_[0-9a-f]{16}/").count() >= 1, "the preview names its tasks"
        time.sleep(1)
        page.screenshot(path=ARTIFACTS / "task-preview.png")
        page.keyboard.press("Escape")

        page.goto(f"{url}/assets/services?view=checks&checkDetail=services_expectations")
        page.get_by_text("Execution history").first.wait_for()
        page.get_by_role("tab", name="Partitions").last.click()  # the check's tab, not the asset's
        page.get_by_text(re.compile(r"^Passed \(\d+\)$")).first.wait_for()
        passed = int(re.search(r"\d+", page.get_by_text(re.compile(r"^Passed \(\d+\)$")).first.inner_text())[0])
        every = page.get_by_text(re.compile(r"^\d+ Partitions Selected$")).first.inner_text()
        assert every == f"{passed} Partitions Selected", "every service partition's check passed"
        assert page.get_by_text("Skipped (0)").count() == 1 and page.get_by_text("Missing (0)").count() >= 1
        time.sleep(1)
        page.screenshot(path=ARTIFACTS / "services-checks.png")
