"""Supervised fine-tuning on sample-format trajectories with TRL's ``SFTTrainer``, no Dagster.

    python -m training.sft --train_file sft.jsonl --output_dir runs/sft --max_steps 32

The dataset is conversational (``messages`` + ``tools``) and rendered with the training chat
template; the loss is on assistant turns only. LoRA is optional (``--use_lora``). When
``output_dir`` holds a checkpoint, training resumes from the last one. ``metrics.json`` in
``output_dir`` holds the loss per step, the steps, the tokens seen and the wall time.

``--curriculum length`` trains shortest samples first: the samples are ordered by their rendered length
and the trainer takes them in that order (``train_sampling_strategy="sequential"``), so every epoch runs
from the short, few-step tasks to the long ones. ``--curriculum none`` (default) leaves the order to the
trainer's shuffling. Several passes: ``--num_train_epochs E --max_steps -1``, or ``--max_steps`` from
:func:`training.curriculum.steps_for_epochs` (what the ``sft_checkpoint`` asset does with its ``epochs`` setting).
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trl import SFTConfig, TrlParser

from training.common import (
    configure_cpu_threads,
    last_checkpoint,
    load_model,
    load_tokenizer,
    resolve_model,
    resolve_precision,
    write_json,
)
from training.curriculum import CURRICULA, curriculum_order
from training.data import read_sft_file


@dataclass
class SFTScriptConfig:
    train_file: str = field(default="", metadata={"help": "Sample-format JSON lines (tools, messages, meta)."})
    model: str | None = field(default=None, metadata={
        "help": "Hugging Face model id or checkpoint folder; default: the bundled SmolLM2-135M-Instruct."})
    base_model_cache: str | None = field(default=None, metadata={"help": "Where the bundled model is converted."})
    max_samples: int | None = field(default=None, metadata={"help": "Use only the first N samples."})
    on_overflow: str = field(default="extend", metadata={
        "help": "A sample longer than max_length would be truncated (TRL then drops rows left without an "
                "assistant token): 'extend' raises max_length to the longest sample, 'raise' stops with the list."})
    curriculum: str = field(default="none", metadata={
        "help": "Sample order: 'none' (the trainer shuffles) or 'length' (shortest rendered samples first, every "
                "epoch).", "choices": list(CURRICULA)})
    use_lora: bool = False
    lora_r: int = 16
    lora_alpha: int = 32
    lora_dropout: float = 0.0


@dataclass
class CompoSFTConfig(SFTConfig):
    """TRL's SFTConfig with defaults for small CPU runs (TRL's own defaults assume a GPU)."""

    output_dir: str = "runs/sft"
    max_steps: int = 32
    per_device_train_batch_size: int = 2
    learning_rate: float = 5e-5
    max_length: int | None = 2048
    assistant_only_loss: bool = True
    bf16: bool | None = None  # None: native bf16 where the CPU has it, else fp32 (training.common.resolve_precision)
    gradient_checkpointing: bool | None = False
    logging_steps: float = 1
    save_steps: float = 16
    save_total_limit: int | None = 2
    warmup_steps: float = 0
    lr_scheduler_type: str = "constant"
    seed: int = 0

    def __post_init__(self) -> None:
        resolve_precision(self)
        super().__post_init__()


def sample_lengths(samples: list[dict[str, Any]], tokenizer: Any) -> list[int]:
    """Tokens of each sample as the trainer renders it (training chat template, its tools included)."""
    return [len(tokenizer.apply_chat_template(s["messages"], tools=s["tools"], return_dict=True)["input_ids"])
            for s in samples]


def fit_max_length(lengths: list[int], max_length: int | None, on_overflow: str) -> int | None:
    """The max_length that truncates no sample: unchanged when all fit, else the longest (``extend``) or an
    error naming how many samples would be cut (``raise``)."""
    if on_overflow not in ("extend", "raise"):
        raise ValueError(f"on_overflow must be 'extend' or 'raise', not {on_overflow!r}")
    longest = max(lengths, default=0)
    if max_length is None or longest <= max_length:
        return max_length
    if on_overflow == "raise":
        over = sum(n > max_length for n in lengths)
        raise ValueError(f"{over} of {len(lengths)} samples are longer than max_length={max_length} (longest: "
                         f"{longest} tokens) and would be truncated or dropped; raise --max_length to {longest} or "
                         "pass --on_overflow extend")
    return longest


def sft_dataset(samples: list[dict[str, Any]]) -> Any:
    """A conversational dataset: ``messages`` as given, ``tools`` as JSON text (TRL decodes it per row).

    Keeping tools as text avoids Arrow unifying every tool schema of the file into one struct.
    """
    from datasets import Dataset

    return Dataset.from_list([{"messages": s["messages"], "tools": json.dumps(s["tools"], ensure_ascii=False)}
                              for s in samples])


def sft_trainer(script: SFTScriptConfig, config: CompoSFTConfig) -> tuple[Any, Any, list[int]]:
    """(trainer, tokenizer, sample lengths in training order) for the run ``script`` and ``config`` describe."""
    from trl import SFTTrainer

    samples = read_sft_file(script.train_file)[: script.max_samples]
    if not samples:
        raise ValueError(f"{script.train_file} holds no samples")
    model_dir = resolve_model(script.model, script.base_model_cache)
    tokenizer = load_tokenizer(model_dir)
    lengths = sample_lengths(samples, tokenizer)
    order = curriculum_order(lengths, script.curriculum)
    samples, lengths = [samples[i] for i in order], [lengths[i] for i in order]
    if script.curriculum != "none":
        config.train_sampling_strategy = "sequential"
    config.max_length = fit_max_length(lengths, config.max_length, script.on_overflow)
    model = load_model(model_dir)
    peft_config = None
    if script.use_lora:
        from peft import LoraConfig

        peft_config = LoraConfig(r=script.lora_r, lora_alpha=script.lora_alpha, lora_dropout=script.lora_dropout,
                                 target_modules="all-linear", task_type="CAUSAL_LM")
    trainer = SFTTrainer(model=model, args=config, train_dataset=sft_dataset(samples), processing_class=tokenizer,
                         peft_config=peft_config)
    return trainer, tokenizer, lengths


def run_sft(script: SFTScriptConfig, config: CompoSFTConfig) -> dict[str, Any]:
    """Train, save the final model and tokenizer into ``output_dir``, write and return the metrics."""
    configure_cpu_threads()
    trainer, tokenizer, lengths = sft_trainer(script, config)
    resume = last_checkpoint(config.output_dir)
    started = time.monotonic()
    trainer.train(resume_from_checkpoint=resume)
    wall = time.monotonic() - started
    trainer.save_model(config.output_dir)
    tokenizer.save_pretrained(config.output_dir)
    metrics = sft_metrics(trainer.state.log_history, trainer.state.global_step, wall, resume, len(lengths))
    metrics.update(max_length=config.max_length, longest_sample_tokens=max(lengths), bf16=bool(config.bf16),
                   curriculum=script.curriculum, epochs=round(trainer.state.epoch or 0.0, 4))
    write_json(Path(config.output_dir) / "metrics.json", metrics)
    return metrics


def sft_metrics(log_history: list[dict[str, Any]], steps: int, wall_s: float, resumed_from: str | None,
                n_samples: int) -> dict[str, Any]:
    losses = [{"step": e["step"], "loss": e["loss"]} for e in log_history if "loss" in e]
    tokens = [e["num_tokens"] for e in log_history if "num_tokens" in e]
    final_loss = losses[-1]["loss"] if losses else math.nan
    return {"method": "sft", "steps": steps, "samples": n_samples, "loss": losses, "final_loss": final_loss,
            "tokens_seen": int(tokens[-1]) if tokens else 0, "wall_time_s": round(wall_s, 2),
            "resumed_from": resumed_from}


def main(argv: list[str] | None = None) -> None:
    parser = TrlParser((SFTScriptConfig, CompoSFTConfig))
    script, config = parser.parse_args_and_config(args=argv)
    metrics = run_sft(script, config)
    print(json.dumps({k: metrics[k] for k in ("steps", "final_loss", "tokens_seen", "wall_time_s")}))


if __name__ == "__main__":
    main()
