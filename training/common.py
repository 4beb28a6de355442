"""What every training script shares: the device and thread setup, loading the model and tokenizer, metrics."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from training.base_model import DEFAULT_CACHE, prepare_base_model
from training.chat_template import install_training_template


def configure_cpu_threads() -> None:
    """One torch thread unless OMP_NUM_THREADS says otherwise (more threads were 5x slower on shared cores)."""
    import torch

    threads = int(os.environ.get("OMP_NUM_THREADS", "1"))
    torch.set_num_threads(max(1, threads))


def cuda_available() -> bool:
    import torch

    return torch.cuda.is_available()


def cpu_has_native_bf16(cpuinfo: str | None = None) -> bool:
    """True when the CPU computes bf16 natively (AMX-BF16 or AVX512-BF16 in its flags). Without them,
    bf16 training on a CPU was measured at least 13x slower than fp32 here."""
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text()
        except OSError:
            return False
    flags = {flag for line in cpuinfo.splitlines() if line.startswith("flags") for flag in line.split(":", 1)[1].split()}
    return bool(flags & {"amx_bf16", "avx512_bf16"})


def resolve_precision(config: Any) -> None:
    """A training config's ``bf16`` left as None becomes what the hardware supports: CUDA's choice on a GPU
    (TRL's default), native bf16 or fp32 on a CPU. ``use_cpu`` is set when there is no GPU."""
    if cuda_available():
        return
    config.use_cpu = True
    if config.bf16 is None:
        config.bf16 = cpu_has_native_bf16()


def last_checkpoint(output_dir: str | Path) -> str | None:
    """The newest ``checkpoint-N`` folder in ``output_dir`` (None: none yet): a rerun into the same folder resumes
    there, steps and optimizer state included."""
    from transformers.trainer_utils import get_last_checkpoint

    return get_last_checkpoint(str(output_dir)) if Path(output_dir).is_dir() else None


def resolve_model(model: str | None, base_model_cache: str | None) -> Path:
    """The checkpoint folder to load: the converted bundled model when ``model`` is None, else a pass-through."""
    return prepare_base_model(base_model_cache or DEFAULT_CACHE, model)


def load_tokenizer(model_dir: str | Path) -> Any:
    from transformers import AutoTokenizer

    return install_training_template(AutoTokenizer.from_pretrained(model_dir))


def load_model(model_dir: str | Path, bf16: bool = False) -> Any:
    import torch
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.bfloat16 if bf16 else torch.float32)


def write_json(path: str | Path, value: Any) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(value, indent=2, sort_keys=True) + "\n", encoding="utf-8")
