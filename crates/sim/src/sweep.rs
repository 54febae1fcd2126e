//! `smartsim sweep`: one scenario over a grid of parameters and seeds, every run in parallel across
//! cores (rayon), one tidy table out: a row per run and task, with the run's parameters and seed.
//!
//! A parameter is a key of the scenario file by its path (`machine.hz`, `scheduler.quantum`,
//! `task.NAME.exec`: the `[[task]]` of that name), set to each of its values in turn; the grid is
//! every combination of them, each run under every seed. A value is read as TOML when it is one
//! (`100`, `1.5`, `true`) and as a string otherwise (`10ms`, `smart`). Each combination's scenario is
//! the file with the keys set, validated as any scenario is, every one before any run: a value the
//! scenario refuses is an error naming it, and nothing runs.

use std::sync::Arc;

use anyhow::{bail, Result};
use serde::Serialize;
use workload::Scenario;

use crate::engine::Progress;
use crate::result::{Partial, SimResult};

/// Most runs a sweep makes (combinations × seeds).
pub const MAX_RUNS: usize = 100_000;

/// One `--set KEY=V1,V2,...`.
#[derive(Clone, Debug, PartialEq)]
pub struct Axis {
    /// The key's path, e.g. `machine.hz`.
    pub key: String,
    /// Its values, as written.
    pub values: Vec<String>,
}

/// Parses `KEY=V1,V2,...`.
pub fn parse_axis(s: &str) -> Result<Axis, String> {
    let (key, values) =
        s.split_once('=').ok_or_else(|| format!("'{s}': give KEY=V1,V2,..., e.g. machine.hz=100,1000"))?;
    let key = key.trim();
    if key.is_empty() || key.split('.').any(str::is_empty) {
        return Err(format!("'{s}': the key must be a dotted path such as machine.hz or task.R1.exec"));
    }
    let values: Vec<String> = values.split(',').map(|v| v.trim().to_string()).collect();
    if values.iter().any(String::is_empty) {
        return Err(format!("'{s}': a value is empty"));
    }
    Ok(Axis { key: key.to_string(), values })
}

/// The seeds of a sweep (`--seeds`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seeds(pub Vec<u64>);

/// Parses `--seeds`: `N` (seeds 1 to N) or `A..B` (A to B, inclusive).
pub fn parse_seeds(s: &str) -> Result<Seeds, String> {
    let range = match s.split_once("..") {
        Some((a, b)) => {
            let a: u64 = a.trim().parse().map_err(|_| format!("'{s}': give N or A..B with whole numbers"))?;
            let b: u64 = b.trim().parse().map_err(|_| format!("'{s}': give N or A..B with whole numbers"))?;
            a..=b
        }
        None => 1..=s.trim().parse().map_err(|_| format!("'{s}': give N or A..B with whole numbers"))?,
    };
    if range.is_empty() {
        return Err(format!("'{s}': no seed in it"));
    }
    if range.end() - range.start() >= MAX_RUNS as u64 {
        return Err(format!("'{s}': more than {MAX_RUNS} seeds"));
    }
    Ok(Seeds(range.collect()))
}

/// A value as written on the command line, as TOML: a number or boolean if it reads as one, else a
/// string.
fn value(v: &str) -> toml::Value {
    match format!("x = {v}").parse::<toml::Table>() {
        Ok(mut t) => match t.remove("x") {
            Some(x @ (toml::Value::Integer(_) | toml::Value::Float(_) | toml::Value::Boolean(_))) => x,
            _ => toml::Value::String(v.to_string()),
        },
        Err(_) => toml::Value::String(v.to_string()),
    }
}

/// Sets `key` (a dotted path; `task.NAME.rest` names a `[[task]]`) to `v` in `doc`.
fn set(doc: &mut toml::Table, key: &str, v: toml::Value) -> Result<(), String> {
    let parts: Vec<&str> = key.split('.').collect();
    let mut table = doc;
    let mut rest = &parts[..];
    if parts[0] == "task" {
        let (Some(name), true) = (parts.get(1), parts.len() >= 3) else {
            return Err(format!("{key}: a task's key is task.NAME.KEY"));
        };
        let tasks = table.get_mut("task").and_then(toml::Value::as_array_mut).ok_or_else(|| {
            format!("{key}: the file has no [[task]] of its own (tasks of included files cannot be set)")
        })?;
        table = tasks
            .iter_mut()
            .filter_map(toml::Value::as_table_mut)
            .find(|t| t.get("name").and_then(toml::Value::as_str) == Some(name))
            .ok_or_else(|| format!("{key}: the file has no [[task]] named \"{name}\""))?;
        rest = &parts[2..];
    }
    let (last, path) = rest.split_last().expect("a key has a part");
    for p in path {
        table = table
            .entry(p.to_string())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()))
            .as_table_mut()
            .ok_or_else(|| format!("{key}: `{p}` is not a table in the file"))?;
    }
    table.insert(last.to_string(), v);
    Ok(())
}

