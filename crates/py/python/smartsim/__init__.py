"""smartsim from Python: SMART (Nieh 1999) and baseline CPU schedulers in a deterministic
discrete-event simulator, the same one as the ``smartsim`` command line (docs/python.md).

- :func:`run` runs a scenario (a path, a TOML string or a dict) and returns the JSON of
  ``smartsim run --format json`` as a dict; with ``jobs=True`` also the per-job rows as a
  pandas DataFrame.
- :func:`sweep` runs a scenario over a grid of keys and seeds (``smartsim sweep``), one task per
  run on any ``concurrent.futures.Executor``: a process pool by default, a Dask cluster with
  ``distributed.Client(...).get_executor()``.
- :func:`policies` lists the policies and their options (``smartsim policies --format json``).
- A scenario smartsim refuses raises :class:`ScenarioError` with its file, line, column and field.

The same scenario and seed give the same results, in any process, on any machine.
"""

from __future__ import annotations

import math
import operator
import os
import warnings
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Literal, Mapping, Optional, Sequence, Tuple, Union, overload

from . import _smartsim
from .errors import ScenarioError, ScenarioWarning, SmartsimError, TasksetError

if TYPE_CHECKING:
    import pandas

__all__ = [
    "run",
    "sweep",
    "policies",
    "taskset",
    "ScenarioError",
    "TasksetError",
    "ScenarioWarning",
    "SmartsimError",
    "MAX_RUNS",
    "JOB_COLUMNS",
    "__version__",
]

__version__: str = _smartsim.__version__

#: Most runs a sweep makes (combinations × seeds), as ``smartsim sweep``.
MAX_RUNS: int = _smartsim.MAX_RUNS

#: The columns of :func:`run`'s per-job DataFrame, in the order of ``smartsim run --jobs``'s CSV.
JOB_COLUMNS: Tuple[str, ...] = tuple(_smartsim.JOB_COLUMNS)

#: A scenario: a path (``str`` or ``os.PathLike``) to a ``.toml`` file, TOML text, or a dict of
#: the same tables and keys (``{"machine": {...}, "scheduler": {...}, "task": [{...}, ...]}``).
Scenario = Union[str, "os.PathLike[str]", Mapping[str, Any]]

# The nullable columns of the job rows (empty where a request never ran or never finished).
_NULLABLE_INT = ("cpu", "start_ns", "finish_ns")


def _source(scenario: Scenario) -> Tuple[Optional[str], str]:
    """``(text, name)``: the scenario's TOML text (``None`` for a file, read by the Rust side) and
    the name its errors give as ``file``."""
    if isinstance(scenario, os.PathLike):
        return None, os.fspath(scenario)
    if isinstance(scenario, Mapping):
        return _smartsim.toml_from_dict(dict(scenario)), "<dict>"
    if isinstance(scenario, str):
        # A scenario needs several keys, so its text has a line break or at least an `=`; a path
        # with `=` in its name can be given as a pathlib.Path.
        if "\n" in scenario or "=" in scenario:
            return scenario, "<string>"
        return None, scenario
    raise TypeError(
        f"scenario: a path (str or pathlib.Path), TOML text or a dict, not {type(scenario).__name__}"
    )


def _warn(messages: Iterable[str]) -> None:
    for m in messages:
        warnings.warn(m, ScenarioWarning, stacklevel=3)


@overload
def run(
    scenario: Scenario,
    *,
    policy: Optional[str] = ...,
    jobs: Literal[False] = ...,
    force: bool = ...,
    walk_limit: Optional[int] = ...,
) -> Dict[str, Any]: ...
@overload
def run(
    scenario: Scenario,
    *,
    policy: Optional[str] = ...,
    jobs: Literal[True],
    force: bool = ...,
    walk_limit: Optional[int] = ...,
) -> Tuple[Dict[str, Any], pandas.DataFrame]: ...


