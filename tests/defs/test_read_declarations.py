"""Nothing reads a pipeline table behind Dagster's back.

The ``pipeline`` fixture audits every materialization of the other tests in this folder (see
``ReadAudit`` in conftest.py). Here: the audit catches an undeclared read however it is made, and
``benchmark_scores`` — which reads its checkpoint and the held-out tasks inside the step — reads only
the upstreams it declares.
"""

import dagster as dg
import duckdb
import polars as pl
import pytest

from compoworld_assets.defs.evaluation import assets as evaluation_assets
from compoworld_assets.defs.evaluation.partitions import eval_models
from compoworld_assets.defs.tasks.partitions import task_rounds
from resources import LLMResource, SandboxResource, StorageResource, duckdb_io_manager


def _table(name: str, frame: pl.DataFrame, **kwargs) -> dg.AssetsDefinition:
    @dg.asset(name=name, **kwargs)
    def _stand_in() -> pl.DataFrame:
        return frame

    return _stand_in


def test_the_audit_catches_undeclared_reads(read_audit, tmp_path):
    storage = StorageResource(data_dir=str(tmp_path))
    database = storage.database
    upstream = _table("upstream", pl.DataFrame({"x": [1, 2]}))
    hidden = _table("hidden", pl.DataFrame({"y": [3]}))

    @dg.asset(deps=[upstream])
    def declared_reader(context: dg.AssetExecutionContext) -> pl.DataFrame:
        return context.load_asset_value(dg.AssetKey("upstream"), python_type=pl.DataFrame)

    @dg.asset(deps=[upstream])
    def raw_reader() -> pl.DataFrame:
        with duckdb.connect(database, read_only=True) as connection:
            return connection.execute('select * from "pipeline"."hidden"').pl()

    @dg.asset(deps=[upstream])
    def loader_of_undeclared(context: dg.AssetExecutionContext) -> pl.DataFrame:
        return context.load_asset_value(dg.AssetKey("hidden"), python_type=pl.DataFrame)

    with dg.instance_for_test() as instance:
        result = dg.materialize([upstream, hidden, declared_reader, raw_reader, loader_of_undeclared],
                                resources={"io_manager": duckdb_io_manager(storage)}, instance=instance)
    assert result.success
    assert read_audit.reads()["declared_reader"] == {"upstream"}
    assert read_audit.undeclared() == [("loader_of_undeclared", "hidden"), ("raw_reader", "hidden")]


@pytest.fixture(scope="module")
def heldout_tables():
    """Four built-in services built by the engine and a round of tasks over them, some held out."""
    from compoworld_assets.engine import tables, task_tables
    from compoworld_assets.engine.library import builtin_spec
    from compoworld_assets.engine.runtime.sandbox import trusted_executor
    from compoworld_assets.engine.service_build import build_service
    from compoworld_assets.engine.synthesis.offline import OfflineSynthesizer
    from compoworld_assets.engine.tasks.pipeline import GenerationConfig, generate_tasks
    from compoworld_assets.engine.tasks.sampling import WalkConfig
    from compoworld_assets.engine.world_model.offline import OfflineWorldModel

    builds = [build_service(builtin_spec(sid), OfflineSynthesizer(), trusted_executor, OfflineWorldModel(), seed=1)
              for sid in ("crm", "mail", "invoicing", "helpdesk")]
    tasks, _ = generate_tasks([b.spec for b in builds], {b.spec.id: b.built() for b in builds}, seed=5, n=40,
                              config=GenerationConfig(walk=WalkConfig(max_length=3), heldout_fraction=0.4))
    frame = task_tables.task_rows(tasks, "r0")
    assert "heldout" in frame["split"].to_list()
    return {"service_specs": tables.spec_rows([b.spec for b in builds]), "services": tables.service_rows(builds),
            "sampled_tasks": frame}


@pytest.mark.slow
def test_benchmark_scores_reads_only_its_declared_upstreams(read_audit, heldout_tables, tiny_model_dir, tmp_path):
    stand_ins = [_table("service_specs", heldout_tables["service_specs"]),
                 _table("services", heldout_tables["services"]),
                 _table("sampled_tasks", heldout_tables["sampled_tasks"], partitions_def=task_rounds,
                        metadata={"partition_expr": "round"}),
                 _table("sft_checkpoint", pl.DataFrame({"checkpoint_path": [str(tiny_model_dir)]}))]
    storage = StorageResource(data_dir=str(tmp_path))
    resources = {"io_manager": duckdb_io_manager(storage), "llm": LLMResource(), "sandbox": SandboxResource(),
                 "storage": storage}
    config = {"ops": {"benchmark_scores": {"config": {"seeds": [1], "max_tokens": 16, "heldout_tasks": 2,
                                                        "heldout_max_steps": 2}}}}
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions(task_rounds.name, ["r0"])
        instance.add_dynamic_partitions(eval_models.name, ["sft"])
        everything = [*stand_ins, evaluation_assets.benchmark_scores]
        for asset in stand_ins:
            dg.materialize(everything, selection=[asset.key], instance=instance, resources=resources,
                           partition_key="r0" if asset.partitions_def else None)
        result = dg.materialize(everything, selection=["benchmark_scores"], instance=instance, resources=resources,
                                partition_key=dg.MultiPartitionKey({"benchmark": "compoworld_heldout", "model": "sft"}),
                                run_config=config)
    assert result.success
    assert read_audit.reads()["benchmark_scores.benchmark_inputs"] == {
        "sft_checkpoint", "sampled_tasks", "service_specs", "services"}
    assert read_audit.undeclared() == []
