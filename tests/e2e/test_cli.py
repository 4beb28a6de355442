"""The ``compoworld`` command line: materialize, export, status."""

import json

import duckdb
import pytest

from compoworld_assets import cli


@pytest.fixture
def cli_env(project_env, monkeypatch):
    for name in ("DAGSTER_HOME", "COMPOWORLD_SPEC_DIR"):
        monkeypatch.setenv(name, project_env[name])
    return project_env


def test_export_writes_sft_rl_and_samples(tmp_path, monkeypatch):
    monkeypatch.setattr(cli, "_EXPORT_BATCH", 1)  # a query per key: the order holds across batches
    data = tmp_path / "data"
    data.mkdir()
    with duckdb.connect(str(data / "compoworld.duckdb")) as con:
        con.execute("create schema pipeline")
        con.execute("create table pipeline.sft_dataset as select * from (values ('t2', '{\"id\": 2}'), "
                    "('t3', '{\"id\": 3}'), ('t1', '{\"id\": 1}')) v(trajectory_id, sample_json)")
        con.execute("create table pipeline.rl_tasks as select 'k1' task_id, 'h1' task_hash")
        con.execute("create table pipeline.sampled_tasks as select * from (values ('k1', 'h1', '{\"task\": 1}'), "
                    "('k2', 'h2', '{\"task\": 2}')) v(task_id, task_hash, task_json)")
        kept = json.dumps({"tools": [], "messages": [], "meta": {
            "task_id": "k1", "rollout_idx": 0, "policy": "oracle", "rubric_score": 1.0, "score": 1.0, "split": "rl"}})
        con.execute("create table pipeline.verified_trajectories as select * from (values "
                    "('t1', $kept, true), ('t3', '{\"id\": 3}', false)) v(trajectory_id, sample_json, passed)",
                    {"kept": kept})
    written = cli.export(str(data), tmp_path / "out")
    assert written == {"sft.jsonl": 3, "rl_tasks.jsonl": 1, "samples.jsonl": 1, "paper.jsonl": 1}
    sft = [json.loads(line) for line in (tmp_path / "out" / "sft.jsonl").read_text().splitlines()]
    assert sft == [{"id": 1}, {"id": 2}, {"id": 3}], "ordered by trajectory id"
    assert json.loads((tmp_path / "out" / "samples.jsonl").read_text()) == json.loads(kept)
    [row] = [json.loads(line) for line in (tmp_path / "out" / "paper.jsonl").read_text().splitlines()]
    assert row["source"] == "compoworld/oracle" and row["meta"] == {
        "task_id": "k1", "rollout_idx": 0, "rubric_score": 1.0, "score": 1.0, "net_score": 1.0}
    assert (tmp_path / "out" / "rl_tasks.jsonl").read_text() == '{"task": 1}\n', "the RL split's tasks, from sampled_tasks"


def test_bad_names_and_missing_data_are_refused_before_dagster_is_imported(tmp_path):
    """Wrong asset names, a partition for an unpartitioned asset, and status/export without a database
    exit with a clear message without loading Dagster (an import of seconds)."""
    import subprocess
    import sys

    probe = ("import sys\nfrom compoworld_assets import cli\n"
             "for argv in sys.argv[1:]:\n"
             "    try:\n        cli.main(argv.split())\n"
             "    except SystemExit as exit:\n        print(exit)\n"
             "print('dagster loaded' if 'dagster' in sys.modules else 'dagster not loaded')\n")
    data = tmp_path / "none"
    done = subprocess.run([sys.executable, "-c", probe, "materialize servics", "materialize tool_catalog --partition crm",
                           f"status --data-dir {data}", f"export {tmp_path / 'out'} --data-dir {data}"],
                          capture_output=True, text=True, check=True, cwd=cli.REPO_ROOT)
    lines = done.stdout.splitlines()
    assert lines[0].startswith("unknown asset(s): servics (did you mean services or ")
    assert "tool_catalog is not partitioned: drop --partition" in lines[1]
    assert lines[2].startswith(f"no database at {data}") and lines[3].startswith(f"no database at {data}")
    assert lines[-1] == "dagster not loaded"


def test_status_hints_name_the_data_dir_it_was_given(tmp_path, monkeypatch, capsys):
    """The commands ``status`` suggests (the UI, a first run) carry ``--data-dir`` unless it is the default."""
    monkeypatch.chdir(tmp_path)
    for folder in ("data", "other dir"):
        (tmp_path / folder).mkdir()
        duckdb.connect(str(tmp_path / folder / "compoworld.duckdb")).close()
    assert cli.main(["status"]) == 0
    [ui] = [line for line in capsys.readouterr().out.splitlines() if line.startswith("UI:")]
    assert "scripts/ui.sh  →" in ui and "--data-dir" not in ui
    assert cli.main(["status", "--data-dir", "other dir"]) == 0
    out = capsys.readouterr().out
    assert "CompoWorld tables now:" in out and "main job finished" not in out  # status runs no job
    [ui] = [line for line in out.splitlines() if line.startswith("UI:")]
    assert "scripts/ui.sh --data-dir 'other dir'  →" in ui
    assert "other dir/compoworld.duckdb" in out
    with pytest.raises(SystemExit, match=r"run `compoworld run --data-dir none` "):
        cli.main(["status", "--data-dir", "none"])
    monkeypatch.chdir(tmp_path / "other dir")
    with pytest.raises(SystemExit, match=r"run `compoworld run` "):
        cli.main(["status"])


