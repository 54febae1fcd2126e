//! `smartsim._smartsim`: the Rust half of the `smartsim` Python package (crates/py/python/smartsim is
//! the other). Each function here is a thin layer over the `smartsim` library crate, the same code the
//! command line runs: the run's JSON is [`smartsim::SimResult::to_json`] (`smartsim run --format
//! json`), a job row is [`smartsim::engine::JobRecord`] as `--jobs` writes it in JSON Lines, a sweep
//! is planned by [`smartsim::sweep::plan`] and its rows are [`smartsim::sweep::Row::to_json`]
//! (`smartsim sweep --format jsonl`), the registry is [`smartsim::policies_json`].
//!
//! Every simulation runs with the interpreter released (`Python::detach`), so other Python threads
//! go on meanwhile. Errors are raised as `smartsim.ScenarioError` (with each problem's file, line,
//! column, field and message, from the scenario's structured error) or `smartsim.SmartsimError`.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::Value;
use smartsim::sweep;
use workload::{Diagnostic, Scenario, ScenarioError};

/// The columns of the per-job rows, in the order of `smartsim run --jobs`'s CSV header.
const JOB_COLUMNS: [&str; 10] = [
    "task",
    "job",
    "cpu",
    "release_ns",
    "start_ns",
    "finish_ns",
    "deadline_ns",
    "exec_ns",
    "outcome",
    "preemptions",
];

/// A scenario as the Python side passes it: the file at `path`, or `text` named `path` in messages.
fn load(text: Option<&str>, path: &str) -> anyhow::Result<Scenario> {
    Ok(match text {
        Some(t) => workload::parse_str(t, path)?,
        None => workload::load(std::path::Path::new(path))?,
    })
}

/// The scenario text of the file at `path`, read as `smartsim sweep` reads it (at most
/// [`workload::MAX_SCENARIO_BYTES`]).
fn read(path: &str) -> anyhow::Result<String> {
    workload::read_capped(std::path::Path::new(path), workload::MAX_SCENARIO_BYTES).map_err(|e| {
        anyhow::Error::new(ScenarioError::single(path, 0, 0, "", format!("cannot read the scenario: {e}")))
    })
}

/// The warnings of a scenario, one string each (as the command line prints them).
fn warnings(scn: &Scenario) -> Vec<String> {
    scn.warnings.iter().map(Diagnostic::to_string).collect()
}

/// A JSON value as the Python object `json.loads` would give.
fn to_py<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => {
            if let Some(u) = n.as_u64() {
                u.into_pyobject(py)?.into_any()
            } else if let Some(i) = n.as_i64() {
                i.into_pyobject(py)?.into_any()
            } else {
                n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any()
            }
        }
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(a) => {
            let l = PyList::empty(py);
            for x in a {
                l.append(to_py(py, x)?)?;
            }
            l.into_any()
        }
        Value::Object(o) => {
            let d = PyDict::new(py);
            for (k, x) in o {
                d.set_item(k, to_py(py, x)?)?;
            }
            d.into_any()
        }
    })
}

/// The Python exception for an error of the library: `smartsim.ScenarioError` when it carries a
/// scenario's structured error (a problem of the file, or a combination of a sweep the scenario
/// refuses), else `smartsim.SmartsimError`. The message is the command line's (`smartsim: ` aside).
fn to_err(py: Python<'_>, e: anyhow::Error) -> PyErr {
    let message = format!("{e:#}");
    let structured =
        e.downcast_ref::<sweep::Refused>().map(|r| &r.error).or_else(|| e.downcast_ref::<ScenarioError>());
    let made = (|| -> PyResult<PyErr> {
        let errors = py.import("smartsim.errors")?;
        let exc = match structured {
            Some(se) => {
                let diags = PyList::empty(py);
                for d in &se.diagnostics {
                    let o = PyDict::new(py);
                    o.set_item("file", &d.file)?;
                    o.set_item("line", d.line)?;
                    o.set_item("column", d.col)?;
                    o.set_item("field", &d.field)?;
                    o.set_item("message", &d.message)?;
                    diags.append(o)?;
                }
                errors.getattr("ScenarioError")?.call1((message.clone(), diags))?
            }
            None => errors.getattr("SmartsimError")?.call1((message.clone(),))?,
        };
        Ok(PyErr::from_value(exc))
    })();
    // Raising our own exception can fail only if the package is broken; then its reason is raised.
    made.unwrap_or_else(|err| err)
}

