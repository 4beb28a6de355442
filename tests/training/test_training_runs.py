"""SFT, resume, evaluation and GRPO on engine-made data, with a tiny model on SmolLM2's tokenizer."""

import json
import math

import pytest

from training.data import read_rl_file, read_services, services_path
from training.evaluate import EvaluateConfig, run_evaluate, score_answer
from training.grpo import CompoGRPOConfig, GRPOScriptConfig, run_grpo, step_summary
from training.sft import CompoSFTConfig, SFTScriptConfig, run_sft, sft_trainer

pytestmark = pytest.mark.slow


def sft(demo_files, model_dir, output_dir, steps):
    script = SFTScriptConfig(train_file=str(demo_files.sft), model=str(model_dir), max_samples=4)
    config = CompoSFTConfig(output_dir=str(output_dir), max_steps=steps, save_steps=2, max_length=1536,
                            per_device_train_batch_size=2)
    return run_sft(script, config)


def test_sft_writes_checkpoint_and_metrics_then_resumes(demo_files, tiny_model_dir, tmp_path):
    metrics = sft(demo_files, tiny_model_dir, tmp_path / "sft", steps=2)
    assert (tmp_path / "sft" / "checkpoint-2").is_dir() and (tmp_path / "sft" / "model.safetensors").is_file()
    written = json.loads((tmp_path / "sft" / "metrics.json").read_text())
    assert written["steps"] == 2 and [p["step"] for p in written["loss"]] == [1, 2]
    assert all(math.isfinite(p["loss"]) and p["loss"] > 0 for p in written["loss"])
    assert written["tokens_seen"] > 0 and metrics["resumed_from"] is None
    resumed = sft(demo_files, tiny_model_dir, tmp_path / "sft", steps=3)
    assert resumed["resumed_from"].endswith("checkpoint-2") and resumed["steps"] == 3
    assert [p["step"] for p in resumed["loss"]] == [1, 2, 3]  # the checkpoint carries the earlier curve


def test_the_length_curriculum_feeds_the_shortest_samples_first(demo_files, tiny_model_dir, tmp_path):
    script = SFTScriptConfig(train_file=str(demo_files.sft), model=str(tiny_model_dir), max_samples=6,
                             curriculum="length")
    config = CompoSFTConfig(output_dir=str(tmp_path / "sft"), max_steps=1, max_length=4096,
                            per_device_train_batch_size=1)
    trainer, _, lengths = sft_trainer(script, config)
    fed = [int(batch["attention_mask"].sum()) for batch in trainer.get_train_dataloader()]
    assert len(fed) == 6 and fed == sorted(fed) and lengths == sorted(lengths)
    assert len(set(fed)) > 1, "the demo samples should differ in length"


def test_evaluate_returns_shares(demo_files, tiny_model_dir, tmp_path):
    result = run_evaluate(EvaluateConfig(eval_file=str(demo_files.heldout), model=str(tiny_model_dir), max_tasks=2,
                                         max_new_tokens=8, output_file=str(tmp_path / "eval.json")))
    assert result["tasks"] == 2
    assert all(0.0 <= result[k] <= 1.0 for k in ("format_valid", "right_tool", "exact_call"))
    assert json.loads((tmp_path / "eval.json").read_text())["tasks"] == 2


def test_score_answer_grades_format_tool_and_arguments():
    oracle = ("crm_get_contact", {"contact_id": "cont_1"})
    good = '<tool_call>{"name": "crm_get_contact", "arguments": {"contact_id": "cont_1"}}</tool_call><|im_end|>'
    assert score_answer(good, oracle) == {"format_valid": True, "right_tool": True, "exact_call": True}
    assert score_answer(good.replace("cont_1", "cont_2"), oracle)["exact_call"] is False
    assert score_answer("hello", oracle) == {"format_valid": False, "right_tool": False, "exact_call": False}


def test_rl_file_is_self_contained(demo_files):
    tasks = read_rl_file(demo_files.rl)
    bundle = read_services(services_path(demo_files.rl))
    assert tasks and all(set(t.task.services) <= set(bundle.built) for t in tasks)
    assert tasks[0].prompt[0]["role"] == "system" and tasks[0].tools[-1]["function"]["name"] == "submit_answer"