/// The scenario `doc` with every `(key, value)` of `pairs` set (values as on the command line), as
/// TOML text.
fn set_all(mut doc: toml::Table, pairs: &[(&str, &str)]) -> Result<String, String> {
    for (k, v) in pairs {
        set(&mut doc, k, value(v))?;
    }
    toml::to_string(&doc).map_err(|e| format!("writing the scenario with its keys set: {e}"))
}

/// The scenario text `src` with every `(key, value)` of `pairs` set, as `--set` sets them (a study's
/// variant that is a file with some keys changed).
pub fn with_keys(src: &str, pairs: &[(&str, &str)]) -> Result<String, String> {
    let doc: toml::Table = src.parse().map_err(|e| format!("not valid TOML: {e}"))?;
    set_all(doc, pairs)
}

/// Every combination of the axes' values, in order (the last axis varies fastest).
pub fn combinations(axes: &[Axis]) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = vec![Vec::new()];
    for a in axes {
        out = out
            .into_iter()
            .flat_map(|c| a.values.iter().map(move |v| [c.clone(), vec![v.clone()]].concat()))
            .collect();
    }
    out
}

/// The scenario of each combination: the file's text `src` (named `path`) with the axes' keys set,
/// validated. Every combination is checked before any runs.
pub fn scenarios(src: &str, path: &str, axes: &[Axis], combos: &[Vec<String>]) -> Result<Vec<Scenario>> {
    let doc: toml::Table =
        src.parse().map_err(|e| anyhow::anyhow!("{path}: not valid TOML, so it cannot be swept: {e}"))?;
    let mut keys: Vec<&str> = axes.iter().map(|a| a.key.as_str()).collect();
    keys.sort_unstable();
    if let Some(w) = keys.windows(2).find(|w| w[0] == w[1]) {
        bail!("--set {}: given twice", w[0]);
    }
    combos
        .iter()
        .map(|combo| {
            let pairs: Vec<(&str, &str)> =
                axes.iter().zip(combo).map(|(a, v)| (a.key.as_str(), v.as_str())).collect();
            let what: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}={v}")).collect();
            let text = set_all(doc.clone(), &pairs).map_err(|e| anyhow::anyhow!("--set {e}"))?;
            workload::parse_str(&text, path)
                .map_err(|e| anyhow::anyhow!("{path} with {}: the scenario refuses it:\n{e}", what.join(" ")))
        })
        .collect()
}

/// One row of a sweep's table: a task in a run.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Row {
    /// The run's parameters, by key, as given.
    pub params: Vec<(String, String)>,
    /// Its seed.
    pub seed: u64,
    /// The task.
    pub task: String,
    /// Its share of the run's time on the CPU.
    pub cpu_share: f64,
    /// Requests met and missed (periodic tasks and players), else `None`.
    pub met: Option<u64>,
    /// Requests that missed their deadline.
    pub missed: Option<u64>,
    /// Wake-up latency, median and 99th percentile, ns.
    pub latency_p50_ns: Option<u64>,
    /// 99th percentile of the wake-up latency, ns.
    pub latency_p99_ns: Option<u64>,
    /// Largest response time of a request, ns.
    pub response_max_ns: Option<u64>,
    /// The run stopped before its end (its figures are of the time it simulated); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partial: Option<Partial>,
}

/// The rows of one run.
pub fn rows(params: &[(String, String)], seed: u64, r: &SimResult) -> Vec<Row> {
    r.tasks
        .iter()
        .map(|t| Row {
            params: params.to_vec(),
            seed,
            task: t.name.clone(),
            cpu_share: t.cpu_share,
            met: t.deadlines.as_ref().map(|d| d.met),
            missed: t.deadlines.as_ref().map(|d| d.missed),
            latency_p50_ns: t.latency_ns.as_ref().map(|p| p.p50),
            latency_p99_ns: t.latency_ns.as_ref().map(|p| p.p99),
            response_max_ns: t.response_ns.as_ref().map(|p| p.max),
            partial: r.partial.clone(),
        })
        .collect()
}

/// Runs every scenario under every seed, in parallel across cores, calling `progress` after each
/// run; the rows in order: combination, seed, task.
pub fn run(
    scenarios: &[Scenario],
    params: &[Vec<(String, String)>],
    seeds: &[u64],
    progress: &(dyn Fn() + Sync),
) -> Result<Vec<Row>> {
    Ok(run_each(scenarios, params, seeds, None, progress)?.rows)
}

