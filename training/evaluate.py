"""Before/after metrics on held-out trajectories: does the model's first turn match the oracle's first call?

    python -m training.evaluate --eval_file heldout.jsonl --model runs/sft --max_tasks 20

For each sample-format record: the prompt is every message before the first assistant turn
(rendered with its tools by the training template), the model answers greedily, and the
answer is parsed with the rollout engine's parser. Metrics, each a share of the tasks:
``format_valid`` (the answer parses as a tool call), ``right_tool`` (its first call names the
oracle's tool) and ``exact_call`` (tool and arguments equal the oracle's, compared as canonical JSON).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from trl import TrlParser

from compoworld_assets.engine.canonical import canonical_json
from training.chat_template import parse_tool_calls
from training.common import configure_cpu_threads, load_model, load_tokenizer, resolve_model, write_json
from training.data import first_oracle_call, read_sft_file


@dataclass
class EvaluateConfig:
    eval_file: str = field(default="", metadata={"help": "Sample-format JSON lines of held-out trajectories."})
    model: str | None = field(default=None, metadata={"help": "Checkpoint folder or model id; default: base model."})
    base_model_cache: str | None = None
    max_tasks: int | None = None
    max_new_tokens: int = 96
    output_file: str | None = field(default=None, metadata={"help": "Write the metrics here as JSON."})


def score_answer(text: str, oracle: tuple[str, dict[str, Any]]) -> dict[str, bool]:
    calls = parse_tool_calls(text)
    name, arguments = calls[0] if calls else (None, None)
    return {"format_valid": bool(calls), "right_tool": name == oracle[0],
            "exact_call": name == oracle[0] and canonical_json(arguments) == canonical_json(oracle[1])}


def evaluate_model(model: Any, tokenizer: Any, samples: list[dict[str, Any]], max_new_tokens: int = 96
                   ) -> dict[str, Any]:
    import torch

    model.eval()
    rows = []
    for sample in samples:
        prompt, oracle = first_oracle_call(sample)
        input_ids = tokenizer.apply_chat_template(prompt, tools=sample["tools"], add_generation_prompt=True,
                                                  return_dict=True, return_tensors="pt")["input_ids"]
        with torch.no_grad():
            output = model.generate(input_ids, attention_mask=torch.ones_like(input_ids), do_sample=False,
                                    max_new_tokens=max_new_tokens, eos_token_id=tokenizer.eos_token_id,
                                    pad_token_id=tokenizer.pad_token_id)
        text = tokenizer.decode(output[0, input_ids.shape[1]:], skip_special_tokens=False)
        rows.append({"task_id": sample["meta"]["task_id"], "answer": text, **score_answer(text, oracle)})
    n = len(rows)
    metrics = {key: (sum(r[key] for r in rows) / n if n else 0.0) for key in ("format_valid", "right_tool",
                                                                             "exact_call")}
    return {"tasks": n, **metrics, "answers": rows}


def run_evaluate(config: EvaluateConfig) -> dict[str, Any]:
    configure_cpu_threads()
    samples = read_sft_file(config.eval_file)[: config.max_tasks]
    model_dir = resolve_model(config.model, config.base_model_cache)
    result = evaluate_model(load_model(model_dir), load_tokenizer(model_dir), samples, config.max_new_tokens)
    if config.output_file:
        write_json(config.output_file, result)
    return result


def main(argv: list[str] | None = None) -> None:
    (config,) = TrlParser((EvaluateConfig,)).parse_args_and_config(args=argv)
    result = run_evaluate(config)
    print(json.dumps({k: v for k, v in result.items() if k != "answers"}))


if __name__ == "__main__":
    main()
