"""smartsim.sweep against `smartsim sweep`, on several executors."""

from __future__ import annotations

import subprocess
from concurrent.futures import Executor, Future, ThreadPoolExecutor

import pandas
import pytest

import smartsim
from conftest import SMALL, cli, cli_error, jsonl


class Serial(Executor):
    """Runs each task when it is submitted, in this process: the single-process sweep."""

    def __init__(self) -> None:
        self.submitted = 0

    def submit(self, fn, /, *args, **kwargs):  # type: ignore[override]
        self.submitted += 1
        f: Future = Future()
        f.set_result(fn(*args, **kwargs))
        return f


def test_sweep_rows_are_the_cli_rows(smartsim_bin, small):
    want = jsonl(cli(smartsim_bin, "sweep", small, "--set", "machine.hz=100,1000",
                     "--set", "scheduler.policy=smart,edf", "--seeds", "1..3", "--format", "jsonl"))
    assert len(want) == 2 * 2 * 3 * 3
    # Values given as the command line gives them (strings): the rows are the CLI's, exactly.
    got = smartsim.sweep(small, set={"machine.hz": ["100", "1000"], "scheduler.policy": ["smart", "edf"]},
                         seeds=[1, 2, 3])
    assert got == want
    # Values given as numbers come back as numbers; the runs are the same.
    typed = smartsim.sweep(small, set={"machine.hz": [100, 1000], "scheduler.policy": ["smart", "edf"]},
                           seeds=3)
    assert [r["machine.hz"] for r in typed] == [int(r["machine.hz"]) for r in want]
    assert [{**r, "machine.hz": str(r["machine.hz"])} for r in typed] == want
    # Seeds matter, and the rows go straight into a DataFrame.
    frame = pandas.DataFrame(typed)
    assert list(frame.columns[:4]) == ["machine.hz", "scheduler.policy", "seed", "task"]
    assert frame.groupby("seed")["response_max_ns"].max().nunique() > 1


def test_rows_are_in_the_same_order_on_any_executor(small):
    args = dict(set={"task.A.share": [1, 3], "machine.hz": [250]}, seeds=[5, 6])
    serial = Serial()
    one = smartsim.sweep(small, executor=serial, **args)
    assert serial.submitted == 4  # one task per (combination, seed)
    with ThreadPoolExecutor(4) as pool:
        threads = smartsim.sweep(small, executor=pool, **args)
    processes = smartsim.sweep(small, **args)  # the default process pool
    batched = Serial()
    assert smartsim.sweep(small, executor=batched, batch=3, **args) == one
    assert batched.submitted == 2  # 4 runs in tasks of 3 and 1
    assert one == threads == processes
    assert [(r["task.A.share"], r["seed"], r["task"]) for r in one][:4] == [
        (1, 5, "A"), (1, 5, "B"), (1, 5, "C"), (1, 6, "A")]


def test_a_sweep_without_keys_runs_the_file_under_its_seed(smartsim_bin, small):
    # The command line wants a key: set one to the file's own value, and leave it out of its rows.
    want = jsonl(cli(smartsim_bin, "sweep", small, "--set", "machine.hz=1000", "--format", "jsonl"))
    for r in want:
        del r["machine.hz"]
    assert [r["seed"] for r in want] == [1, 1, 1]
    assert smartsim.sweep(small, executor=Serial()) == want
    assert smartsim.sweep(SMALL, executor=Serial()) == want


def test_a_refused_combination_runs_nothing(small):
    serial = Serial()
    with pytest.raises(smartsim.ScenarioError) as e:
        smartsim.sweep(small, set={"machine.hz": [100, -5]}, seeds=[1], executor=serial)
    assert serial.submitted == 0
    assert (e.value.file, e.value.line, e.value.field) == (str(small), 3, "machine.hz")
    assert "with machine.hz=-5: the scenario refuses it" in str(e.value)


def test_an_error_in_a_worker_process_comes_back_with_its_fields(smartsim_bin, small):
    # A policy name is checked when the run builds it, so in the worker, as in `smartsim sweep`.
    with pytest.raises(smartsim.ScenarioError) as e:
        smartsim.sweep(small, set={"scheduler.policy": ["edf", "nope"]}, seeds=[1, 2])
    assert (e.value.file, e.value.line, e.value.field) == (str(small), 7, "scheduler.policy")
    done = cli_error(smartsim_bin, "sweep", small, "--set", "scheduler.policy=edf,nope", "--format", "jsonl")
    assert str(e.value) == done


def test_keys_that_cannot_be_set_and_too_many_runs(small):
    with pytest.raises(smartsim.SmartsimError, match='no \\[\\[task\\]\\] named "Z"'):
        smartsim.sweep(small, set={"task.Z.share": [1]}, executor=Serial())
    with pytest.raises(smartsim.SmartsimError, match="at most 100000"):
        smartsim.sweep(small, set={"machine.hz": list(range(100, 1100))}, seeds=101, executor=Serial())
    with pytest.raises(TypeError, match="machine.hz"):
        smartsim.sweep(small, set={"machine.hz": [None]}, executor=Serial())
    with pytest.raises(ValueError, match="batch"):
        smartsim.sweep(small, executor=Serial(), batch=0)


def test_a_sweep_past_its_walk_limit_marks_the_rows_of_the_runs_it_stopped(smartsim_bin, small):
    done = subprocess.run([str(smartsim_bin), "sweep", str(small), "--set", "scheduler.policy=smart,edf",
                           "--seeds", "2", "--walk-limit", "200", "--format", "jsonl"], capture_output=True, text=True)
    assert done.returncode == 3, done.stderr
    want = jsonl(done.stdout)
    with pytest.warns(smartsim.ScenarioWarning, match=r"2 of 4 runs stopped partway, .*walk_limit=200"):
        got = smartsim.sweep(small, set={"scheduler.policy": ["smart", "edf"]}, seeds=2, walk_limit=200,
                             executor=Serial())
    assert got == want
    # SMART's runs walk their tasks and stop; EDF's walk none and go to their end.
    assert {r["scheduler.policy"] for r in got if r.get("partial")} == {"smart"}
    assert all(r["partial"]["reason"] == "over_budget" for r in got if r["scheduler.policy"] == "smart")
    # Runs given twice are counted twice.
    with pytest.warns(smartsim.ScenarioWarning, match=r"^2 of 2 runs stopped partway"):
        twice = smartsim.sweep(small, set={"scheduler.policy": "smart"}, seeds=[1, 1], walk_limit=200,
                               executor=Serial(), batch=2)
    assert len(twice) == 6 and twice[:3] == twice[3:]
