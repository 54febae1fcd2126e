"""smartsim.taskset, against `smartsim taskset`'s generators."""

from __future__ import annotations

import subprocess

import pytest

import smartsim


def test_taskset_is_the_cli_set(smartsim_bin):
    # The same options and seed draw the same set as the command line; only the comment lines differ.
    text = smartsim.taskset(8, 0.7, seed=5, period_min="10ms", period_max="100ms", granularity="1ms")
    cli = subprocess.run(
        [str(smartsim_bin), "taskset", "--tasks", "8", "--utilisation", "0.7", "--seed", "5",
         "--granularity", "1ms"],
        check=True, capture_output=True, text=True,
    ).stdout
    body = lambda t: [line for line in t.splitlines() if not line.startswith("#")]  # noqa: E731
    assert body(text) == body(cli)


def test_taskset_runs_and_edf_meets_every_deadline_below_one():
    # Liu and Layland: EDF on one CPU meets every implicit deadline at U <= 1.
    for seed in range(20):
        text, tasks = smartsim.taskset(10, 0.95, seed=seed, with_tasks=True)
        assert len(tasks) == 10 and abs(sum(t["utilisation"] for t in tasks) - 0.95) < 1e-9
        r = smartsim.run(text)
        assert all(t["deadlines"]["missed"] == 0 for t in r["tasks"]), seed
        assert sum(t["deadlines"]["requests"] for t in r["tasks"]) > 0


def test_taskset_gives_fixed_priority_policies_rate_monotonic_priorities():
    text, tasks = smartsim.taskset(5, 0.5, policy="fifo", periods="harmonic", with_tasks=True)
    assert "priority = " in text
    by_period = sorted(tasks, key=lambda t: (t["period"], t["name"]))
    assert [t["priority"] for t in by_period] == [5, 4, 3, 2, 1]
    assert "priority = " not in smartsim.taskset(5, 0.5, policy="edf")


@pytest.mark.parametrize(
    "kwargs, field",
    [
        ({"utilisation": 0.0}, "utilisation"),
        ({"utilisation": 2.0}, "utilisation"),
        ({"tasks": 0}, "tasks"),
        ({"period_min": "100ms", "period_max": "10ms"}, "period_max"),
        ({"generator": "uniform"}, "generator"),
        ({"periods": "geometric"}, "periods"),
        ({"policy": "nope"}, "policy"),
    ],
)
def test_taskset_errors_name_the_argument(kwargs, field):
    with pytest.raises(smartsim.TasksetError) as e:
        smartsim.taskset(**kwargs)
    assert e.value.field == field and field in str(e.value)
    assert isinstance(e.value, ValueError)


def test_taskset_time_arguments_are_checked():
    with pytest.raises(TypeError, match="period_min"):
        smartsim.taskset(period_min="ten")
