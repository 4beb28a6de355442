"""BFCL's multi-turn data and its human-written backends, as the reference side.

``bfcl_eval`` is an optional package: it is imported only when these functions run, so the
engine stays importable without it. Reference instances are created here, one per entry and
backend (BFCL's own ``execute_multi_turn_func_call`` caches instances in module globals per
model name and entry id; we never go through that cache).
"""

from __future__ import annotations

import copy
import importlib
import inspect
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compoworld_assets.engine.differential.compare import plain, reference_failed
from compoworld_assets.engine.specs.importers import import_openai_functions
from compoworld_assets.engine.specs.importers.naming import service_slug
from compoworld_assets.engine.specs.model import ServiceSpec

BACKENDS = (
    "GorillaFileSystem",
    "MathAPI",
    "MessageAPI",
    "TwitterAPI",
    "TicketAPI",
    "TradingBot",
    "TravelAPI",
    "VehicleControlAPI",
)
DEFAULT_CATEGORY = "multi_turn_base"
_CONFIG_MODULE = "bfcl_eval.constants.executable_backend_config"


def is_long_context(category: str) -> bool:
    """BFCL loads the long-context categories' scenarios with ``long_context=True`` (extra state)."""
    return category.endswith("long_context")


@dataclass(frozen=True)
class BfclEntry:
    """One multi-turn entry: its id, classes, initial config and ground-truth turns of call strings."""

    id: str
    involved_classes: tuple[str, ...]
    initial_config: dict[str, Any]
    ground_truth: tuple[tuple[str, ...], ...]

    def calls(self) -> list[str]:
        return [call for turn in self.ground_truth for call in turn]


def bfcl_available() -> bool:
    try:
        importlib.import_module(_CONFIG_MODULE)
    except ImportError:
        return False
    return True


def _data_dir() -> Path:
    package = importlib.import_module("bfcl_eval")
    return Path(package.__file__).resolve().parent / "data"


def _json_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def load_entries(category: str = DEFAULT_CATEGORY) -> list[BfclEntry]:
    """The entries of ``category`` joined with their ground truth, in file order."""
    data = _data_dir()
    answers = {
        a["id"]: a["ground_truth"] for a in _json_lines(data / "possible_answer" / f"BFCL_v4_{category}.json")
    }
    return [
        BfclEntry(
            id=raw["id"],
            involved_classes=tuple(raw["involved_classes"]),
            initial_config=raw.get("initial_config") or {},
            ground_truth=tuple(tuple(turn) for turn in answers[raw["id"]]),
        )
        for raw in _json_lines(data / f"BFCL_v4_{category}.json")
    ]


def function_docs(backend: str) -> list[dict[str, Any]]:
    """BFCL's function docs (Gorilla dialect, with ``response`` schemas) for one backend."""
    config = importlib.import_module(_CONFIG_MODULE)
    path = _data_dir() / "multi_turn_func_doc" / config.MULTI_TURN_FUNC_DOC_FILE_MAPPING[backend]
    return _json_lines(path)


def import_backend_spec(backend: str) -> ServiceSpec:
    """One service from the backend's function docs, through our BFCL importer."""
    result = import_openai_functions(
        function_docs(backend), location=f"bfcl:{backend}", service_id=service_slug(backend), kind="bfcl"
    )
    if not result.specs:
        reasons = "; ".join(q.reason for q in result.quarantined)
        raise ValueError(f"{backend}: the importer produced no service ({reasons})")
    return result.specs[0]


def _backend_class(backend: str) -> type:
    config = importlib.import_module(_CONFIG_MODULE)
    return getattr(importlib.import_module(config.CLASS_FILE_PATH_MAPPING[backend]), backend)


def backend_methods(backend: str) -> frozenset[str]:
    """The public method names of a backend class (what BFCL's executor routes calls to)."""
    return frozenset(
        name
        for name, _ in inspect.getmembers(_backend_class(backend), inspect.isfunction)
        if not name.startswith("_")
    )


@dataclass(frozen=True)
class ReferenceResult:
    ok: bool
    value: Any
    """The normalised return value, or ``{"error": <exception text>}`` when the method raised."""


class ReferenceBackend:
    """A fresh instance of one BFCL backend loaded with an entry's config for that class."""

    def __init__(self, backend: str, initial_config: dict[str, Any], long_context: bool = False) -> None:
        self.backend = backend
        self.instance = _backend_class(backend)()
        stateless = importlib.import_module(_CONFIG_MODULE).STATELESS_CLASSES
        if backend not in stateless:
            self.instance._load_scenario(copy.deepcopy(initial_config), long_context=long_context)

    def parameter_names(self, method: str) -> list[str]:
        signature = inspect.signature(getattr(self.instance, method))
        return [
            p.name
            for p in signature.parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]

    def call(self, method: str, args: dict[str, Any]) -> ReferenceResult:
        try:
            value = getattr(self.instance, method)(**copy.deepcopy(args))
        except Exception as exc:  # noqa: BLE001 - a raising reference method is a failed call
            return ReferenceResult(ok=False, value={"error": f"{type(exc).__name__}: {exc}"})
        return ReferenceResult(ok=not reference_failed(value), value=plain(value))

    def state(self) -> dict[str, Any]:
        """The public attributes, normalised (BFCL's state checker compares the same attributes)."""
        return plain({k: v for k, v in vars(self.instance).items() if not k.startswith("_")})