/// Runs a scenario (the file at `path`, or `text` named `path` in messages) with its own policy or
/// `policy`, refusing a run over the limits unless `force`, and stopping it past `walk_limit` tasks
/// walked (else the default limit, none under `force`); returns the run's JSON object (as
/// `smartsim run --format json` prints it), the per-job rows as a dict of columns (if `jobs`; else
/// `None`), and the scenario's warnings (with the limit passed, if `force` let it through, and the
/// run's stop, if it stopped partway).
#[pyfunction]
#[pyo3(signature = (text, path, policy=None, jobs=false, force=false, walk_limit=None))]
fn run<'py>(
    py: Python<'py>,
    text: Option<String>,
    path: String,
    policy: Option<String>,
    jobs: bool,
    force: bool,
    walk_limit: Option<u64>,
) -> PyResult<Bound<'py, PyTuple>> {
    let done = py.detach(|| -> anyhow::Result<_> {
        walk_limit.map(smartsim::budget::check_walk_limit).transpose().map_err(anyhow::Error::msg)?;
        let scn = load(text.as_deref(), &path)?;
        let mut warns = warnings(&scn);
        let outputs = smartsim::budget::Outputs { jobs, ..Default::default() };
        let estimate = smartsim::budget::estimate(&scn, policy.as_deref(), outputs);
        match smartsim::budget::check(&estimate, &scn.path) {
            Ok(()) => {}
            Err(msg) if force => warns.push(format!("force=True: {msg}")),
            Err(msg) => anyhow::bail!("{msg} (from Python: pass force=True)"),
        }
        let mut sim = smartsim::simulator(&scn, policy.as_deref())?;
        sim.limit_walked_as_asked(walk_limit, force);
        let (r, rows) = if jobs {
            sim.record_jobs();
            sim.run_until(u64::MAX);
            sim.finish_all()
        } else {
            (sim.run(), Vec::new())
        };
        if let Some(p) = &r.partial {
            let (limit, lift) = match walk_limit {
                Some(n) => (format!("walk_limit={n}"), "a larger walk_limit runs it further"),
                None => (smartsim::budget::MAX_WALKED.to_string(), "pass force=True to run it whole"),
            };
            warns.push(format!(
                "the run stopped {}: {} ({limit}); its results are of the time simulated (\"partial\" in \
                 the result; {lift})",
                p.describe(),
                p.reason.cause(),
            ));
        }
        let rows: Vec<Value> = rows.iter().map(serde_json::to_value).collect::<Result<_, _>>()?;
        Ok((r.to_json(), rows, warns))
    });
    let (result, rows, warns) = done.map_err(|e| to_err(py, e))?;
    let columns = if jobs {
        let d = PyDict::new(py);
        for c in JOB_COLUMNS {
            let l = PyList::empty(py);
            for r in &rows {
                l.append(to_py(py, r.get(c).unwrap_or(&Value::Null))?)?;
            }
            d.set_item(c, l)?;
        }
        d.into_any()
    } else {
        py.None().into_bound(py)
    };
    PyTuple::new(py, [to_py(py, &result)?, columns, warns.into_pyobject(py)?.into_any()])
}

/// The text of the scenario file at `path` (for a sweep's tasks, which carry the text, not the
/// path).
#[pyfunction]
fn read_scenario(py: Python<'_>, path: String) -> PyResult<String> {
    py.detach(|| read(&path)).map_err(|e| to_err(py, e))
}

/// A Python value as TOML: a dict (str keys) is a table, a list or tuple an array, str, int, float
/// and bool themselves; `None` and anything else are refused, naming the key.
fn toml_value(v: &Bound<'_, PyAny>, at: &str) -> PyResult<toml::Value> {
    if v.is_instance_of::<PyBool>() {
        Ok(toml::Value::Boolean(v.extract()?))
    } else if v.is_instance_of::<PyInt>() {
        Ok(toml::Value::Integer(v.extract().map_err(|_| {
            PyTypeError::new_err(format!("{at}: {} does not fit a TOML integer (64 bits)", v))
        })?))
    } else if v.is_instance_of::<PyFloat>() {
        Ok(toml::Value::Float(v.extract()?))
    } else if v.is_instance_of::<PyString>() {
        Ok(toml::Value::String(v.extract()?))
    } else if let Ok(d) = v.cast::<PyDict>() {
        let mut t = toml::Table::new();
        for (k, x) in d.iter() {
            let k: String = k.extract().map_err(|_| {
                PyTypeError::new_err(format!(
                    "{at}: a key is {}, not a str",
                    k.repr().map_or("?".into(), |r| r.to_string())
                ))
            })?;
            let inner = if at.is_empty() { k.clone() } else { format!("{at}.{k}") };
            t.insert(k, toml_value(&x, &inner)?);
        }
        Ok(toml::Value::Table(t))
    } else if v.is_instance_of::<PyList>() || v.is_instance_of::<PyTuple>() {
        let mut a = Vec::new();
        for (i, x) in v.try_iter()?.enumerate() {
            a.push(toml_value(&x?, &format!("{at}[{i}]"))?);
        }
        Ok(toml::Value::Array(a))
    } else if v.is_none() {
        Err(PyTypeError::new_err(format!("{at}: None has no TOML form; leave the key out for its default")))
    } else {
        let t = v.get_type().name().map_or("?".into(), |n| n.to_string());
        Err(PyTypeError::new_err(format!(
            "{at}: a {t} has no TOML form (give a str, int, float, bool, list or dict)"
        )))
    }
}

