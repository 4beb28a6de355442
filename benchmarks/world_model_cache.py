"""World-model cache writes per second: the cache as it is (WAL, ``synchronous=NORMAL``) and the same
file with sqlite's default ``synchronous=FULL`` (a disk flush per commit), one transaction per write
as the cache does.

    python benchmarks/world_model_cache.py --writes 2000
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from compoworld_assets.engine.world_model.cache import SqliteWorldModelCache

ENVELOPE = {"result": {"status": "ok", "note": "x" * 400}, "change": {"updated": {}}}


def writes_per_s(path: Path, writes: int, synchronous: str | None) -> float:
    cache = SqliteWorldModelCache(path)
    if synchronous:
        cache._db.execute(f"PRAGMA synchronous={synchronous}")
    started = time.perf_counter()
    for i in range(writes):
        cache.put(f"key-{i}", ENVELOPE)
    rate = writes / (time.perf_counter() - started)
    cache.close()
    return rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writes", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        full = writes_per_s(Path(scratch) / "full.sqlite", args.writes, "FULL")
        normal = writes_per_s(Path(scratch) / "cache.sqlite", args.writes, None)
    print(f"synchronous=FULL:        {full:,.0f} writes/s")
    print(f"the cache (NORMAL, WAL): {normal:,.0f} writes/s ({normal / full:.1f}x)")


if __name__ == "__main__":
    main()
