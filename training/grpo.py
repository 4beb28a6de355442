"""GRPO with TRL's ``GRPOTrainer``: multi-turn tool use against the services, rewarded by the CFRR.

    python -m training.grpo --rl_file rl.jsonl --output_dir runs/grpo --model runs/sft --max_steps 8

Rollouts go through TRL's ``rollout_func`` hook (``environment_factory`` exposes Python methods
as tools, one fixed set per environment class, while every CompoWorld task has its own tools).
For each prompt of a batch (TRL repeats each prompt ``num_generations`` times, contiguously)
:class:`ToolRollouts` runs an episode of the engine's one environment
(:class:`~compoworld_assets.engine.rollout.environment.ToolEnvironment`, the same one rollouts and
evaluation use) over the RL file's services: it samples an assistant turn, steps the environment
with every tool call of the turn, appends their results as tool turns, and goes on until
``submit_answer``, a turn without a call, ``max_turns`` or the budget of ``max_completion_length``
generated tokens; one turn generates at most the budget's ``max_tokens`` (the oracle's longest turn plus
slack, as in evaluation), so a model that rambles cannot spend a whole episode's budget in its first turn.
The whole episode is one context: each turn's generation continues from the key/value cache of the one
before, so only the new tool results are read, not the whole conversation again. Tool-result tokens are
masked out of the loss (``env_mask``).

Memory: a group is generated at once but scored one rollout at a time (per-device batch 1, the group's
rollouts accumulated: ``gradient_accumulation_steps = num_generations``), so the full-vocabulary logits
of only one sequence are held (the whole padded group in one batch peaked at 23.4 GB on a 24 GB machine),
and each layer's activations are recomputed in the backward pass (gradient checkpointing).
Checkpoints (``save_steps``) keep the optimizer and scheduler state; a run into an ``output_dir`` that
holds one resumes from the newest, and the per-step pass rates (``rollout_steps.jsonl``, a line per
generation, the last one per step kept) survive the interruption.

Unset, ``max_turns`` and ``max_completion_length`` come from the RL tasks (:func:`rollout_budget`: the oracle's turns and generated tokens in the same
environment, counted with the model's tokenizer, plus slack); a limit set below what the oracle
needs is raised to the derived one (or stops the run, ``--on_short_budget raise``), so a budget never
cuts every rollout of a task before it can finish. The task's rubric is evaluated on the final world state and the submitted
answer; the reward is :func:`compoworld_assets.engine.rewards.cfrr_reward` over each group's
per-criterion results, kinds and weights (negative criteria gate: a rollout that violated one, or
passed no positive criterion, gets 0), or with ``--reward rubric`` the plain rubric fraction (the
paper's ablation: same gates, the rubric's own weights). ``metrics.json`` holds the reward curve and per-step pass
rates by criterion kind and by task criterion.
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trl import GRPOConfig, TrlParser

from compoworld_assets.engine.canonical import canonical_json
from compoworld_assets.engine.rewards import (
    CRITERION_KINDS_COLUMN,
    CRITERION_RESULTS_COLUMN,
    CRITERION_WEIGHTS_COLUMN,
    reward_function,
)
from compoworld_assets.engine.rollout.budgets import EpisodeBudget, TokenCounter, fit_budget, oracle_needs
from compoworld_assets.engine.rollout.environment import ToolEnvironment
from compoworld_assets.engine.rollout.policy import tool_calls_message
from training.chat_template import parse_tool_calls, token_counter, tool_turn_text
from training.common import (
    configure_cpu_threads,
    last_checkpoint,
    load_model,
    load_tokenizer,
    resolve_model,
    resolve_precision,
    write_json,
)
from training.data import RLTask, read_rl_file, read_services, services_path


@dataclass
class GRPOScriptConfig:
    rl_file: str = field(default="", metadata={"help": "RL task file (training.data); its services file beside it."})
    model: str | None = field(default=None, metadata={"help": "Checkpoint folder or model id; default: base model."})
    base_model_cache: str | None = None
    max_turns: int | None = field(default=None, metadata={
        "help": "Assistant turns per rollout; None (default): the oracle's turns on the RL tasks plus slack."})
    max_tool_result_tokens: int | None = field(default=None, metadata={
        "help": "Cut tool results to this many tokens; None (default) shows them whole, as SFT and evaluation do."})
    on_short_budget: str = field(default="extend", metadata={
        "help": "A limit below the oracle's need on some RL task: 'extend' raises it to the derived budget "
                "(recorded in metrics.json), 'raise' stops the run."})
    reward: str = field(default="cfrr", metadata={
        "help": "cfrr (Completion-Focused Rubric Reward) or rubric (the plain rubric fraction, the paper's "
                "ablation); both gate on negative criteria and add the full-completion bonus."})
    cfrr_epsilon: float = 0.05
    full_completion_bonus: float = 0.1


@dataclass
class CompoGRPOConfig(GRPOConfig):
    """TRL's GRPOConfig with defaults for small CPU runs."""

    output_dir: str = "runs/grpo"
    max_steps: int = 8
    num_generations: int | None = 4
    # one rollout per forward/backward, the group's rollouts accumulated (see the module docstring); None: the
    # group size, so a group is always one optimizer step whatever --num_generations says
    per_device_train_batch_size: int = 1
    gradient_accumulation_steps: int | None = None
    max_completion_length: int | None = None  # None: the oracle's generated tokens plus slack (rollout_budget)
    learning_rate: float = 5e-6
    # Unscaled advantages (reward minus the group's mean): divided by the group's spread, a group whose rollouts
    # take two reward levels gets the same advantages from CFRR as from the plain fraction, so CFRR's focus on
    # rarely passed criteria would reach the update only in groups with three or more levels (docs/training.md).
    scale_rewards: str = "none"
    temperature: float = 1.0
    bf16: bool | None = None  # None: native bf16 where the CPU has it, else fp32 (training.common.resolve_precision)
    # recompute each layer's activations in the backward pass: a ~3K-token rollout's attention and activations
    # held for all 30 layers at once were most of an 11.5 GB step; TRL's default too (+29% time measured for SFT)
    gradient_checkpointing: bool | None = True
    logging_steps: float = 1
    save_strategy: str = "steps"
    save_steps: float = 5
    save_total_limit: int | None = 2
    warmup_steps: float = 0
    lr_scheduler_type: str = "constant"
    seed: int = 0

    def __post_init__(self) -> None:
        resolve_precision(self)
        if self.gradient_accumulation_steps is None:
            self.gradient_accumulation_steps = self.num_generations or 1
        super().__post_init__()


