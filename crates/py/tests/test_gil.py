"""The GIL is released while a simulation runs: two simulations from two threads at once, and the
main thread keeps running meanwhile."""

from __future__ import annotations

import threading
import time

import smartsim


def long(seed: int) -> str:
    """40 periodic tasks and a CPU-bound one for 200 simulated seconds under SMART: long enough (0.75 s
    here) for a held GIL to show as a gap in the main thread's beats."""
    s = f'[machine]\nduration = "200s"\nhz = 1000\nseed = {seed}\n\n[scheduler]\npolicy = "smart"\n'
    for i in range(40):
        p = 10 + (i * 7) % 40
        s += f'\n[[task]]\nname = "T{i}"\nmodel = "periodic"\nexec = "{p * 0.015:.3f}ms..{p * 0.03:.3f}ms"\n'
        s += f'period = "{p}ms"\n'
    return s + '\n[[task]]\nname = "cpu"\nmodel = "cpu"\n'


def test_two_threads_simulate_at_once_and_the_main_thread_goes_on():
    alone = {1: smartsim.run(long(1)), 2: smartsim.run(long(2))}
    assert alone[1]["tasks"] != alone[2]["tasks"]
    results = {}
    spans = {}

    def work(seed: int) -> None:
        t0 = time.perf_counter()
        results[seed] = smartsim.run(long(seed))
        spans[seed] = (t0, time.perf_counter())

    threads = [threading.Thread(target=work, args=(seed,)) for seed in (1, 2)]
    beats = []
    for t in threads:
        t.start()
    while any(t.is_alive() for t in threads):
        beats.append(time.perf_counter())
        time.sleep(0.002)
    for t in threads:
        t.join()
    # Thread-safe: each the same results as alone.
    assert results == alone
    # Both runs were in Rust at the same time...
    start = max(s for s, _ in spans.values())
    end = min(e for _, e in spans.values())
    assert start < end
    # ...and the main thread beat all along: a GIL held through a run would stop it for the run.
    longest_run = max(e - s for s, e in spans.values())
    gaps = [b - a for a, b in zip(beats, beats[1:])]
    assert longest_run > 0.2, f"runs too short to tell ({longest_run:.3f} s)"
    assert len(beats) > 20 and max(gaps) < longest_run / 4, (max(gaps), longest_run)