/// A scenario given as a dict, as TOML text (`[[task]]` from a list of dicts under `"task"`).
#[pyfunction]
fn toml_from_dict(d: &Bound<'_, PyDict>) -> PyResult<String> {
    match toml_value(d.as_any(), "")? {
        toml::Value::Table(t) => toml::to_string(&t)
            .map_err(|e| PyTypeError::new_err(format!("the scenario dict cannot be written as TOML: {e}"))),
        _ => unreachable!("a dict is a table"),
    }
}

/// A sweep's combinations (each a list of values), its seeds and the scenario's warnings.
type Planned = (Vec<Vec<String>>, Vec<u64>, Vec<String>);

/// Checks a sweep before any run, as `smartsim sweep` does ([`sweep::plan`]): the scenario `text`
/// (named `path`) as it is, every combination of the `keys`' `values` (the last key varies
/// fastest) validated and within the limits of a run, at most [`sweep::MAX_RUNS`] runs. Returns
/// the combinations (each a list of values, as strings), the seeds (`seeds`, or the file's own)
/// and the scenario's warnings.
#[pyfunction]
#[pyo3(signature = (text, path, keys, values, seeds=None))]
fn sweep_plan(
    py: Python<'_>,
    text: String,
    path: String,
    keys: Vec<String>,
    values: Vec<Vec<String>>,
    seeds: Option<Vec<u64>>,
) -> PyResult<Planned> {
    py.detach(|| -> anyhow::Result<_> {
        let axes: Vec<sweep::Axis> =
            keys.into_iter().zip(values).map(|(key, values)| sweep::Axis { key, values }).collect();
        for a in &axes {
            if a.key.is_empty() || a.key.split('.').any(str::is_empty) {
                anyhow::bail!("set: {:?}: a key is a dotted path such as machine.hz or task.R1.exec", a.key);
            }
            if a.values.is_empty() {
                anyhow::bail!("set: {}: no value to set it to", a.key);
            }
        }
        let plan = sweep::plan(&text, &path, &axes, seeds)?;
        let combos = plan.params.iter().map(|p| p.iter().map(|(_, v)| v.clone()).collect()).collect();
        Ok((combos, plan.seeds, warnings(&plan.base)))
    })
    .map_err(|e| to_err(py, e))
}

/// One task of a sweep: the scenario `text` (named `path`) with each of `keys` set to its value
/// in `values` (as `smartsim sweep --set` sets them), run under `seed` and stopped past
/// `walk_limit` tasks walked (else the default limit); its rows, one per task, as `smartsim sweep
/// --format jsonl` prints them (the values as strings).
#[pyfunction]
#[pyo3(signature = (text, path, keys, values, seed, walk_limit=None))]
fn sweep_task<'py>(
    py: Python<'py>,
    text: String,
    path: String,
    keys: Vec<String>,
    values: Vec<String>,
    seed: u64,
    walk_limit: Option<u64>,
) -> PyResult<Bound<'py, PyList>> {
    let rows = py
        .detach(|| -> anyhow::Result<Vec<Value>> {
            walk_limit.map(smartsim::budget::check_walk_limit).transpose().map_err(anyhow::Error::msg)?;
            let pairs: Vec<(&str, &str)> =
                keys.iter().map(String::as_str).zip(values.iter().map(String::as_str)).collect();
            let set = sweep::with_keys(&text, &pairs).map_err(|e| anyhow::anyhow!("set {e}"))?;
            let scn = workload::parse_str(&set, &path).map_err(|error| {
                let set = pairs.iter().map(|(k, v)| format!("{k}={v}")).collect();
                anyhow::Error::new(sweep::Refused { path: path.clone(), set, error })
            })?;
            let params: Vec<(String, String)> = keys.iter().cloned().zip(values.iter().cloned()).collect();
            Ok(sweep::run_one(&scn, &params, seed, walk_limit)?
                .iter()
                .map(|r| Value::Object(r.to_json()))
                .collect())
        })
        .map_err(|e| to_err(py, e))?;
    let l = PyList::empty(py);
    for r in &rows {
        l.append(to_py(py, r)?)?;
    }
    Ok(l)
}

