"""A test double with the sandbox's interface and no isolation at all: the module runs in the host.

The harness's self-test runs a few corpus cases through it to show that the checks see escapes
(``CONFIG["executor_module"] = "unsandboxed"``). Never used outside that test.
"""

from __future__ import annotations

import builtins
import copy
from typing import Any


class SandboxLoadError(RuntimeError):
    pass


class SandboxedExecutor:
    def __init__(self, module_source: str, limits: Any = None, *, service_id: str = "service") -> None:
        namespace: dict[str, Any] = {"__builtins__": builtins}
        try:
            exec(compile(module_source, f"<service {service_id}>", "exec"), namespace)  # noqa: S102
        except Exception as exc:
            raise SandboxLoadError(f"{type(exc).__name__}: {exc}") from exc
        self._handle = namespace["handle"]
        self._state: dict[str, Any] = {"service_id": service_id, "tables": {}, "counters": {}}
        self._installed = copy.deepcopy(self._state)
        self.layers: list[str] = []
        self.pid = None

    def reset(self, state: Any) -> None:
        self._installed = state.model_dump(mode="json")
        self.restore()

    def restore(self) -> None:
        self._state = copy.deepcopy(self._installed)

    @property
    def changed(self) -> bool:
        return self._state != self._installed

    def call(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        try:
            return self._handle(self._state, tool, copy.deepcopy(args))
        except Exception as exc:  # noqa: BLE001 - every tool failure becomes an envelope
            return {"success": False, "error": {"code": "internal_error", "message": f"{type(exc).__name__}: {exc}"}}

    def state(self) -> Any:
        from compoworld_assets.engine.runtime.state import ServiceState

        return ServiceState.model_validate(copy.deepcopy(self._state))

    def close(self) -> None:
        self._handle = None