def test_grpo_runs_with_the_rubric_reward(demo_files, tiny_model_dir, tmp_path):
    script = GRPOScriptConfig(rl_file=str(demo_files.rl), model=str(tiny_model_dir), max_turns=2)
    config = CompoGRPOConfig(output_dir=str(tmp_path / "grpo"), max_steps=1, max_completion_length=16)
    metrics = run_grpo(script, config)
    assert metrics["steps"] == 1 and len(metrics["reward"]) == 1 and math.isfinite(metrics["reward"][0]["reward"])
    budget = metrics["budget"]  # 16 tokens cannot hold one tool call: raised to the derived budget
    assert budget["max_completion_tokens"] > 16 and budget["max_steps"] >= 3
    assert any(note.startswith("max_completion_tokens=16 is below") for note in budget["extended"])
    [step] = metrics["per_step"]
    assert step["rollouts"] == 4 and step["pass_rate_by_kind"]
    assert all(0.0 <= rate <= 1.0 for rate in step["pass_rate_by_criterion"].values())
    assert json.loads((tmp_path / "grpo" / "metrics.json").read_text())["per_step"] == metrics["per_step"]


def test_grpo_resumes_from_its_last_checkpoint_with_its_step_records(demo_files, tiny_model_dir, tmp_path):
    """An interrupted run (here: one that stopped after step 1) goes on from its checkpoint: the optimizer
    step count carries over and the per-step pass rates of the first run are kept."""
    script = GRPOScriptConfig(rl_file=str(demo_files.rl), model=str(tiny_model_dir))
    output = tmp_path / "grpo"
    first = run_grpo(script, CompoGRPOConfig(output_dir=str(output), max_steps=1, save_steps=1))
    assert first["resumed_from"] is None and (output / "checkpoint-1" / "optimizer.pt").is_file()
    second = run_grpo(script, CompoGRPOConfig(output_dir=str(output), max_steps=2, save_steps=1))
    assert second["resumed_from"].endswith("checkpoint-1") and second["steps"] == 2
    assert [s["step"] for s in second["per_step"]] == [1, 2]
    assert second["per_step"][0] == first["per_step"][0]


def test_a_grpo_turn_with_several_calls_runs_them_all(demo_files, tiny_model_dir):
    """Every call of a generated turn reaches the environment, in order, and each result is shown."""
    from training.chat_template import END_OF_TURN
    from training.common import load_tokenizer
    from training.grpo import ToolRollouts

    rl_task = read_rl_file(demo_files.rl)[0]
    tokenizer = load_tokenizer(tiny_model_dir)
    call = '<tool_call>{"name": "no_such_tool", "arguments": {}}</tool_call>'
    turn = tokenizer(call + call + END_OF_TURN, add_special_tokens=False)["input_ids"]

    class Scripted:  # a model whose every turn is the two calls above
        def generate(self, context, **kwargs):
            import torch

            class Output:
                sequences = torch.tensor([context[0].tolist() + turn])
                cache = None
            return Output()

    with read_services(services_path(demo_files.rl)).world_factory() as factory:
        episode = ToolRollouts([rl_task], factory, tokenizer, max_turns=2,
                               max_tool_result_tokens=None).episode(Scripted(), rl_task, 10_000, 1.0)
    assert episode["record"]["calls"] == ["no_such_tool"] * 4
    shown = tokenizer.decode([t for t, m in zip(episode["completion_ids"], episode["env_mask"], strict=True) if not m])
    assert shown.count("<|im_start|>tool") == 2  # the first turn's two results; the second turn ends the episode


def test_grpo_leaves_advantages_unscaled_and_scores_one_rollout_at_a_time():
    """tests/engine/test_rewards.py shows why rewards are not scaled; one rollout per forward pass keeps one
    sequence's logits in memory, the group accumulated into one optimizer step."""
    config = CompoGRPOConfig(output_dir="unused")
    assert config.scale_rewards == "none"
    assert config.per_device_train_batch_size == 1 and config.gradient_accumulation_steps == config.num_generations
    assert CompoGRPOConfig(output_dir="unused", num_generations=8).gradient_accumulation_steps == 8


def test_step_summary_counts_pass_rates():
    records = [{"task_id": "t", "calls": ["x"], "submitted": True,
                "criteria": [{"id": "c0", "kind": "state", "passed": True}]},
               {"task_id": "t", "calls": [], "submitted": False,
                "criteria": [{"id": "c0", "kind": "state", "passed": False}]}]
    summary = step_summary(records)
    assert summary["pass_rate_by_kind"] == {"state": 0.5} and summary["pass_rate_by_criterion"] == {"t/c0": 0.5}
    assert (summary["tool_call_rate"], summary["submit_rate"]) == (0.5, 0.5)