STEPS_FILE = "rollout_steps.jsonl"


class ToolRollouts:
    """TRL's ``rollout_func(prompts, trainer)``: multi-turn episodes on mounted worlds, rubric-scored."""

    def __init__(self, tasks: list[RLTask], world_factory: Any, tokenizer: Any, max_turns: int,
                 max_tool_result_tokens: int | None, steps_file: Path | None = None,
                 max_turn_tokens: int | None = None) -> None:
        self.by_prompt = {}
        for rl_task in tasks:
            self.by_prompt.setdefault(canonical_json(rl_task.prompt), rl_task)
        self.world_factory = world_factory
        self.tokenizer = tokenizer
        self.max_turns = max_turns
        self.max_tool_result_tokens = max_tool_result_tokens
        self.steps_file = steps_file
        self.max_turn_tokens = max_turn_tokens

    def __call__(self, prompts: list[list[dict[str, Any]]], trainer: Any) -> dict[str, Any]:
        model = trainer.accelerator.unwrap_model(trainer.model)
        budget = trainer.max_completion_length
        episodes = [self.episode(model, self.by_prompt[canonical_json(p)], budget, trainer.temperature)
                    for p in prompts]
        if self.steps_file is not None:  # the optimizer step these rollouts feed is the next one
            summary = {"step": trainer.state.global_step + 1, **step_summary([e["record"] for e in episodes])}
            with self.steps_file.open("a", encoding="utf-8") as out:
                out.write(json.dumps(summary, sort_keys=True) + "\n")
        return {"prompt_ids": [e["prompt_ids"] for e in episodes],
                "completion_ids": [e["completion_ids"] for e in episodes],
                "logprobs": None,
                "env_mask": [e["env_mask"] for e in episodes],
                CRITERION_RESULTS_COLUMN: [e["criteria"] for e in episodes],
                CRITERION_WEIGHTS_COLUMN: [e["weights"] for e in episodes],
                CRITERION_KINDS_COLUMN: [e["kinds"] for e in episodes]}

    def episode(self, model: Any, rl_task: RLTask, budget: int, temperature: float) -> dict[str, Any]:
        """One episode in the engine's :class:`ToolEnvironment`: the prompt, the tool results shown and the
        rubric score are the ones rollouts, verification and evaluation use."""
        import torch

        tokenizer = self.tokenizer
        completion_ids: list[int] = []
        env_mask: list[int] = []
        calls: list[str] = []
        generated = 0
        cache = None  # the key/value cache of the episode so far: each turn reads only what is new
        with ToolEnvironment(self.world_factory, rl_task.mode, max_steps=self.max_turns) as env:
            observation = env.reset(rl_task.task)
            prompt_ids = tokenizer.apply_chat_template(observation.messages, tools=observation.tools,
                                                       add_generation_prompt=True, return_dict=True)["input_ids"]
            for turn_number in range(self.max_turns):
                if generated >= budget:
                    break
                context = torch.tensor([prompt_ids + completion_ids])
                with torch.no_grad():
                    output = model.generate(context, attention_mask=torch.ones_like(context), do_sample=True,
                                            temperature=temperature,
                                            max_new_tokens=min(budget - generated, self.max_turn_tokens or budget),
                                            eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id,
                                            cache=cache, use_cache=True, return_dict_in_generate=True)
                cache = output.cache
                turn = output.sequences[0, context.shape[1]:].tolist()
                completion_ids += turn
                env_mask += [1] * len(turn)
                generated += len(turn)
                parsed = parse_tool_calls(tokenizer.decode(turn))
                if not parsed or not turn or turn[-1] != tokenizer.eos_token_id:
                    break
                calls += [name for name, _ in parsed]
                step = env.step(tool_calls_message([(f"call_{turn_number}_{i}", name, arguments)
                                                    for i, (name, arguments) in enumerate(parsed)]))
                if step.done:
                    break
                results = [tokenizer.decode(tokenizer(m["content"], add_special_tokens=False)["input_ids"]
                                            [: self.max_tool_result_tokens]) for m in step.messages]
                shown = tokenizer(tool_turn_text(*results), add_special_tokens=False)["input_ids"]
                completion_ids += shown
                env_mask += [0] * len(shown)
            criteria = env.score()
            submitted = env.answer is not None
        weights = {c.id: c.weight for c in rl_task.task.rubric}
        kinds = {c.id: c.kind for c in rl_task.task.rubric}
        record = {"task_id": rl_task.task.task_id, "calls": calls, "submitted": submitted,
                  "criteria": [{"id": c.id, "kind": kinds.get(c.id, "?"), "passed": c.passed} for c in criteria]}
        return {"prompt_ids": prompt_ids, "completion_ids": completion_ids, "env_mask": env_mask,
                "criteria": [{"id": c.id, "passed": c.passed} for c in criteria], "weights": weights,
                "kinds": kinds, "record": record}