def _walk_limit(n: Any) -> Optional[int]:
    """``walk_limit`` checked: ``None``, or a whole number from 1 to 10**18 (as ``--walk-limit``):
    an integer of any kind (``numpy.int64`` too) or a float that is one (``2e6``)."""
    if n is None:
        return None
    if isinstance(n, bool):
        raise TypeError(f"walk_limit: {n!r}: give a whole number of tasks, or None")
    if isinstance(n, float):
        if not (math.isfinite(n) and n.is_integer()):
            raise ValueError(f"walk_limit: {n!r}: give a whole number of tasks from 1 to 10**18, or None")
        n = int(n)
    try:
        k = operator.index(n)
    except TypeError:
        raise TypeError(f"walk_limit: {n!r} is a {type(n).__name__}; give a whole number of tasks, or None") from None
    if not 1 <= k <= _smartsim.MAX_WALK_LIMIT:
        raise ValueError(f"walk_limit: {n!r}: give a whole number of tasks from 1 to 10**18, or None")
    return k


def run(
    scenario: Scenario,
    *,
    policy: Optional[str] = None,
    jobs: bool = False,
    force: bool = False,
    walk_limit: Optional[int] = None,
) -> Union[Dict[str, Any], Tuple[Dict[str, Any], pandas.DataFrame]]:
    """Run one scenario and return its results.

    Args:
        scenario: a path (``str`` or ``pathlib.Path``) to a scenario file, the TOML text of a
            scenario (a ``str`` with a line break or an ``=``), or a dict of its tables (written
            as TOML, then read as any scenario). Files a scenario names (``include``,
            ``file(...)``) are found relative to the file's directory, or to the current directory
            for text and dicts.
        policy: run under this policy instead of the scenario's own (see :func:`policies`); the
            scenario's ``[scheduler]`` options apply only to its own policy.
        jobs: also return the per-job rows (one per request of a periodic task).
        force: run even if the estimate made before the run is over a limit (2e9 events, 2 GiB of
            memory, 10 GB of output, 5e13 tasks walked at worst; a warning says so), and past the
            tasks a policy whose decisions walk its tasks (smart; lottery and linux-2.4 with CPU
            affinities) may walk as it runs (5e10, minutes; without ``force`` the run stops there, its result marked
            ``partial`` with the reason ``over_budget``, and a warning says so).
        walk_limit: stop the run there instead, past this many tasks walked (``smartsim run
            --walk-limit``; it holds with ``force`` too): 1 to 10**18, or ``None`` for the default.

    Returns:
        The run's JSON object as ``smartsim run FILE --format json`` prints it (the output
        contract: ``tool``, ``policy``, ``tasks`` with each task's CPU share, deadlines and
        latencies, ``system``, ...), as a dict. With ``jobs=True``, a tuple ``(result, jobs)``
        where ``jobs`` is a pandas DataFrame with the columns of ``smartsim run --jobs``
        (:data:`JOB_COLUMNS`: task, job, cpu, release_ns, start_ns, finish_ns, deadline_ns,
        exec_ns, outcome, preemptions; ``cpu``, ``start_ns`` and ``finish_ns`` are nullable
        integers, missing where a request never ran or never finished).

    Raises:
        ScenarioError: the scenario is refused (its ``file``, ``line``, ``column``, ``field``
            and ``message`` say where and why), or the policy cannot run it.
        SmartsimError: the estimate made before the run is over a limit (and ``force`` is not
            set; a run that walks past its limit as it goes returns, partial), or an unknown
            ``policy`` was given.
        TypeError: ``scenario`` is none of the above, or a dict holds a value TOML cannot hold
            (``None``, an object).
        ValueError, TypeError: ``walk_limit`` is not a whole number from 1 to 10**18.

    The simulation runs with the GIL released: other Python threads go on meanwhile.
    """
    limit = _walk_limit(walk_limit)
    text, name = _source(scenario)
    result, columns, warns = _smartsim.run(text, name, policy, jobs, force, limit)
    _warn(warns)
    if not jobs:
        return result
    import pandas

    frame = pandas.DataFrame(columns, columns=list(JOB_COLUMNS))
    for c in _NULLABLE_INT:
        frame[c] = frame[c].astype("Int64")
    return result, frame


def policies() -> List[Dict[str, Any]]:
    """The policy registry, as ``smartsim policies --format json`` prints it: one dict per
    policy with ``name``, ``about``, ``options`` (each option's ``default`` and ``about``),
    ``linux`` (the Linux class it maps to), ``notifies``, ``work_conserving`` and ``source``.
    Every policy also takes ``partition`` = ``"global"`` (default), ``"affinity"`` or
    ``"ffd"``."""
    return list(_smartsim.policies())


