"""Sandbox round trips per second: a trivial tool, and reads/writes on a built-in service.

    .venv/bin/python benchmarks/sandbox_throughput.py [--calls 2000]
"""

from __future__ import annotations

import argparse
import time

from compoworld_assets.engine.library import builtin_spec
from compoworld_assets.engine.library.seeding import Population, seed_service_state
from compoworld_assets.engine.runtime.executor import SandboxLimits
from compoworld_assets.engine.runtime.sandbox import SandboxedExecutor
from compoworld_assets.engine.runtime.state import ServiceState
from compoworld_assets.engine.synthesis.offline import OfflineSynthesizer

ECHO = '''
def handle(state, tool, args):
    return {"success": True, "data": args}
'''


def rate(executor: SandboxedExecutor, tool: str, make_args, calls: int) -> float:
    started = time.perf_counter()
    for i in range(calls):
        executor.call(tool, make_args(i))
    return calls / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rows", type=int, default=200)
    args = parser.parse_args()

    started = time.perf_counter()
    with SandboxedExecutor(ECHO, SandboxLimits()) as echo:
        echo.reset(ServiceState(service_id="echo"))
        startup = time.perf_counter() - started
        print(f"executor start-up:          {startup * 1000:8.1f} ms")
        print(f"trivial tool round trip:    {rate(echo, 'echo', lambda i: {'i': i}, args.calls):8.0f} calls/s")

    spec = builtin_spec("crm")
    module = OfflineSynthesizer().synthesize(spec)
    state = seed_service_state(spec, Population.generate(1), 1, rows_per_entity=args.rows)
    with SandboxedExecutor(module.source, SandboxLimits()) as crm:
        crm.reset(state)
        ids = sorted(state.tables["Contact"])
        read = rate(crm, "get_contact", lambda i: {"contact_id": ids[i % len(ids)]}, args.calls)
        print(f"crm read, {args.rows} rows/entity:  {read:8.0f} calls/s")
        write = rate(crm, "update_contact",
                     lambda i: {"contact_id": ids[i % len(ids)], "notes": f"call {i}"}, args.calls)
        print(f"crm update, {args.rows} rows/entity:{write:8.0f} calls/s")


if __name__ == "__main__":
    main()