def read_steps(path: Path) -> list[dict[str, Any]]:
    """The per-step summaries ``ToolRollouts`` appended, in step order: where a resumed run made a step's
    rollouts again, its last line counts."""
    if not path.is_file():
        return []
    by_step = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            summary = json.loads(line)
            by_step[summary["step"]] = summary
    return [by_step[step] for step in sorted(by_step)]


def step_summary(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Pass rates of one step's rollouts: by criterion kind, by task criterion, and tool-call/submit rates."""
    by_kind: dict[str, list[bool]] = defaultdict(list)
    by_id: dict[str, list[bool]] = defaultdict(list)
    for record in records:
        for criterion in record["criteria"]:
            by_kind[criterion["kind"]].append(criterion["passed"])
            by_id[f"{record['task_id']}/{criterion['id']}"].append(criterion["passed"])
    n = len(records)
    return {"rollouts": n, "pass_rate_by_kind": {k: _rate(v) for k, v in sorted(by_kind.items())},
            "pass_rate_by_criterion": {k: _rate(v) for k, v in sorted(by_id.items())},
            "tool_call_rate": sum(bool(r["calls"]) for r in records) / n if n else 0.0,
            "submit_rate": sum(r["submitted"] for r in records) / n if n else 0.0}


def _rate(values: list[bool]) -> float:
    return sum(values) / len(values)


def rollout_budget(tasks: list[RLTask], world_factory: Any, count_tokens: TokenCounter, on_short: str = "extend",
                   **limits: int | None) -> tuple[EpisodeBudget, list[str]]:
    """The budget of the RL tasks: the oracle's needs in each task's mode plus slack, explicit ``limits``
    (``max_steps``, ``max_completion_tokens``, ``max_tool_result_tokens``) in its place
    (:func:`~compoworld_assets.engine.rollout.budgets.fit_budget`), and what was extended."""
    needs = [need for mode in sorted({t.mode for t in tasks})
             for need in oracle_needs([t.task for t in tasks if t.mode == mode], world_factory, mode, count_tokens)]
    return fit_budget(needs, on_short=on_short, **limits)


def run_grpo(script: GRPOScriptConfig, config: CompoGRPOConfig) -> dict[str, Any]:

    from datasets import Dataset
    from trl import GRPOTrainer

    configure_cpu_threads()
    tasks = read_rl_file(script.rl_file)
    if not tasks:
        raise ValueError(f"{script.rl_file} holds no tasks")
    model_dir = resolve_model(script.model, script.base_model_cache)
    tokenizer = load_tokenizer(model_dir)
    tokenizer.padding_side = "left"
    dataset = Dataset.from_list([{"prompt": t.prompt, "task_id": t.task.task_id} for t in tasks])
    reward = reward_function(script.reward, epsilon=script.cfrr_epsilon,
                             full_completion_bonus=script.full_completion_bonus)
    with read_services(services_path(script.rl_file)).world_factory() as factory:
        budget, extended = rollout_budget(tasks, factory, token_counter(tokenizer), script.on_short_budget,
                                          max_steps=script.max_turns,
                                          max_completion_tokens=config.max_completion_length,
                                          max_tool_result_tokens=script.max_tool_result_tokens)
        for note in extended:
            print(f"GRPO budget: {note}", flush=True)
        config.max_completion_length = budget.max_completion_tokens
        output_dir = Path(config.output_dir)
        output_dir.mkdir(parents=True, exist_ok=True)
        steps_file = output_dir / STEPS_FILE
        rollouts = ToolRollouts(tasks, factory, tokenizer, budget.max_steps, budget.max_tool_result_tokens,
                                steps_file, budget.max_tokens)
        trainer = GRPOTrainer(model=load_model(model_dir), reward_funcs=[reward], args=config,
                              train_dataset=dataset, processing_class=tokenizer, rollout_func=rollouts)
        resume = last_checkpoint(output_dir)
        started = time.monotonic()
        trainer.train(resume_from_checkpoint=resume)
        wall = time.monotonic() - started
    trainer.save_model(config.output_dir)
    tokenizer.save_pretrained(config.output_dir)
    rewards = [{"step": e["step"], "reward": e["reward"]} for e in trainer.state.log_history if "reward" in e]
    metrics = {"method": "grpo", "reward_function": script.reward, "steps": trainer.state.global_step,
               "reward": rewards,
               "budget": {**budget.as_dict(), "extended": extended},
               "per_step": [s for s in read_steps(steps_file) if s["step"] <= trainer.state.global_step],
               "wall_time_s": round(wall, 2), "resumed_from": resume}
    write_json(Path(config.output_dir) / "metrics.json", metrics)
    return metrics


def main(argv: list[str] | None = None) -> None:
    script, config = TrlParser((GRPOScriptConfig, CompoGRPOConfig)).parse_args_and_config(args=argv)
    metrics = run_grpo(script, config)
    print(json.dumps({"steps": metrics["steps"], "reward": metrics["reward"], "wall_time_s": metrics["wall_time_s"]}))


if __name__ == "__main__":
    main()
