"""How many held-out episodes the CFRR-vs-plain ablation needs to show a difference in full success.

Prints, for the success rate of one arm and a difference to detect, the held-out items each arm must be scored
on (two-sided alpha 0.05, power 0.8; ``compoworld_assets.engine.evaluation.stats.items_to_detect``). Compare it
with the held-out split a run has (`compoworld status`, table `sampled_tasks` where split is heldout) and with
the seeds per item the suite runs (k seeds of one item are not k independent items).

    .venv/bin/python benchmarks/ablation_power.py [--alpha 0.05] [--power 0.8]
"""

from __future__ import annotations

import argparse

from compoworld_assets.engine.evaluation.stats import items_to_detect

RATES = (0.05, 0.10, 0.20, 0.30, 0.50)
DIFFERENCES = (0.05, 0.10)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--alpha", type=float, default=0.05, help="two-sided significance level")
    parser.add_argument("--power", type=float, default=0.8, help="chance of detecting a true difference")
    args = parser.parse_args(argv)
    print("| success of one arm | " + " | ".join(f"+{d:.2f}" for d in DIFFERENCES) + " |")
    print("|---|" + "---|" * len(DIFFERENCES))
    for rate in RATES:
        cells = [f"{items_to_detect(rate, rate + d, args.alpha, args.power):,}" for d in DIFFERENCES]
        print(f"| {rate:.2f} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