def _value(key: str, v: Any) -> str:
    """A value of a sweep's key as ``smartsim sweep --set`` takes it (a number or a boolean if it
    reads as one, else a string)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float, str)):
        s = str(v)
        if not s:
            raise ValueError(f"set: {key}: a value is empty")
        return s
    raise TypeError(f"set: {key}: {v!r} is a {type(v).__name__}; give str, int, float or bool values")


def _sweep_task(
    text: str, path: str, keys: List[str], runs: List[Tuple[List[str], int]], walk_limit: Optional[int] = None
) -> List[List[Dict[str, Any]]]:
    """Runs of a sweep, as one task for an executor: the scenario text, the keys, each run's values
    and seed, and the runs' walk limit in; each run's rows out, in order. Plain strings, ints, lists
    and dicts: everything pickles, and a worker needs only the installed package."""
    return [_smartsim.sweep_task(text, path, keys, values, seed, walk_limit) for values, seed in runs]


def sweep(
    scenario: Scenario,
    set: Optional[Mapping[str, Union[Sequence[Any], str, int, float, bool]]] = None,
    seeds: Union[Iterable[int], int, None] = None,
    executor: Optional[Executor] = None,
    *,
    batch: int = 1,
    walk_limit: Optional[int] = None,
) -> List[Dict[str, Any]]:
    """Run a scenario over a grid of keys and seeds, as ``smartsim sweep`` does: a row per run
    and task, ready for ``pandas.DataFrame(rows)``.

    Args:
        scenario: as for :func:`run` (a path, TOML text or a dict).
        set: each key of the scenario by its path (``machine.hz``, ``scheduler.quantum``,
            ``task.NAME.exec`` for the ``[[task]]`` of that name) and its values, e.g.
            ``{"machine.hz": [100, 1000], "scheduler.policy": ["smart", "edf"]}``; a single value
            is a list of one. The grid is every combination (the last key varies fastest). A
            value is set as ``smartsim sweep --set`` sets it: ``str(value)`` (``true``/``false``
            for a bool) read as a TOML number or boolean if it is one, else as a string
            (``"10ms"``). ``None``: the scenario as it is.
        seeds: the seeds each combination runs under: a list, or ``N`` for seeds 1 to N (as
            ``--seeds N``); ``None``: the scenario's own seed.
        executor: any ``concurrent.futures.Executor``: each run, a (combination, seed), is one
            task submitted to it (``fn(text, path, keys, [(values, seed)], walk_limit)``, all
            plain strings, ints and lists, returning each run's rows as plain dicts). ``None``: a ``ProcessPoolExecutor`` with a
            process per core, shut down after. For a Dask cluster:
            ``distributed.Client(...).get_executor()``.
        batch: runs per task (consecutive runs in the sweep's order). A run of a small scenario
            takes well under a millisecond, less than an executor's cost of a task (about a
            millisecond on a process pool, several on Dask): give a batch of 10 to 100 for such
            sweeps. The rows are the same whatever the batch.
        walk_limit: each run stops past this many tasks walked by its policy (``smartsim sweep
            --walk-limit``), else past the default 5e10; a run stopped so has its rows marked
            ``partial`` (``{"reason": "over_budget", ...}``) and a warning counts them.

    Returns:
        The rows, in order of combination, seed and task whatever the executor: each a dict of
        the keys set (their values as given in ``set``), ``seed``, ``task``, ``cpu_share``,
        ``met``, ``missed``, ``latency_p50_ns``, ``latency_p99_ns`` and ``response_max_ns``
        (``None`` where a task has no such figure), and ``partial`` in the rows of a run that
        stopped partway. These are the rows of ``smartsim sweep --format jsonl``, where a key's
        value is the string given on the command line.

    Raises:
        ScenarioError: the scenario, or one of its combinations, is refused; every combination
            is checked before any run, so nothing runs.
        SmartsimError: a key cannot be set, a combination is over the limits of a run, or more
            than :data:`MAX_RUNS` runs.
        ValueError, TypeError: ``batch`` or ``walk_limit`` is not a whole number in its range.
    """
    if not isinstance(batch, int) or isinstance(batch, bool) or batch < 1:
        raise ValueError(f"batch: {batch!r}: give a whole number of runs per task, 1 or more")
    limit = _walk_limit(walk_limit)
    text, name = _source(scenario)
    if text is None:
        text = _smartsim.read_scenario(name)
    given = dict(set or {})
    keys = [str(k) for k in given]
    values: List[List[str]] = []
    back: List[Dict[str, Any]] = []
    for k in keys:
        vs = given[k]
        vs = [vs] if isinstance(vs, (str, int, float, bool)) else list(vs)
        values.append([_value(k, v) for v in vs])
        back.append({s: v for s, v in zip(values[-1], vs)})
    seed_list = None if seeds is None else (list(range(1, seeds + 1)) if isinstance(seeds, int) else [int(s) for s in seeds])
    combos, seed_list, warns = _smartsim.sweep_plan(text, name, keys, values, seed_list)
    _warn(warns)
    own = executor is None
    pool: Executor = ProcessPoolExecutor() if own else executor  # type: ignore[assignment]
    futures: List[Future[List[List[Dict[str, Any]]]]] = []
    try:
        runs = [(combo, seed) for combo in combos for seed in seed_list]
        for i in range(0, len(runs), batch):
            futures.append(pool.submit(_sweep_task, text, name, keys, runs[i : i + batch], limit))
        rows: List[Dict[str, Any]] = []
        stopped = 0  # runs stopped partway (past their walk limit)
        for f in futures:
            for run_rows in f.result():
                rows.extend(run_rows)
                stopped += any(r.get("partial") for r in run_rows)
    except BaseException:
        for f in futures:
            f.cancel()
        raise
    finally:
        if own:
            pool.shutdown(wait=True, cancel_futures=True)
    for r in rows:
        for k, b in zip(keys, back):
            r[k] = b[r[k]]
    if stopped:
        _warn([f"{stopped} of {len(runs)} runs stopped partway, their policy past the tasks it may walk "
               f"({f'walk_limit={limit}' if limit else f'the default {_smartsim.MAX_WALKED}'}); their rows are "
               "marked partial and their figures are of the time simulated"])
    return rows


#: A time argument: a string with a unit, as in a scenario (``"10ms"``), or whole nanoseconds.
Time = Union[str, int]


def taskset(
    tasks: int = 10,
    utilisation: float = 0.5,
    *,
    cpus: int = 1,
    generator: Literal["uunifast", "uunifast-discard", "randfixedsum"] = "uunifast-discard",
    periods: Literal["uniform", "log-uniform", "harmonic"] = "log-uniform",
    period_min: Time = "10ms",
    period_max: Time = "100ms",
    granularity: Time = 1,
    seed: int = 1,
    policy: str = "edf",
    duration: Optional[Time] = None,
    with_tasks: bool = False,
) -> Union[str, Tuple[str, List[Dict[str, Any]]]]:
    """Draw one random periodic task set, as ``smartsim taskset`` does, and return it as scenario
    TOML text, ready for :func:`run` or :func:`sweep`.

    ``tasks`` tasks of total utilisation ``utilisation`` on ``cpus`` CPUs; utilisations by
    ``generator`` (UUniFast, one CPU and U ≤ 1; UUniFast-discard, U up to the tasks; RandFixedSum,
    the same distribution drawn directly, at most 1000 tasks); periods by ``periods`` in
    [``period_min``, ``period_max``] on multiples of ``granularity`` (``"1ms"`` for whole ms);
    implicit deadlines, exact execution times. The same arguments and ``seed`` give the same set.
    ``policy`` is the scenario's policy: a fixed-priority one (``fifo``, ``rr``, ``rt``, ``sys``,
    ``svr4-rt``) gets rate-monotonic priorities. ``duration``: the simulated time (default: the
    hyperperiod, or 1 s, or the longest period if longer, when the hyperperiod is longer).

    With ``with_tasks=True`` returns ``(toml, tasks)``, ``tasks`` a list of dicts (name,
    utilisation, period, exec in ns, priority) for a DataFrame. A broken rule raises
    :class:`TasksetError` naming the argument.

    Acceptance of EDF at one utilisation::

        sets = [smartsim.taskset(10, 0.9, seed=s) for s in range(100)]
        ok = sum(all(t["deadlines"]["missed"] == 0 for t in smartsim.run(s)["tasks"]) for s in sets)
    """
    text, rows = _smartsim.taskset(
        tasks, utilisation, cpus, generator, periods, period_min, period_max, granularity, seed, policy, duration
    )
    return (text, rows) if with_tasks else text