/// What a sweep watched by a [`Progress`] made: its rows (combination, seed, task), and its runs by
/// how far they went.
#[derive(Clone, Debug, PartialEq)]
pub struct Swept {
    /// The rows of the runs made, whole or partial, in order: combination, seed, task.
    pub rows: Vec<Row>,
    /// Runs asked for (combinations × seeds).
    pub runs: usize,
    /// Runs that went to their end.
    pub done: usize,
    /// Runs stopped before their end (their rows are marked [`Row::partial`]).
    pub partial: usize,
    /// Runs not started: the stop came first.
    pub not_started: usize,
}

/// As [`run`], every run watched by `watch` ([`crate::Sim::watch`]: its simulated time and steps
/// add up there, and it counts each run done). Once `watch` is asked to stop, the running runs stop
/// at their next check with partial results and the others are not started.
pub fn run_watched(
    scenarios: &[Scenario],
    params: &[Vec<(String, String)>],
    seeds: &[u64],
    watch: &Arc<Progress>,
) -> Result<Swept> {
    run_each(scenarios, params, seeds, Some(watch), &|| watch.run_done())
}

fn run_each(
    scenarios: &[Scenario],
    params: &[Vec<(String, String)>],
    seeds: &[u64],
    watch: Option<&Arc<Progress>>,
    progress: &(dyn Fn() + Sync),
) -> Result<Swept> {
    use rayon::prelude::*;
    let jobs: Vec<(usize, u64)> =
        (0..scenarios.len()).flat_map(|c| seeds.iter().map(move |&s| (c, s))).collect();
    if jobs.len() > MAX_RUNS {
        bail!(
            "{} runs ({} combinations × {} seeds): at most {MAX_RUNS}",
            jobs.len(),
            scenarios.len(),
            seeds.len()
        );
    }
    // None: not started, the stop came first.
    let made: Vec<Result<Option<SimResult>>> = jobs
        .par_iter()
        .map(|&(c, seed)| {
            if watch.is_some_and(|w| w.stopping()) {
                return Ok(None);
            }
            let mut scn = scenarios[c].clone();
            scn.machine.seed = seed;
            let mut sim = crate::simulator(&scn, None)?;
            if let Some(w) = watch {
                sim.watch(Arc::clone(w));
            }
            let r = sim.run();
            if r.partial.is_none() {
                progress();
            }
            Ok(Some(r))
        })
        .collect();
    let mut out = Swept { rows: Vec::new(), runs: jobs.len(), done: 0, partial: 0, not_started: 0 };
    for (&(c, seed), m) in jobs.iter().zip(made) {
        match m? {
            None => out.not_started += 1,
            Some(r) => {
                if r.partial.is_some() {
                    out.partial += 1;
                } else {
                    out.done += 1;
                }
                out.rows.extend(rows(&params[c], seed, &r));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axes_and_seeds_parse_and_combine() {
        let a = parse_axis("machine.hz=100,1000").unwrap();
        assert_eq!(a.values, ["100", "1000"]);
        assert!(
            parse_axis("hz").is_err() && parse_axis("machine..hz=1").is_err() && parse_axis("a=1,").is_err()
        );
        assert_eq!(parse_seeds("3").unwrap().0, [1, 2, 3]);
        assert_eq!(parse_seeds("4..6").unwrap().0, [4, 5, 6]);
        assert!(parse_seeds("6..4").is_err() && parse_seeds("x").is_err() && parse_seeds("0").is_err());
        let b = parse_axis("scheduler.policy=smart,edf").unwrap();
        let c = combinations(&[a, b]);
        assert_eq!(c.len(), 4);
        assert_eq!(c[1], ["100", "edf"]);
    }

    #[test]
    fn keys_are_set_by_path_and_values_typed() {
        let mut d: toml::Table =
            "[machine]\nduration = \"1s\"\n[[task]]\nname = \"R1\"\nmodel = \"cpu\"\n".parse().unwrap();
        set(&mut d, "machine.hz", value("100")).unwrap();
        set(&mut d, "scheduler.policy", value("edf")).unwrap();
        set(&mut d, "task.R1.share", value("3")).unwrap();
        assert_eq!(d["machine"]["hz"], toml::Value::Integer(100));
        assert_eq!(d["scheduler"]["policy"], toml::Value::String("edf".into()));
        assert_eq!(d["task"][0]["share"], toml::Value::Integer(3));
        assert!(set(&mut d, "task.R9.share", value("1")).unwrap_err().contains("no [[task]] named \"R9\""));
        assert!(set(&mut d, "machine.duration.x", value("1")).unwrap_err().contains("not a table"));
    }
}
