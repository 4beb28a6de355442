"""The command line's asset index agrees with the definitions (it is checked before they are loaded)."""

import dagster as dg

from compoworld_assets.asset_index import ASSET_PARTITIONS, selection_error
from compoworld_assets.definitions import defs


def _partitions_name(partitions_def) -> str | None:
    if partitions_def is None:
        return None
    if isinstance(partitions_def, dg.MultiPartitionsDefinition):
        return "|".join(d.name for d in partitions_def.partitions_defs)
    return partitions_def.name


def test_the_index_lists_every_materializable_asset_with_its_partitions():
    graph = defs().resolve_asset_graph()
    expected = {key.to_user_string(): _partitions_name(graph.get(key).partitions_def)
                for key in graph.get_all_asset_keys() if graph.get(key).is_materializable}
    assert ASSET_PARTITIONS == expected


def test_selection_errors_name_the_problem_and_suggest_a_fix():
    assert "did you mean services" in selection_error(["servics"], None)
    assert "not partitioned: drop --partition" in selection_error(["tool_catalog"], "crm")
    assert "partitioned by task_round: pass --partition" in selection_error(["sampled_tasks"], None)
    assert "partitioned differently" in selection_error(["services", "sampled_tasks"], None)
    assert "partitioned differently" in selection_error(["services", "tool_catalog"], "crm")
    assert selection_error(["services"], None) is None, "services without a partition: every service"
    assert selection_error(["sampled_tasks", "rubrics"], "r000") is None
    assert selection_error(["services"], "a..m") is None, "a range of service partitions is one run"
    assert "selects service partitions" in selection_error(["sampled_tasks"], "r000..r002")
