#!/usr/bin/env python3
"""Ray against Dask as smartsim.sweep's executor, side by side in one run: import time, local cluster
start-up, and the overhead per task of a 1000-task sweep of a tiny scenario (each run about 0.1 ms, so
the time is the framework's). Needs `ray` and `dask[distributed]` importable (README.md, "Python",
says what was measured and how ray was installed).

    python bench/python/ray_vs_dask.py [--tasks 1000] [--workers 2]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from concurrent.futures import Executor, Future

import smartsim

TINY = """\
[machine]
duration = "20ms"
hz = 1000

[[task]]
name = "A"
model = "periodic"
exec = "1ms..2ms"
period = "5ms"

[[task]]
name = "B"
model = "cpu"
"""


class Serial(Executor):
    """Each task run when submitted, in this process: the runs' own cost."""

    def submit(self, fn, /, *args, **kwargs):  # type: ignore[override]
        f: Future = Future()
        f.set_result(fn(*args, **kwargs))
        return f


def import_seconds(module: str) -> float:
    """Wall time of `python -c 'import MODULE'` in a fresh interpreter, best of 3."""
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", f"import {module}"], check=True)
        best = min(best, time.perf_counter() - t)
    return best


def sweep_seconds(executor: Executor, tasks: int) -> tuple[float, list]:
    t = time.perf_counter()
    rows = smartsim.sweep(TINY, seeds=tasks, executor=executor)
    return time.perf_counter() - t, rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", type=int, default=1000)
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args()
    out = {}

    serial_s, want = sweep_seconds(Serial(), a.tasks)
    print(f"{a.tasks} runs in this process, one after another: {serial_s:.2f} s ({serial_s / a.tasks * 1e3:.3f} ms a run)")

    # Dask
    out["dask import"] = import_seconds("distributed")
    import distributed

    t = time.perf_counter()
    cluster = distributed.LocalCluster(n_workers=a.workers, threads_per_worker=1, processes=True,
                                       dashboard_address=None)
    client = distributed.Client(cluster)
    out["dask start"] = time.perf_counter() - t
    sweep_seconds(client.get_executor(), 20)  # warm: the workers import smartsim once
    out["dask sweep"], rows = sweep_seconds(client.get_executor(), a.tasks)
    assert rows == want, "Dask's rows differ from the single process's"
    t = time.perf_counter()
    client.close()
    cluster.close()
    out["dask stop"] = time.perf_counter() - t

    # Ray
    out["ray import"] = import_seconds("ray")
    import ray

    t = time.perf_counter()
    ray.init(num_cpus=a.workers, include_dashboard=False, log_to_driver=False)
    out["ray start"] = time.perf_counter() - t

    @ray.remote
    def task(fn, *args):
        return fn(*args)

    class RayExecutor(Executor):
        """submit() as a Ray task; ObjectRef.future() is a concurrent.futures.Future."""

        def submit(self, fn, /, *args, **kwargs):  # type: ignore[override]
            return task.remote(fn, *args).future()

    sweep_seconds(RayExecutor(), 20)
    out["ray sweep"], rows = sweep_seconds(RayExecutor(), a.tasks)
    assert rows == want, "Ray's rows differ from the single process's"
    t = time.perf_counter()
    ray.shutdown()
    out["ray stop"] = time.perf_counter() - t

    print(f"{'':22}{'Dask':>10}{'Ray':>10}")
    print(f"{'import (s)':22}{out['dask import']:10.2f}{out['ray import']:10.2f}")
    print(f"{'local cluster up (s)':22}{out['dask start']:10.2f}{out['ray start']:10.2f}")
    print(f"{f'{a.tasks}-task sweep (s)':22}{out['dask sweep']:10.2f}{out['ray sweep']:10.2f}")
    per = lambda s: (s - serial_s / a.workers) / a.tasks * 1e3  # noqa: E731
    print(f"{'overhead a task (ms)':22}{per(out['dask sweep']):10.3f}{per(out['ray sweep']):10.3f}")
    print(f"{'shut down (s)':22}{out['dask stop']:10.2f}{out['ray stop']:10.2f}")
    print(f"({a.workers} worker processes each; rows identical to the single process's on both)")


if __name__ == "__main__":
    main()
