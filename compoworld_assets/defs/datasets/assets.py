"""Stage 7: training data — SFT samples from kept trajectories, RL tasks — in every round."""

import json

import dagster as dg
import polars as pl

from compoworld_assets.defs.metadata import DATA_OWNERS, conversation_preview, table_metadata
from compoworld_assets.engine import task_tables
from compoworld_assets.engine.canonical import content_hash
from compoworld_assets.engine.exports import write_samples
from compoworld_assets.engine.tasks.model import Task
from resources import StorageResource

DATASET_VERSION = "1"
RL_TASKS_VERSION = "2"  # 2: the rows name their tasks by content hash instead of copying their JSON
DATASET_KINDS = {"python", "duckdb", "json"}

SFT_SCHEMA = {"trajectory_id": pl.String, "task_id": pl.String, "round": pl.String, "domain": pl.String,
              "sample_json": pl.String}
RL_SCHEMA = {"task_id": pl.String, "round": pl.String, "domain": pl.String, "n_criteria": pl.Int64,
             "task_hash": pl.String}


@dg.asset(group_name="datasets", code_version=DATASET_VERSION, pool="duckdb",
          metadata={"primary_key": "trajectory_id"}, automation_condition=dg.AutomationCondition.eager(),
          kinds=DATASET_KINDS, owners=DATA_OWNERS)
def sft_dataset(verified_trajectories: pl.LazyFrame, storage: StorageResource) -> dg.Output[pl.DataFrame]:
    """Kept trajectories of train-split tasks in the CompoWorld sample format (also data/exports/sft.jsonl).

    Only the kept rows are read, and the samples are parsed one at a time (a paper-scale round's are GBs as
    objects)."""
    kept = (verified_trajectories.filter(pl.col("passed") & (pl.col("split") == "train"))
            .select("trajectory_id", "task_id", "round", "sample_json").sort("trajectory_id").collect())
    frame = kept.select("trajectory_id", "task_id", "round",
                        pl.col("sample_json").str.json_path_match("$.meta.domain").alias("domain"),
                        "sample_json").cast(SFT_SCHEMA)
    path = storage.path("exports", "sft.jsonl")
    written = write_samples((json.loads(sample) for sample in frame["sample_json"]), path)
    preview = (conversation_preview(f"{frame['trajectory_id'][0]} ({frame['domain'][0]})",
                                    json.loads(frame["sample_json"][0]))
               if len(frame) else dg.MetadataValue.md("_no samples_"))
    return dg.Output(frame, data_version=dg.DataVersion(content_hash(frame["sample_json"].to_list())[:16]),
                     metadata={**table_metadata("sft_dataset", frame), "preview": preview, "n_samples": written,
                               "path": dg.MetadataValue.path(str(path))})


@dg.asset(group_name="datasets", code_version=RL_TASKS_VERSION, pool="duckdb", metadata={"primary_key": "task_id"},
          automation_condition=dg.AutomationCondition.eager(), kinds=DATASET_KINDS, owners=DATA_OWNERS)
def rl_tasks(sampled_tasks: pl.LazyFrame, storage: StorageResource) -> dg.Output[pl.DataFrame]:
    """The RL split: one row per task, with how many rubric criteria reward it (and data/exports/rl_tasks.jsonl,
    one Task JSON per line).

    A task is stored once, in ``sampled_tasks``: a row here names it by ``task_id`` and content hash
    (``task_hash``), and training reads it from there (``task_tables.referenced_tasks``). With their seeded
    worlds a paper-scale round's RL tasks are ~900 MB of JSON, and copying two rounds' into DuckDB took 7.9 GB
    of memory. The export is written a task at a time from rows spilled to disk."""
    rows = task_tables.StoredRows(sampled_tasks.filter(pl.col("split") == "rl"), "task_id", "task_json", Task,
                                  extra=("round", "domain", "n_criteria", "task_hash"))
    frame = pl.DataFrame([(task_id, *extra) for task_id, extra in zip(rows.ids, rows.extras, strict=True)],
                         schema=RL_SCHEMA, orient="row")
    path = storage.path("exports", "rl_tasks.jsonl")
    with path.open("wb") as export:
        for index in range(len(rows)):
            export.write(rows.text(index) + b"\n")
    return dg.Output(frame, data_version=dg.DataVersion(content_hash(frame["task_hash"].to_list())[:16]),
                     metadata={**table_metadata("rl_tasks", frame), "n_tasks": len(frame),
                               "path": dg.MetadataValue.path(str(path))})
