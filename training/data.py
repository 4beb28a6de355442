"""Training files built from engine objects, and their readers.

* **SFT file**: the CompoWorld sample format (``compoworld_assets.engine.exports``): one JSON
  object per line with ``tools``, ``messages`` and ``meta``.
* **RL file**: one task per line::

      {"format": "compoworld-rl/1", "task_id": ..., "mode": "direct" | "gateway",
       "prompt": [system and user messages the agent sees], "tools": [OpenAI tools],
       "task": <Task.model_dump(mode="json")>}

  next to a **services file** (``<rl file stem>.services.json``, see :func:`services_path`)
  holding the built services and their seed states, which GRPO mounts with
  :class:`~compoworld_assets.engine.rollout.worlds.PooledWorldFactory`. The two files together
  are everything a rollout needs.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compoworld_assets.engine.agents.interface import AgentInterface, DiscoverMode
from compoworld_assets.engine.agents.world import DEFAULT_MOUNT_SIZE
from compoworld_assets.engine.exports import read_samples, write_samples
from compoworld_assets.engine.rollout.worlds import PooledWorldFactory
from compoworld_assets.engine.runtime.state import ServiceState
from compoworld_assets.engine.service_build import BuiltService
from compoworld_assets.engine.tasks.model import Task

RL_FORMAT = "compoworld-rl/1"
SERVICES_FORMAT = "compoworld-services/1"


@dataclass(frozen=True)
class RLTask:
    """One line of an RL file."""

    task: Task
    mode: DiscoverMode
    prompt: list[dict[str, Any]]
    tools: list[dict[str, Any]]


@dataclass(frozen=True)
class ServiceBundle:
    """A services file: what a world factory needs."""

    built: dict[str, BuiltService]
    seed_states: dict[str, ServiceState]
    mount_size: int

    def world_factory(self, world_model: Any = None) -> PooledWorldFactory:
        return PooledWorldFactory(self.built, self.seed_states, world_model, mount_size=self.mount_size)


def write_sft_file(samples: Iterable[dict[str, Any]], path: str | Path) -> int:
    """Write sample-format records (``exports.sample_record``); returns how many."""
    return write_samples(samples, path)


def read_sft_file(path: str | Path) -> list[dict[str, Any]]:
    return read_samples(path)


def services_path(rl_path: str | Path) -> Path:
    rl_path = Path(rl_path)
    return rl_path.with_name(rl_path.name.split(".")[0] + ".services.json")


def write_rl_file(tasks: Iterable[Task], built_services: Mapping[str, BuiltService], path: str | Path,
                  seed_states: Mapping[str, ServiceState] | None = None, mode: DiscoverMode = "direct",
                  mount_size: int = DEFAULT_MOUNT_SIZE) -> int:
    """Write the RL file and its services file; returns how many tasks were written.

    Prompts and tools come from the agent interface over the world the rollouts will mount
    (same services, same mount size), so the model trains on exactly what it will see.
    """
    bundle = ServiceBundle(dict(built_services), dict(seed_states or {}), mount_size)
    count = 0
    with bundle.world_factory() as factory, Path(path).open("w", encoding="utf-8") as handle:
        for task in tasks:
            world = factory(task)
            try:
                interface = AgentInterface(task, world, mode)
                record = {"format": RL_FORMAT, "task_id": task.task_id, "mode": mode,
                          "prompt": interface.initial_messages(), "tools": interface.tools,
                          "task": task.model_dump(mode="json")}
            finally:
                world.close()
            handle.write(json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n")
            count += 1
    services = {"format": SERVICES_FORMAT, "mount_size": mount_size,
                "built": {sid: b.model_dump(mode="json") for sid, b in sorted(bundle.built.items())},
                "seed_states": {sid: s.model_dump(mode="json") for sid, s in sorted(bundle.seed_states.items())}}
    services_path(path).write_text(json.dumps(services, ensure_ascii=False, sort_keys=True), encoding="utf-8")
    return count


def read_rl_file(path: str | Path) -> list[RLTask]:
    tasks = []
    with Path(path).open(encoding="utf-8") as handle:
        for line in handle:
            if not line.strip():
                continue
            record = json.loads(line)
            if record.get("format") != RL_FORMAT:
                raise ValueError(f"not a {RL_FORMAT} record: format {record.get('format')!r}")
            tasks.append(RLTask(task=Task.model_validate(record["task"]), mode=record["mode"],
                                prompt=record["prompt"], tools=record["tools"]))
    return tasks


def read_services(path: str | Path) -> ServiceBundle:
    record = json.loads(Path(path).read_text(encoding="utf-8"))
    if record.get("format") != SERVICES_FORMAT:
        raise ValueError(f"not a {SERVICES_FORMAT} file: format {record.get('format')!r}")
    return ServiceBundle(built={sid: BuiltService.model_validate(b) for sid, b in record["built"].items()},
                         seed_states={sid: ServiceState.model_validate(s)
                                      for sid, s in record["seed_states"].items()},
                         mount_size=record["mount_size"])


def first_oracle_call(sample: dict[str, Any]) -> tuple[list[dict[str, Any]], tuple[str, dict[str, Any]]]:
    """A sample's messages before its first assistant turn, and that turn's first tool call (name, arguments)."""
    messages = sample["messages"]
    index = next(i for i, m in enumerate(messages) if m.get("role") == "assistant")
    function = messages[index]["tool_calls"][0]["function"]
    arguments = function["arguments"]
    return messages[:index], (function["name"], json.loads(arguments) if isinstance(arguments, str) else arguments)
