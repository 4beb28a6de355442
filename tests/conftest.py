"""Shared by every test folder: a tiny randomly initialised Llama with SmolLM2's tokenizer, saved once per session."""

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
# Runtimes share state objects as values: every reuse checks that nobody changed one in place.
os.environ.setdefault("COMPOWORLD_CHECK_STATE_VALUES", "1")

# Property tests check behaviour, not timings: no per-example deadline (one example of a state-hashing property
# exceeded Hypothesis's default 200 ms on busy cores and failed the suite), and no "too slow" health check.
settings.register_profile("compoworld", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("compoworld")

CONVERTED_BASE = Path("data/models/base")


def _smollm2_tokenizer(transformers):
    """From a converted base checkpoint when there is one (fast), else parsed from the bundled GGUF (~30 s)."""
    from training.base_model import bundled_gguf

    converted = Path(os.environ.get("COMPOWORLD_BASE_MODEL_DIR", CONVERTED_BASE))
    if (converted / "tokenizer.json").is_file():
        return transformers.AutoTokenizer.from_pretrained(converted)
    try:
        gguf = bundled_gguf()
    except FileNotFoundError as exc:
        pytest.skip(str(exc))
    return transformers.AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory):
    pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    tokenizer = _smollm2_tokenizer(transformers)
    config = transformers.LlamaConfig(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64,
                                      num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=2,
                                      max_position_embeddings=512, tie_word_embeddings=True)
    import torch

    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(config)
    directory = tmp_path_factory.mktemp("tiny-llama")
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


@pytest.fixture(scope="session")
def tiny_chat_model(tiny_model_dir):
    from compoworld_assets.serving.openai_server import ChatModel

    return ChatModel(tiny_model_dir, "tiny")