/// A time argument: a string with a unit (`"10ms"`, as in a scenario) or a whole number of ns, at
/// most `workload::MAX_TIME` either way (the bound every time a user gives has where it enters).
fn time_arg(v: &Bound<'_, PyAny>, name: &str) -> PyResult<workload::Nanos> {
    if v.is_instance_of::<PyString>() {
        let s: String = v.extract()?;
        return workload::parse_bounded_time(&s)
            .map_err(|e| PyTypeError::new_err(format!("{name} = {s:?}: {e} (a time such as \"10ms\")")));
    }
    let t = v.extract::<workload::Nanos>().map_err(|_| {
        PyTypeError::new_err(format!("{name}: a time such as \"10ms\", or whole nanoseconds"))
    })?;
    if t > workload::MAX_TIME {
        return Err(PyTypeError::new_err(format!(
            "{name} = {t} ns: at most {} ns (1000000h)",
            workload::MAX_TIME
        )));
    }
    Ok(t)
}

/// One task set drawn by [`smartsim::taskset`] (`smartsim taskset`'s generators), as scenario TOML
/// text for `policy` (with rate-monotonic priorities under a fixed-priority policy), and its tasks
/// (name, utilisation, period, exec, priority). A broken rule raises `smartsim.TasksetError` naming
/// the argument.
#[pyfunction]
#[pyo3(signature = (tasks, utilisation, cpus, generator, periods, period_min, period_max, granularity, seed, policy, duration=None))]
#[allow(clippy::too_many_arguments)]
fn taskset<'py>(
    py: Python<'py>,
    tasks: usize,
    utilisation: f64,
    cpus: u32,
    generator: &str,
    periods: &str,
    period_min: &Bound<'py, PyAny>,
    period_max: &Bound<'py, PyAny>,
    granularity: &Bound<'py, PyAny>,
    seed: u64,
    policy: &str,
    duration: Option<&Bound<'py, PyAny>>,
) -> PyResult<(String, Bound<'py, PyAny>)> {
    use smartsim::taskset::{Generator, Periods, TasksetSpec};
    let bad = |field: &str, value: &str, message: String| -> PyErr {
        let made = (|| -> PyResult<PyErr> {
            let errors = py.import("smartsim.errors")?;
            let text = format!("{field} = {value}: {message}");
            Ok(PyErr::from_value(errors.getattr("TasksetError")?.call1((text, field, value, message))?))
        })();
        made.unwrap_or_else(|e| e)
    };
    let generator = match generator {
        "uunifast" => Generator::Uunifast,
        "uunifast-discard" => Generator::UunifastDiscard,
        "randfixedsum" => Generator::Randfixedsum,
        g => {
            return Err(bad(
                "generator",
                g,
                "one of \"uunifast\", \"uunifast-discard\", \"randfixedsum\"".into(),
            ))
        }
    };
    let periods = match periods {
        "uniform" => Periods::Uniform,
        "log-uniform" => Periods::LogUniform,
        "harmonic" => Periods::Harmonic,
        p => return Err(bad("periods", p, "one of \"uniform\", \"log-uniform\", \"harmonic\"".into())),
    };
    if sched::registry::entry(policy).is_none() {
        return Err(bad("policy", policy, "not a policy of the registry (smartsim.policies())".into()));
    }
    let spec = TasksetSpec {
        tasks,
        utilisation,
        cpus,
        generator,
        periods,
        period_min: time_arg(period_min, "period_min")?,
        period_max: time_arg(period_max, "period_max")?,
        granularity: time_arg(granularity, "granularity")?,
    };
    let duration = duration.map(|d| time_arg(d, "duration")).transpose()?;
    let set = py.detach(|| spec.generate(seed)).map_err(|e| bad(e.field, &e.value, e.message.clone()))?;
    let about = format!("smartsim.taskset(tasks={tasks}, utilisation={utilisation}, seed={seed}, ...)");
    let text = set.to_toml(policy, duration, smartsim::taskset::fixed_priority(policy), &about);
    // What `smartsim run` would say of it (a duration over the limits, say) is said by `run`.
    let rows = serde_json::to_value(&set.tasks).map_err(|e| PyTypeError::new_err(e.to_string()))?;
    Ok((text, to_py(py, &rows)?))
}

/// The policy registry, as `smartsim policies --format json` prints it.
#[pyfunction]
fn policies(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    to_py(py, &smartsim::policies_json())
}

/// The Rust half of the `smartsim` package: use the functions of `smartsim`, which document the
/// API; these are the layer under them.
#[pymodule]
fn _smartsim(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(read_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(toml_from_dict, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_plan, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_task, m)?)?;
    m.add_function(wrap_pyfunction!(policies, m)?)?;
    m.add_function(wrap_pyfunction!(taskset, m)?)?;
    m.add("MAX_RUNS", sweep::MAX_RUNS)?;
    m.add("MAX_WALKED", smartsim::budget::MAX_WALKED)?;
    m.add("MAX_WALK_LIMIT", smartsim::budget::MAX_WALK_LIMIT)?;
    m.add("JOB_COLUMNS", JOB_COLUMNS.to_vec())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
