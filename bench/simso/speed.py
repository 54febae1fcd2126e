"""Speed of smartsim against SimSo 0.8.5 (Chéramy et al.) on one task set, measured side by side in one run.

One set of 100 periodic tasks on one CPU (UUniFast-discard, total utilisation 0.9, periods log-uniform in
[10, 100] ms in whole ms, implicit deadlines, execution times in whole µs: the sets of check.py), simulated
for the same horizon by both. SimSo runs its own loop in this process (Model.run_model, after the model is
built: the most favourable measure for SimSo); smartsim runs as a whole process, start-up, parsing and output
included (`smartsim run FILE --policy P --format json`), once per policy of its registry. Each is run
--repeat times, in rounds (SimSo, then every policy, once per round), and the median wall time is used;
jobs are the jobs released within the horizon (SimSo's task.jobs, smartsim's system.jobs). Prints a table (or
--json) with each policy's jobs per second and its ratio to SimSo's.

Usage: python speed.py --smartsim PATH [--horizon-ms H] [--repeat R] [--seed S] [--policies a,b] [--json]
(scripts/simso-speed creates SimSo's virtual environment and builds smartsim first).
"""

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check import run_simso, scenario, uunifast_discard  # noqa: E402

TASKS = 100
UTILISATION = 0.9


def task_set(rng):
    """[(period_us, exec_us)]: 100 tasks, total utilisation 0.9, periods log-uniform in whole ms."""
    import math

    out = []
    for u in uunifast_discard(rng, TASKS, UTILISATION):
        period = round(math.exp(rng.uniform(math.log(10), math.log(100)))) * 1000
        out.append((period, max(1, min(period, round(u * period)))))
    return out


def simso_once(tasks, horizon_us):
    t0 = time.perf_counter()
    jobs = run_simso(tasks, 1, "EDF_mono", False, horizon_us)
    return time.perf_counter() - t0, len(jobs)


def smartsim_once(binary, path, policy):
    t0 = time.perf_counter()
    r = subprocess.run([binary, "run", path, "--policy", policy, "--format", "json"],
                       capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if r.returncode != 0:
        return None, r.stderr.strip().splitlines()[-1] if r.stderr.strip() else f"exit {r.returncode}"
    return wall, json.loads(r.stdout)["system"]["jobs"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--smartsim", required=True, help="the smartsim binary")
    ap.add_argument("--horizon-ms", type=int, default=10_000, help="simulated ms (default 10000)")
    ap.add_argument("--repeat", type=int, default=3,
                    help="rounds, each running SimSo and every policy once; median wall time (default 3)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--policies", help="comma-separated (default: every policy of `smartsim policies`)")
    ap.add_argument("--json", action="store_true", help="one JSON object per line instead of a table")
    a = ap.parse_args()
    if not 1 <= a.horizon_ms <= 600_000:
        ap.error("--horizon-ms: 1 to 600000")
    if not 1 <= a.repeat <= 100:
        ap.error("--repeat: 1 to 100")
    tasks = task_set(random.Random(a.seed))
    horizon_us = a.horizon_ms * 1000
    if a.policies:
        policies = a.policies.split(",")
        if len(set(policies)) != len(policies):
            ap.error("--policies: a policy given twice")
    else:
        out = subprocess.run([a.smartsim, "policies", "--format", "json"], check=True, capture_output=True,
                             text=True).stdout
        policies = [p["name"] for p in json.loads(out)]

    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "set.toml")
        with open(path, "w") as f:
            f.write(scenario(tasks, 1, "EDF_mono", False, horizon_us))
        # In rounds, SimSo then each policy once per round, so that a slow spell of the machine during
        # the measurement (common on shared machines) does not fall on one simulator's runs alone.
        runs, walls, jobs, errs = [], {p: [] for p in policies}, {}, {}
        for _ in range(a.repeat):
            runs.append(simso_once(tasks, horizon_us))
            for p in policies:
                if p in errs:
                    continue
                w, j = smartsim_once(a.smartsim, path, p)
                if w is None:
                    errs[p] = j
                    continue
                walls[p].append(w)
                jobs[p] = j
    simso_wall = statistics.median(w for w, _ in runs)
    simso_jobs = runs[0][1]
    simso_rate = simso_jobs / simso_wall
    rows = [{"simulator": "simso 0.8.5 (EDF_mono, in-process loop)", "policy": "EDF_mono", "jobs": simso_jobs,
             "wall_s": simso_wall, "wall_s_min": min(w for w, _ in runs), "wall_s_max": max(w for w, _ in runs),
             "jobs_per_s": simso_rate, "ratio": 1.0}]
    for p in policies:
        if p in errs:
            rows.append({"simulator": "smartsim (whole process)", "policy": p, "error": errs[p]})
            continue
        wall = statistics.median(walls[p])
        rows.append({"simulator": "smartsim (whole process)", "policy": p, "jobs": jobs[p], "wall_s": wall,
                     "wall_s_min": min(walls[p]), "wall_s_max": max(walls[p]), "jobs_per_s": jobs[p] / wall,
                     "ratio": jobs[p] / wall / simso_rate})
    if a.json:
        for r in rows:
            print(json.dumps(r))
        return
    print(f"{TASKS} periodic tasks, utilisation {UTILISATION}, one CPU, {a.horizon_ms} simulated ms, seed {a.seed}; "
          f"median of {a.repeat} runs, measured in this run")
    print(f"{'simulator':42} {'policy':10} {'jobs':>8} {'wall s':>9} {'jobs/s':>11} {'× SimSo':>9}")
    for r in rows:
        if "error" in r:
            print(f"{r['simulator']:42} {r['policy']:10} {'-':>8} {'-':>9} {'-':>11} {'-':>9}  ({r['error']})")
            continue
        print(f"{r['simulator']:42} {r['policy']:10} {r['jobs']:>8} {r['wall_s']:>9.4f} {r['jobs_per_s']:>11.0f} "
              f"{r['ratio']:>9.0f}")
    ok = [r for r in rows[1:] if "error" not in r]
    if ok:
        low = min(ok, key=lambda r: r["ratio"])
        print(f"slowest policy against SimSo: {low['policy']} {low['ratio']:.0f}× (goal: at least 1000×)")


if __name__ == "__main__":
    main()
