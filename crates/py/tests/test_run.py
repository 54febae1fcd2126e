"""smartsim.run, smartsim.policies and the errors, against the command line."""

from __future__ import annotations

import io
import json
import pathlib
import pickle
import subprocess

import pandas
import pytest

import smartsim
from conftest import SMALL, cli, cli_error


def test_run_from_a_path_is_the_cli_json(smartsim_bin, small):
    want = json.loads(cli(smartsim_bin, "run", small, "--format", "json"))
    assert smartsim.run(str(small)) == want
    assert smartsim.run(small) == want  # a pathlib.Path
    assert want["tool"] == "smartsim" and [t["name"] for t in want["tasks"]] == ["A", "B", "C"]


def test_run_with_another_policy_is_the_cli_json(smartsim_bin, small):
    want = json.loads(cli(smartsim_bin, "run", small, "--policy", "edf", "--format", "json"))
    got = smartsim.run(small, policy="edf")
    assert got == want and got["policy"] != smartsim.run(small)["policy"]


def test_run_from_a_string_and_a_dict(small):
    from_file = smartsim.run(small)
    from_text = smartsim.run(SMALL)
    d = {
        "machine": {"duration": "2s", "hz": 1000, "seed": 1},
        "scheduler": {"policy": "smart"},
        "task": [
            {"name": "A", "model": "periodic", "exec": "8ms..12ms", "period": "40ms", "share": 2},
            {"name": "B", "model": "periodic", "exec": "15ms..25ms", "period": "50ms"},
            {"name": "C", "model": "cpu"},
        ],
    }
    from_dict = smartsim.run(d)
    # The scenario's name is its file's stem; the figures are the same.
    for r in (from_text, from_dict):
        assert r["tasks"] == from_file["tasks"]
        assert r["system"] == from_file["system"]
    other_seed = smartsim.run({**d, "machine": {**d["machine"], "seed": 2}})
    assert other_seed["tasks"] != from_dict["tasks"]


def test_jobs_are_the_cli_jobs_rows(smartsim_bin, small, tmp_path):
    jobs_csv = tmp_path / "jobs.csv"
    want_json = json.loads(cli(smartsim_bin, "run", small, "--format", "json", "--jobs", jobs_csv))
    result, jobs = smartsim.run(small, jobs=True)
    assert result == want_json
    assert isinstance(jobs, pandas.DataFrame)
    want = pandas.read_csv(jobs_csv, dtype={c: "Int64" for c in ("cpu", "start_ns", "finish_ns")})
    assert list(jobs.columns) == list(want.columns) == list(smartsim.JOB_COLUMNS)
    assert len(jobs) > 50 and set(jobs["task"]) == {"A", "B"}
    pandas.testing.assert_frame_equal(jobs, want, check_dtype=False)
    # Every outcome word is one of the contract's.
    assert set(jobs["outcome"]) <= {"met", "late", "discarded", "aborted", "unfinished"}


def test_policies_are_the_cli_registry(smartsim_bin):
    want = json.loads(cli(smartsim_bin, "policies", "--format", "json"))
    got = smartsim.policies()
    assert got == want
    assert {"smart", "edf"} <= {p["name"] for p in got}


def test_a_bad_field_raises_with_file_line_and_field(smartsim_bin, tmp_path):
    bad = SMALL.replace('duration = "2s"', 'duration = "2 parsecs"')
    f = tmp_path / "bad.toml"
    f.write_text(bad)
    with pytest.raises(smartsim.ScenarioError) as e:
        smartsim.run(f)
    err = e.value
    assert isinstance(err, ValueError) and isinstance(err, smartsim.SmartsimError)
    assert (err.file, err.line, err.field) == (str(f), 2, "machine.duration")
    assert err.column >= 1 and "2 parsecs" in err.message
    # The message is the command line's, word for word.
    assert str(err) == cli_error(smartsim_bin, "run", f)
    # The same from text: the file is "<string>".
    with pytest.raises(smartsim.ScenarioError) as e:
        smartsim.run(bad)
    assert (e.value.file, e.value.line, e.value.field) == ("<string>", 2, "machine.duration")


def test_every_problem_is_listed(tmp_path):
    bad = SMALL.replace('hz = 1000', 'hz = -3').replace('period = "50ms"', 'period = "-1ms"')
    with pytest.raises(smartsim.ScenarioError) as e:
        smartsim.run(bad)
    lines = [d["line"] for d in e.value.diagnostics]
    assert len(lines) >= 2 and lines == sorted(lines)
    assert e.value.line == lines[0] == 3 and e.value.field == "machine.hz"


