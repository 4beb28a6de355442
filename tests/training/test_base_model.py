"""The bundled GGUF becomes a plain checkpoint once; later calls hit the cache; other sources pass through."""

import time

import pytest

from training.base_model import MARKER, checkpoint_hash, file_hash, prepare_base_model


@pytest.mark.slow
def test_conversion_then_cache_hit(base_model_dir):
    from transformers import AutoModelForCausalLM

    assert (base_model_dir / "model.safetensors").is_file() and (base_model_dir / MARKER).is_file()
    model = AutoModelForCausalLM.from_pretrained(base_model_dir)
    assert getattr(model, "hf_quantizer", None) is None
    assert 130e6 < sum(p.numel() for p in model.parameters()) < 140e6
    before = checkpoint_hash(base_model_dir)
    started = time.monotonic()
    assert prepare_base_model(base_model_dir) == base_model_dir
    assert time.monotonic() - started < 5 and checkpoint_hash(base_model_dir) == before


def test_local_checkpoint_passes_through(tmp_path):
    assert prepare_base_model(tmp_path / "cache", str(tmp_path)) == tmp_path


def test_checkpoint_hash_sees_content_and_names(tmp_path):
    (tmp_path / "a.bin").write_bytes(b"x")
    first = checkpoint_hash(tmp_path)
    (tmp_path / MARKER).write_text("ignored")
    assert checkpoint_hash(tmp_path) == first
    (tmp_path / "a.bin").write_bytes(b"y")
    assert checkpoint_hash(tmp_path) != first
    assert file_hash(tmp_path / "a.bin") != file_hash(tmp_path / MARKER)
