"""A tiny job for the dispatch tests, standing in for a training script.

It opens a Pipes session, logs, and reports metadata: its argv, CUDA_VISIBLE_DEVICES, the
extras it received and whether it resumed from a checkpoint in $COMPOWORLD_RESUME_DIR.
Options make it sleep (after writing its Slurm job id or pid to --started-file), fail, or
fail only on the first attempt (after writing a checkpoint, as an interrupted trainer would).
"""

import argparse
import os
import sys
import time
from pathlib import Path

from dagster_pipes import open_dagster_pipes

CHECKPOINT = "checkpoint-1.txt"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sleep", type=float, default=0.0)
    parser.add_argument("--started-file")
    parser.add_argument("--fail", type=int, default=0, help="exit with this code")
    parser.add_argument("--fail-once", action="store_true", help="fail unless resuming from a checkpoint")
    args = parser.parse_args()
    with open_dagster_pipes() as pipes:
        pipes.log.info("pipes job started")
        if args.started_file:
            Path(args.started_file).write_text(os.environ.get("SLURM_JOB_ID", str(os.getpid())))
        time.sleep(args.sleep)
        resumed = False
        resume_dir = os.environ.get("COMPOWORLD_RESUME_DIR")
        if resume_dir:
            checkpoint = Path(resume_dir, CHECKPOINT)
            resumed = checkpoint.exists()
            if not resumed:
                checkpoint.write_text("step=1")
        if args.fail or (args.fail_once and not resumed):
            print("job-side failure marker: loss went NaN at step 7", file=sys.stderr, flush=True)
            return args.fail or 3
        pipes.report_asset_materialization(metadata={
            "argv": " ".join(sys.argv[1:]),
            "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES", ""),
            "resumed": resumed,
            "extras_seen": sorted(pipes.extras),
            "marker": pipes.get_extra("marker") if "marker" in pipes.extras else "",
        })
    return 0


if __name__ == "__main__":
    sys.exit(main())
