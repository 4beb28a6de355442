"""The red-team corpus of issue 12 against the sandbox: tries, contained, escaped, reasons by code.

    .venv/bin/python benchmarks/redteam.py [--through-synthesizer] [--only NAME ...] [--json PATH]

Each hostile module of ``tests/engine/runtime/redteam/corpus`` runs in its own process tree
(reaper, parent with a fake API key and a second service, sandbox) and is judged by the same
checks as the tests. ``--through-synthesizer`` hides each attack in a correct service module that
a stub model hands to ``LLMSynthesizer``; contained then means the synthesizer did not keep it.
Exit status 1 when anything escaped.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "engine" / "runtime" / "redteam"))

from redteam_harness import REPO_ROOT, load_corpus, run_case


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--through-synthesizer", action="store_true")
    parser.add_argument("--only", nargs="*", default=[], help="case names (default: the whole corpus)")
    parser.add_argument("--code-root", type=Path, default=REPO_ROOT, help="checkout whose sandbox to attack")
    parser.add_argument("--json", type=Path, help="write every outcome here")
    args = parser.parse_args()

    mode = "synthesizer" if args.through_synthesizer else "direct"
    cases = [c for c in load_corpus() if not args.only or c.name in args.only]
    outcomes = []
    with tempfile.TemporaryDirectory(prefix="redteam-") as workdir:
        for number, case in enumerate(cases):
            outcome = run_case(case, Path(workdir) / f"{number:03d}", mode=mode, code_root=args.code_root)
            outcomes.append(outcome)
            verdict = "contained" if outcome.contained else "ESCAPED"
            print(f"{case.name:32} {verdict:9} {outcome.reason:18} {outcome.detail[:70]!r}", flush=True)
            for escape in outcome.escapes:
                print(f"    - {escape[:160]}")

    escaped = [o.name for o in outcomes if not o.contained]
    print(f"\nmode: {mode}")
    print(f"tries: {len(outcomes)}  contained: {len(outcomes) - len(escaped)}  escaped: {len(escaped)}")
    if escaped:
        print("escaped: " + ", ".join(escaped))
    print("reasons: " + ", ".join(f"{r}={n}" for r, n in sorted(Counter(o.reason for o in outcomes).items())))
    if args.json:
        args.json.write_text(json.dumps([vars(o) for o in outcomes], indent=1))
    return 1 if escaped else 0


if __name__ == "__main__":
    sys.exit(main())