def test_a_toml_syntax_error_and_a_missing_file():
    with pytest.raises(smartsim.ScenarioError) as e:
        smartsim.run("[machine\nduration = 1")
    assert e.value.file == "<string>" and e.value.line == 1 and e.value.field == ""
    with pytest.raises(smartsim.ScenarioError) as e:
        smartsim.run("no/such/scenario.toml")
    assert (e.value.file, e.value.line) == ("no/such/scenario.toml", 0)
    assert "cannot read the scenario" in e.value.message


def test_an_unknown_policy_points_at_its_line(smartsim_bin, tmp_path):
    f = tmp_path / "p.toml"
    f.write_text(SMALL.replace('policy = "smart"', 'policy = "nope"'))
    with pytest.raises(smartsim.ScenarioError) as e:
        smartsim.run(f)
    assert (e.value.file, e.value.line, e.value.field) == (str(f), 7, "scheduler.policy")
    assert str(e.value) == cli_error(smartsim_bin, "run", f)
    # Given as an argument, it is no line of the scenario's.
    with pytest.raises(smartsim.SmartsimError) as e2:
        smartsim.run(SMALL, policy="nope")
    assert not isinstance(e2.value, smartsim.ScenarioError) and "nope" in str(e2.value)


def test_a_scenario_error_pickles_with_its_fields():
    with pytest.raises(smartsim.ScenarioError) as e:
        smartsim.run(SMALL.replace('hz = 1000', 'hz = -3'))
    back = pickle.loads(pickle.dumps(e.value))
    assert (back.file, back.line, back.field, back.message, str(back)) == (
        e.value.file, e.value.line, e.value.field, e.value.message, str(e.value))


def test_a_dict_with_what_toml_cannot_hold():
    with pytest.raises(TypeError, match="machine.seed: None"):
        smartsim.run({"machine": {"duration": "1s", "seed": None}})
    with pytest.raises(TypeError, match=r"task\[0\].name: a object"):
        smartsim.run({"machine": {"duration": "1s"}, "task": [{"name": object()}]})
    with pytest.raises(TypeError, match="scenario: a path"):
        smartsim.run(42)  # type: ignore[arg-type]


def test_every_public_function_has_a_docstring():
    for name in smartsim.__all__:
        obj = getattr(smartsim, name)
        if callable(obj):
            assert obj.__doc__ and len(obj.__doc__) > 40, name


def test_a_run_past_its_walk_limit_stops_partial_as_the_cli_and_warns(smartsim_bin, small):
    done = subprocess.run([str(smartsim_bin), "run", str(small), "--walk-limit", "200", "--format", "json"],
                          capture_output=True, text=True)
    assert done.returncode == 3, done.stderr
    want = json.loads(done.stdout)
    assert want["partial"]["reason"] == "over_budget"
    assert 0 < want["partial"]["simulated_ns"] < want["partial"]["scenario_duration_ns"]
    with pytest.warns(smartsim.ScenarioWarning, match=r"over_budget at .*walk_limit=200"):
        got = smartsim.run(small, walk_limit=200)
    assert got == want
    # It holds under force too; without it, the run goes to its end, silently.
    with pytest.warns(smartsim.ScenarioWarning, match="over_budget"):
        assert smartsim.run(small, walk_limit=200, force=True) == want
    whole = smartsim.run(small)
    assert "partial" not in whole and whole["duration_ns"] == 2_000_000_000


@pytest.mark.parametrize("bad,error", [(0, ValueError), (-1, ValueError), (10**18 + 1, ValueError),
                                       (2.5, ValueError), (float("inf"), ValueError), (float("nan"), ValueError),
                                       ("5e10", TypeError), (True, TypeError), ([5], TypeError)])
def test_a_walk_limit_out_of_range_raises(small, bad, error):
    with pytest.raises(error, match="walk_limit"):
        smartsim.run(small, walk_limit=bad)
    with pytest.raises(error, match="walk_limit"):
        smartsim.sweep(small, set={"machine.hz": [100]}, walk_limit=bad)


def test_a_walk_limit_at_its_bounds_and_of_any_integer_kind_is_taken(small):
    import numpy

    whole = smartsim.run(small)
    for n in [10**18, 1e18, numpy.int64(10**18), 2e8]:
        assert smartsim.run(small, walk_limit=n) == whole, n
    with pytest.warns(smartsim.ScenarioWarning, match="walk_limit=1\\b"):
        one = smartsim.run(small, walk_limit=1)
    assert one["partial"]["reason"] == "over_budget"
    # The native layer checks the range too (an executor's task calls it directly).
    with pytest.raises(smartsim.SmartsimError, match="from 1 to 1e18"):
        smartsim._smartsim.run(SMALL, "small.toml", None, False, False, 0)
