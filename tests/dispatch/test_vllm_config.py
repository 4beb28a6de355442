"""The vLLM command lines and TRL arguments produced from VLLMServeConfig (vLLM itself cannot be
installed here; the TRL test parses the arguments with TRL's own parser)."""

import pytest
from pydantic import ValidationError

from resources.compute import VLLMServeConfig


def test_vllm_serve_command_carries_the_config():
    config = VLLMServeConfig(model="/models/sft-7", tensor_parallel_size=2, gpu_memory_utilization=0.85,
                             port=8123, max_model_len=4096)
    assert config.serve_command() == [
        "vllm", "serve", "/models/sft-7", "--tensor-parallel-size", "2", "--gpu-memory-utilization", "0.85",
        "--host", "127.0.0.1", "--port", "8123", "--dtype", "auto", "--max-model-len", "4096"]
    assert config.gpus == 2
    assert config.api_base == "http://127.0.0.1:8123/v1"


def test_grpo_kwargs_per_mode():
    config = VLLMServeConfig(model="m", host="10.0.0.5", port=9000, gpu_memory_utilization=0.3)
    assert config.grpo_kwargs("server") == {"use_vllm": True, "vllm_mode": "server",
                                            "vllm_server_host": "10.0.0.5", "vllm_server_port": 9000}
    colocate = config.grpo_kwargs("colocate")
    assert colocate["vllm_gpu_memory_utilization"] == 0.3
    assert "vllm_max_model_length" not in colocate
    assert config.grpo_cli_args("server")[:4] == ["--use_vllm", "true", "--vllm_mode", "server"]


@pytest.mark.parametrize("bad", [{"gpu_memory_utilization": 0}, {"gpu_memory_utilization": 1.5},
                                 {"tensor_parallel_size": 0}, {"port": 70000}])
def test_out_of_range_values_are_rejected(bad):
    with pytest.raises(ValidationError):
        VLLMServeConfig(model="m", **bad)


@pytest.mark.slow
def test_trl_parses_the_generated_arguments():
    transformers = pytest.importorskip("transformers")
    pytest.importorskip("trl")
    from trl import GRPOConfig
    from trl.scripts.vllm_serve import ScriptArguments

    config = VLLMServeConfig(model="/models/sft-7", tensor_parallel_size=2, gpu_memory_utilization=0.5,
                             port=8124, max_model_len=2048)
    [served] = transformers.HfArgumentParser(ScriptArguments).parse_args_into_dataclasses(
        args=config.trl_serve_command()[2:])
    assert (served.model, served.tensor_parallel_size, served.gpu_memory_utilization, served.port,
            served.max_model_len) == ("/models/sft-7", 2, 0.5, 8124, 2048)
    for mode in ("server", "colocate"):
        [grpo] = transformers.HfArgumentParser(GRPOConfig).parse_args_into_dataclasses(
            args=[*config.grpo_cli_args(mode), "--output_dir", "/tmp/unused", "--report_to", "none",
                  "--use_cpu", "true", "--bf16", "false"])
        assert {name: getattr(grpo, name) for name in config.grpo_kwargs(mode)} == config.grpo_kwargs(mode)
