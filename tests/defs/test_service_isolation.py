"""Poisoned specs at the asset level: the services stage completes, bad services are quarantined."""

import json

import dagster as dg
import pytest

from compoworld_assets.engine.synthesis.offline import OfflineSynthesizer

pytestmark = pytest.mark.slow

AWS_TAG_PATTERN = r"^([\p{L}\p{Z}\p{N}_.:/=+\-@]*)$"


def _function(name: str, properties: dict, required: list[str] = ()) -> dict:
    return {"type": "function", "function": {"name": name, "description": f"{name.replace('_', ' ')}.",
                                             "parameters": {"type": "object", "properties": properties,
                                                            "required": list(required)}}}


def _nested(levels: int) -> dict:
    schema: dict = {"type": "string"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"inner": schema}}
    return schema


NOTES = [
    _function("create_note", {"title": {"type": "string"}, "body": {"type": "string"}}, ["title"]),
    _function("get_note", {"note_id": {"type": "string"}}, ["note_id"]),
    _function("list_notes", {"limit": {"type": "integer", "minimum": 1, "maximum": 50}}),
]
SPECS = {
    # Unicode property classes (translated for Python's re), one pattern no engine compiles (left out),
    # and a world-model tool whose returns carry a \p pattern: the probe that once raised SchemaError.
    "zz_regex": {"tools": [
        {"name": "create_tag", "description": "Create a tag.", "inputSchema": {
            "type": "object", "properties": {"key": {"type": "string", "pattern": AWS_TAG_PATTERN},
                                             "value": {"type": "string", "pattern": "[unclosed"}},
            "required": ["key"]}},
        {"name": "describe_tagging", "description": "Describe the tagging policy.",
         "inputSchema": {"type": "object", "properties": {}},
         "outputSchema": {"type": "object", "properties": {"owner": {"type": "string", "pattern": r"^\p{Lu}\P{Lu}*$"}},
                          "required": ["owner"]}},
    ]},
    "zz_deep": [_function("create_blob", {"payload": _nested(300)})],
    "zz_good": NOTES,
    "zz_failing": NOTES,
}


@pytest.fixture
def poisoned(pipeline):
    for name, document in SPECS.items():
        (pipeline.root / "specs" / f"{name}.json").write_text(json.dumps(document))
    pipeline.materialize("service_specs", "quarantined_specs")
    return pipeline


def _materialize_services(pipeline, start: str, end: str) -> dg.ExecuteInProcessResult:
    selection = dg.AssetSelection.assets("services") | dg.AssetSelection.checks_for_assets("quarantined_services")
    return dg.materialize(pipeline.everything, selection=selection, resources=pipeline.resources,
                          instance=pipeline.instance,
                          tags={"dagster/asset_partition_range_start": start,
                                "dagster/asset_partition_range_end": end})


def test_poisoned_specs_are_quarantined_and_the_rest_is_built(poisoned, monkeypatch):
    quarantined_specs = poisoned.query("select location, reason from pipeline.quarantined_specs")
    assert any("zz_deep" in loc and "nests deeper than" in reason for loc, reason in quarantined_specs)
    assert any("zz_regex" in loc and "patterns Python's re cannot use left out" in reason
               for loc, reason in quarantined_specs)
    partitions = poisoned.instance.get_dynamic_partitions("service")
    assert "zz_deep" not in partitions and partitions[-3:] == ["zz_failing", "zz_good", "zz_regex"]

    synthesize = OfflineSynthesizer.synthesize

    def failing_synthesis(self, spec):
        if spec.id == "zz_failing":
            raise RuntimeError("the coding agent crashed")
        return synthesize(self, spec)

    monkeypatch.setattr(OfflineSynthesizer, "synthesize", failing_synthesis)
    result = _materialize_services(poisoned, "zz_failing", "zz_regex")
    assert result.success
    built = dict(poisoned.query("select service_id, n_verified from pipeline.services"))
    assert set(built) == {"zz_good", "zz_regex"} and built["zz_good"] == 3
    assert poisoned.query("select service_id, stage, error_type, message from pipeline.quarantined_services") == [
        ("zz_failing", "synthesis", "RuntimeError", "the coding agent crashed")]
    by_partition = {m.partition: m.metadata for m in result.asset_materializations_for_node("services")}
    assert by_partition["zz_good"]["dagster/row_count"].value == 1 and by_partition["zz_good"]["n_tools"].value == 3
    assert by_partition["zz_good"]["quarantined"].value is False, "each partition's metadata is its own"
    assert by_partition["zz_failing"]["dagster/row_count"].value == 0
    assert by_partition["zz_failing"]["quarantined"].value is True and "n_tools" not in by_partition["zz_failing"]
    evaluations = {e.check_name: e for e in result.get_asset_check_evaluations()}
    per_partition = {e.partition: e.passed for e in result.get_asset_check_evaluations()
                     if e.check_name == "services_expectations"}
    assert per_partition == {"zz_good": True, "zz_regex": True}, "one evaluation per built partition"
    assert evaluations["quarantined_services_expectations"].passed
    assert not evaluations["no_quarantined_services"].passed
    assert evaluations["no_quarantined_services"].severity == dg.AssetCheckSeverity.WARN
    regex_service = json.loads(poisoned.query(
        "select spec_json from pipeline.service_specs where service_id = 'zz_regex'")[0][0])
    key = regex_service["tools"][0]["parameters"]["properties"]["key"]
    assert "\\p" not in key["pattern"] and "value" in regex_service["tools"][0]["parameters"]["properties"]

    poisoned.materialize("tool_catalog")
    services_in_catalog = {row[0] for row in poisoned.query("select distinct service_id from pipeline.tool_catalog")}
    assert {"zz_good", "zz_regex"} <= services_in_catalog and "zz_failing" not in services_in_catalog

    monkeypatch.undo()
    poisoned.materialize("services", partition_key="zz_failing")
    assert poisoned.query("select count(*) from pipeline.quarantined_services")[0][0] == 0
    assert "zz_failing" in dict(poisoned.query("select service_id, n_verified from pipeline.services"))
