#!/usr/bin/env python3
"""A 10,000-run sweep of a scenario on Dask: 10 values of HZ x 5 policies x 200 seeds, one Dask
task per run, the rows into a pandas DataFrame, a summary printed.

    python examples/python/dask_sweep.py                      # a LocalCluster on this machine
    python examples/python/dask_sweep.py tcp://HOST:8786      # an existing Dask scheduler
    python examples/python/dask_sweep.py --workers 4 --seeds 20 --out rows.csv
    python examples/python/dask_sweep.py --batch 50           # 50 runs per Dask task

On a SLURM cluster, start the workers with dask-jobqueue instead of a LocalCluster (README.md,
"Python"); the sweep itself is the same call.
"""

from __future__ import annotations

import argparse
import pathlib
import time

import distributed
import pandas

import smartsim

# Timers fire on the next tick and the CPU is billed by the tick, so HZ matters (README.md, "The clock is
# part of the scheduler").
SCENARIO = """\
[machine]
duration = "2s"
hz = 1000
timer = "tick"
billing = "tick"
seed = 1

[scheduler]
policy = "smart"

[[task]]
name = "video"
model = "periodic"
exec = "8ms..12ms"
period = "33ms"
share = 2

[[task]]
name = "audio"
model = "periodic"
exec = "1ms..3ms"
period = "10ms"
deadline = "5ms"

[[task]]
name = "batch"
model = "cpu"
"""

HZ = [100, 200, 250, 300, 500, 600, 800, 1000, 1200, 2000]
POLICIES = ["smart", "edf", "wfq", "rr", "ts"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("scheduler", nargs="?", help="a Dask scheduler's address (default: start a LocalCluster)")
    ap.add_argument("--workers", type=int, default=None, help="LocalCluster worker processes (default: one per core)")
    ap.add_argument("--seeds", type=int, default=200, help="seeds 1..N per combination (default 200: 10,000 runs)")
    ap.add_argument("--scenario", type=pathlib.Path, help="a scenario file instead of the built-in one")
    ap.add_argument("--batch", type=int, default=1,
                    help="runs per Dask task (default 1; 20 to 100 for runs this short, see docs/python.md)")
    ap.add_argument("--out", type=pathlib.Path, help="also write the rows here as CSV")
    a = ap.parse_args()

    t0 = time.perf_counter()
    if a.scheduler:
        client = distributed.Client(a.scheduler)
        cluster = None
    else:
        cluster = distributed.LocalCluster(n_workers=a.workers, threads_per_worker=1, processes=True,
                                           dashboard_address=None)
        client = distributed.Client(cluster)
    workers = len(client.scheduler_info()["workers"])
    t1 = time.perf_counter()
    scenario = a.scenario if a.scenario else SCENARIO
    rows = smartsim.sweep(scenario, set={"machine.hz": HZ, "scheduler.policy": POLICIES},
                          seeds=a.seeds, executor=client.get_executor(), batch=a.batch)
    t2 = time.perf_counter()
    client.close()
    if cluster is not None:
        cluster.close()

    runs = len(HZ) * len(POLICIES) * a.seeds
    frame = pandas.DataFrame(rows)
    if a.out:
        frame.to_csv(a.out, index=False)
    summary = (frame.assign(missed_ratio=frame["missed"] / (frame["met"] + frame["missed"]))
               .groupby(["scheduler.policy", "machine.hz"])["missed_ratio"].mean().unstack())
    print(f"{runs} runs in tasks of {a.batch}, {len(frame)} rows on {workers} Dask workers: cluster up in "
          f"{t1 - t0:.1f} s, sweep {t2 - t1:.1f} s ({runs / (t2 - t1):.0f} runs/s)")
    print("mean ratio of missed deadlines (periodic tasks), by policy and HZ:")
    print(summary.round(4).to_string())


if __name__ == "__main__":
    main()
