"""Wall time, busy CPU and peak memory of one whole ``compoworld run`` (import through the datasets), and each step's.

Runs ``compoworld run --data-dir DIR --round ROUND`` as users do (one process; the jobs' steps in it), samples its
process tree for the peak (``peak_memory.py``), reads the machine's busy CPU time from ``/proc/stat`` before and
after, then prints every step of the runs it made with its time, from the Dagster instance in ``$DAGSTER_HOME``
(the one the command recorded them in). Use an empty data folder for a fresh run; spec folders beyond the
built-in library come from ``COMPOWORLD_SPEC_DIR``, as for the run itself.

    COMPOWORLD_SPEC_DIR=specs DAGSTER_HOME=$PWD/.bench_home .venv/bin/python benchmarks/whole_run.py \
        --data-dir /tmp/fresh/data --round r906 [--interval-s 5]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))  # the benchmarks folder: peak_memory

from peak_memory import PeakMemory


def busy_core_seconds() -> float:
    """Busy CPU time of the whole machine so far (user, nice and system; ``/proc/stat``)."""
    with open("/proc/stat") as stat:
        fields = stat.readline().split()
    return sum(int(value) for value in fields[1:4]) / os.sysconf("SC_CLK_TCK")


def step_times(since: float) -> list[tuple[str, str, float]]:
    """(job, step, seconds) of every step of the runs started after ``since`` (a timestamp), in start order."""
    import dagster as dg

    steps = []
    with dg.DagsterInstance.get() as instance:
        runs = [run for run in instance.get_run_records() if run.create_timestamp.timestamp() >= since]
        for record in sorted(runs, key=lambda record: record.create_timestamp):
            for stat in instance.get_run_step_stats(record.dagster_run.run_id):
                if stat.start_time is not None and stat.end_time is not None:
                    steps.append((stat.start_time, record.dagster_run.job_name, stat.step_key,
                                  stat.end_time - stat.start_time))
    return [(job, step, seconds) for _, job, step, seconds in sorted(steps)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--round", default="r000")
    parser.add_argument("--interval-s", type=float, default=5.0,
                        help="seconds between samples of the process tree (each read costs: see stage_memory.py)")
    args = parser.parse_args()
    env = dict(os.environ, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"))
    command = [str(Path(sys.executable).parent / "compoworld"), "run", "--data-dir", args.data_dir,
               "--round", args.round]
    since, busy = time.time(), busy_core_seconds()
    started = time.perf_counter()
    with PeakMemory(args.interval_s) as peak:
        code = subprocess.call(command, cwd=REPO_ROOT, env=env, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    busy = busy_core_seconds() - busy
    print(f"compoworld run rc {code}  wall {wall:.1f} s ({wall / 60:.1f} min)  busy {busy:,.0f} core-s  "
          f"{peak.summary()}", flush=True)
    for job, step, seconds in step_times(since):
        print(f"  {job:<26} {step:<52} {seconds:7.1f} s")
    sys.exit(code)


if __name__ == "__main__":
    main()