def test_every_option_of_every_command_has_help():
    [commands] = [a for a in cli.build_parser()._actions if a.dest == "command"]
    missing = [(name, a.dest) for name, command in commands.choices.items() for a in command._actions
               if a.dest != "help" and not a.help]
    assert missing == []


def test_materialize_rejects_unknown_assets_and_missing_rounds(cli_env, tmp_path):
    with pytest.raises(SystemExit, match="unknown asset"):
        cli.main(["materialize", "no_such_asset", "--data-dir", str(tmp_path / "data")])
    with pytest.raises(SystemExit, match="pass --partition"):
        cli.main(["materialize", "sampled_tasks", "--data-dir", str(tmp_path / "data")])
    with pytest.raises(SystemExit, match="differently"):
        cli.main(["materialize", "services", "sampled_tasks", "--data-dir", str(tmp_path / "data")])


@pytest.mark.slow
def test_materialize_specs_then_one_service(cli_env, tmp_path, capsys):
    data = str(tmp_path / "data")
    assert cli.main(["materialize", "service_specs", "quarantined_specs", "--data-dir", data]) == 0
    with pytest.raises(SystemExit, match="no service partition"):
        cli.main(["materialize", "services", "--partition", "nope", "--data-dir", data])
    assert cli.main(["materialize", "services", "--partition", "bfcl_message_api", "--data-dir", data]) == 0
    assert cli.main(["status", "--data-dir", data]) == 0
    out = capsys.readouterr().out
    assert "materialize services" in out
    with duckdb.connect(str(tmp_path / "data" / "compoworld.duckdb"), read_only=True) as con:
        assert con.execute("select service_id from pipeline.services").fetchall() == [("bfcl_message_api",)]
    import dagster as dg

    from compoworld_assets.launch import ASSET_JOB, COMMAND_TAG, LOCATION

    runs = dg.DagsterInstance.get().get_runs()
    assert len(runs) == 2 and {r.job_name for r in runs} == {ASSET_JOB}, "the UI's asset job, not an ephemeral one"
    assert all(r.remote_job_origin.location_name == LOCATION and r.tags[COMMAND_TAG] == "materialize" for r in runs)
    assert runs[0].tags["dagster/partition"] == "bfcl_message_api"
    registered = dg.DagsterInstance.get().get_dynamic_partitions("service")
    first, last = registered[0], registered[1]
    with pytest.raises(SystemExit, match="empty range"):
        cli.main(["materialize", "services", "--partition", f"{last}..{first}", "--data-dir", data])
    assert cli.main(["materialize", "services", "--partition", f"{first}..{last}", "--data-dir", data]) == 0
    with duckdb.connect(str(tmp_path / "data" / "compoworld.duckdb"), read_only=True) as con:
        built = {row[0] for row in con.execute("select service_id from pipeline.services").fetchall()}
    assert built == {"bfcl_message_api", first, last}, "a range adds its services beside the one built before"


def test_benchmark_partitions_are_parsed_per_dimension_and_register_new_models():
    import dagster as dg

    from compoworld_assets.defs.evaluation.partitions import benchmark_model

    with dg.instance_for_test() as instance:
        key = cli._partition_key(benchmark_model, "bfcl|sft", instance)
        assert key == dg.MultiPartitionKey({"benchmark": "bfcl", "model": "sft"})
        assert instance.get_dynamic_partitions("eval_model") == ["sft"]
        with pytest.raises(SystemExit, match="one value per dimension: benchmark|model"):
            cli._partition_key(benchmark_model, "bfcl", instance)
        with pytest.raises(SystemExit, match="unknown partition 'mmlu'"):
            cli._partition_key(benchmark_model, "mmlu|sft", instance)


def test_run_config_comes_from_json_or_a_yaml_file(tmp_path):
    assert cli._run_config(None) == {}
    assert cli._run_config('{"ops": {"sft_checkpoint": {"config": {"max_steps": 4}}}}') == {
        "ops": {"sft_checkpoint": {"config": {"max_steps": 4}}}}
    path = tmp_path / "run.yaml"
    path.write_text("ops:\n  benchmark_scores:\n    config:\n      seeds: [1, 2]\n")
    assert cli._run_config(str(path)) == {"ops": {"benchmark_scores": {"config": {"seeds": [1, 2]}}}}
    with pytest.raises(SystemExit, match="neither a file nor JSON"):
        cli._run_config("{not json")
