"""What the UI shows of each asset: column docs for every table, previews, kinds, owners, freshness."""

import json

import dagster as dg
import polars as pl
import pytest

from compoworld_assets.definitions import defs
from compoworld_assets.defs.metadata import (
    column_description,
    conversation_preview,
    markdown_table,
    table_metadata,
    task_preview,
)


def test_every_table_asset_has_a_documented_schema(pipeline_schemas):
    graph = defs().resolve_asset_graph()
    dbt_assets = {key for key in graph.get_all_asset_keys() if len(key.path) > 1}
    stored = {key.path[-1] for key in graph.get_all_asset_keys()} - {k.path[-1] for k in dbt_assets}
    assert stored - {"service_spec"} <= set(pipeline_schemas), "a table asset missing from pipeline_schemas"
    undocumented = [f"{table}.{column}" for table, schema in pipeline_schemas.items() for column in schema
                    if not column_description(table, column)]
    assert undocumented == []


def test_table_metadata_names_rows_types_and_descriptions():
    frame = pl.DataFrame({"task_id": ["t1", "t2"], "n_steps": [2, 3]})
    metadata = table_metadata("sampled_tasks", frame)
    assert metadata["dagster/row_count"].value == 2
    columns = {c.name: c for c in metadata["dagster/column_schema"].value.columns}
    assert columns["n_steps"].type == "Int64" and columns["task_id"].description.startswith("Task id")


def test_markdown_cells_cannot_break_the_table():
    text = markdown_table([{"a": "x | y\nz", "b": {"k": 1}}], ["a", "b"])
    assert text.splitlines()[2] == '| x \\| y z | {"k": 1} |'


@pytest.fixture(scope="module")
def tiny_round(request):
    """Tasks of the tiny three-service world from the engine tests (shop, mailer, notes)."""
    from compoworld_assets.engine.library.builder import ServiceBuilder, field
    from compoworld_assets.engine.service_build import BuiltService
    from compoworld_assets.engine.synthesis.offline import OfflineSynthesizer
    from compoworld_assets.engine.tasks.pipeline import generate_tasks

    shop = ServiceBuilder("shop", "Shop", "commerce", "Customers.", "tests")
    shop.entity("Customer", "cus", "A customer.", field("full_name", "person_name"), field("email", "email"))
    shop.crud("Customer", "CRL")
    mailer = ServiceBuilder("mailer", "Mailer", "communication", "Outgoing email.", "tests")
    mailer.entity("Message", "msg", "An email.", field("to", "email"), field("subject"), field("body"))
    mailer.crud("Message", "CRL")
    specs = [shop.build(), mailer.build()]
    built = {}
    for spec in specs:
        module = OfflineSynthesizer().synthesize(spec)
        built[spec.id] = BuiltService(spec=spec, module=module,
                                      implementation={t: "code" for t in module.implemented_tools})
    tasks, _ = generate_tasks(specs, built, seed=2, n=8)
    assert tasks
    return tasks


def test_task_preview_shows_instruction_and_rubric(tiny_round):
    preview = task_preview(tiny_round, limit=2).value
    first = min(tiny_round, key=lambda t: t.task_id)
    assert f"`{first.task_id}`" in preview and first.instruction.splitlines()[0] in preview
    assert "| kind | weight | criterion |" in preview and first.rubric[0].description[:40] in preview
    assert preview.count("#### ") == min(2, len(tiny_round))


def test_conversation_preview_shows_every_message_and_call():
    sample = {"tools": [{"type": "function", "function": {"name": "crm_get_contact"}}], "messages": [
        {"role": "user", "content": "Find contact cont_1."},
        {"role": "assistant", "content": "", "tool_calls": [
            {"function": {"name": "crm_get_contact", "arguments": json.dumps({"contact_id": "cont_1"})}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": '{"id": "cont_1"}'},
        {"role": "assistant", "content": "Found it."}]}
    text = conversation_preview("t1", sample, {"kept": True}).value
    assert "**user:** Find contact cont_1." in text
    assert '**assistant calls** `crm_get_contact({"contact_id": "cont_1"})`' in text
    assert "**tool (call_1):**" in text and "**assistant:** Found it." in text
    assert "- **kept:** true" in text and "`crm_get_contact`" in text


def test_every_asset_has_kinds_and_owners():
    graph = defs().resolve_asset_graph()
    missing = sorted(key.to_user_string() for key in graph.get_all_asset_keys()
                     if graph.get(key).is_materializable and not (graph.get(key).kinds and graph.get(key).owners))
    assert missing == []


def test_scheduled_assets_carry_the_freshness_their_schedule_promises():
    definitions = defs()
    graph = definitions.resolve_asset_graph()
    for schedule in definitions.schedules:
        job = definitions.resolve_job_def(schedule.job_name)
        keys = job.asset_layer.selected_asset_keys
        stale = sorted(k.to_user_string() for k in keys if graph.get(k).freshness_policy is None)
        assert keys and stale == [], schedule.name


def test_lineage_declares_every_read():
    graph = defs().resolve_asset_graph()

    def parents(name: str) -> set[str]:
        return {k.to_user_string() for k in graph.get(dg.AssetKey(name)).parent_keys}

    assert {"dependency_graph", "dependency_graph_nodes", "service_specs", "services"} <= parents("sampled_tasks")
    assert parents("benchmark_scores") == {"base_model", "sft_checkpoint", "rl_checkpoint", "sampled_tasks",
                                           "service_specs", "services"}
