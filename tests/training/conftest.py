"""Shared fixtures: the converted base model (once per session), a tiny model on its tokenizer, engine-made data.

Training tests run a tiny random Llama (two layers) with SmolLM2's tokenizer and the training
template, so that a few SFT/GRPO steps take seconds on a shared CPU; the real 135M model is
exercised by the conversion test and the measurements in docs/training.md.
"""

from __future__ import annotations

import os

import pytest

pytest.importorskip("trl", reason="training needs the 'train' extra")
os.environ.setdefault("OMP_NUM_THREADS", "1")


@pytest.fixture(scope="session", autouse=True)
def one_torch_thread():
    import torch

    torch.set_num_threads(1)


@pytest.fixture(scope="session")
def base_model_dir(tmp_path_factory):
    from training.base_model import bundled_gguf, prepare_base_model

    try:
        bundled_gguf()
    except FileNotFoundError as exc:
        pytest.skip(str(exc))
    return prepare_base_model(tmp_path_factory.mktemp("base"))


@pytest.fixture(scope="session")
def tokenizer(base_model_dir):
    from training.common import load_tokenizer

    return load_tokenizer(base_model_dir)


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory, base_model_dir, tokenizer):
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    torch.manual_seed(0)
    config = AutoConfig.from_pretrained(base_model_dir)
    config.update({"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2,
                   "num_key_value_heads": 1, "head_dim": 16, "tie_word_embeddings": True})
    model = AutoModelForCausalLM.from_config(config)
    folder = tmp_path_factory.mktemp("tiny")
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture(scope="session")
def demo_files(tmp_path_factory):
    from training.demo_data import build_demo_data

    files = build_demo_data(tmp_path_factory.mktemp("data"), services=("crm", "helpdesk", "mail", "invoicing"),
                            n_tasks=24, seed=3)
    assert files.counts["sft"] >= 3 and files.counts["heldout"] >= 2 and files.counts["rl"] >= 1
    return files
