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
use crate::result::{Partial, PartialReason, SimResult};

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

/// A combination of a sweep that the scenario refuses: the scenario's own error, structured
/// (file, line, field of each problem), with what was set.
#[derive(Debug, Clone)]
pub struct Refused {
    /// The scenario file, as named.
    pub path: String,
    /// What the combination set, `KEY=VALUE` each.
    pub set: Vec<String>,
    /// The scenario's error.
    pub error: workload::ScenarioError,
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} with {}: the scenario refuses it:\n{}", self.path, self.set.join(" "), self.error)
    }
}

impl std::error::Error for Refused {}

/// The scenario of each combination: the file's text `src` (named `path`) with the axes' keys set,
/// validated. Every combination is checked before any runs; a refused one is a [`Refused`] error.
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
            let text = set_all(doc.clone(), &pairs).map_err(|e| anyhow::anyhow!("--set {e}"))?;
            workload::parse_str(&text, path).map_err(|error| {
                let set = pairs.iter().map(|(k, v)| format!("{k}={v}")).collect();
                anyhow::Error::new(Refused { path: path.to_string(), set, error })
            })
        })
        .collect()
}

/// A sweep checked and ready to run: what `smartsim sweep` and the Python package's `sweep` do
/// before any run.
#[derive(Debug)]
pub struct Plan {
    /// The file as it is, validated (its warnings are the caller's to show).
    pub base: Scenario,
    /// Every combination's scenario, validated and within the run limits.
    pub scenarios: Vec<Scenario>,
    /// Every combination's parameters, `(key, value)` in the axes' order.
    pub params: Vec<Vec<(String, String)>>,
    /// The seeds: those given, else the file's own.
    pub seeds: Vec<u64>,
}

/// Checks a sweep of the scenario text `src` (named `path`): the file as it is first (its own
/// problems reported as any scenario's), then every combination of `axes` (the last varies
/// fastest), each within the limits of one run ([`crate::budget`]), and the number of runs
/// (at most [`MAX_RUNS`]). `seeds` default to the file's seed.
pub fn plan(src: &str, path: &str, axes: &[Axis], seeds: Option<Vec<u64>>) -> Result<Plan> {
    let base = workload::parse_str(src, path)?;
    let combos = combinations(axes);
    let scenarios = scenarios(src, path, axes, &combos)?;
    for s in &scenarios {
        let e = crate::budget::estimate(s, None, Default::default());
        crate::budget::check(&e, &s.path).map_err(anyhow::Error::msg)?;
    }
    let seeds = seeds.unwrap_or_else(|| vec![base.machine.seed]);
    check_runs(scenarios.len(), seeds.len())?;
    let params = combos
        .iter()
        .map(|c| axes.iter().zip(c).map(|(a, v)| (a.key.clone(), v.clone())).collect())
        .collect();
    Ok(Plan { base, scenarios, params, seeds })
}

/// Refuses more than [`MAX_RUNS`] runs.
pub fn check_runs(combinations: usize, seeds: usize) -> Result<()> {
    if combinations.saturating_mul(seeds) > MAX_RUNS {
        bail!(
            "{} runs ({combinations} combinations × {seeds} seeds): at most {MAX_RUNS}",
            combinations.saturating_mul(seeds),
        );
    }
    Ok(())
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

impl Row {
    /// The row as `smartsim sweep --format jsonl` prints it: the parameters first, by key (their
    /// values as strings, as given), then `seed`, `task` and the figures (`null` where a task has
    /// none).
    pub fn to_json(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut o = serde_json::Map::new();
        for (k, v) in &self.params {
            o.insert(k.clone(), serde_json::Value::String(v.clone()));
        }
        let rest = serde_json::to_value(self).expect("a row serializes");
        for (k, v) in rest.as_object().expect("a row is an object") {
            if k != "params" {
                o.insert(k.clone(), v.clone());
            }
        }
        o
    }
}

/// One run of a sweep: the combination's scenario `scn` under `seed`, its rows (one per task);
/// `walk_limit`: the run's ([`crate::Sim::limit_walked`]), else the default.
pub fn run_one(
    scn: &Scenario,
    params: &[(String, String)],
    seed: u64,
    walk_limit: Option<u64>,
) -> Result<Vec<Row>> {
    Ok(rows(params, seed, &simulate(scn, seed, None, walk_limit)?))
}

/// The combination's scenario `scn` simulated under `seed`, watched by `watch` if given.
fn simulate(
    scn: &Scenario,
    seed: u64,
    watch: Option<&Arc<Progress>>,
    walk_limit: Option<u64>,
) -> Result<SimResult> {
    let mut scn = scn.clone();
    scn.machine.seed = seed;
    let mut sim = crate::simulator(&scn, None)?;
    if let Some(w) = watch {
        sim.watch(Arc::clone(w));
    }
    sim.limit_walked_as_asked(walk_limit, false);
    Ok(sim.run())
}

/// Runs every scenario under every seed, in parallel across cores, calling `progress` after each
/// run; the rows in order: combination, seed, task.
pub fn run(
    scenarios: &[Scenario],
    params: &[Vec<(String, String)>],
    seeds: &[u64],
    progress: &(dyn Fn() + Sync),
) -> Result<Vec<Row>> {
    Ok(run_each(scenarios, params, seeds, None, None, progress)?.rows)
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
    /// Of those, the runs that stopped themselves, their policy past the walk limit (the others
    /// were stopped by `watch`).
    pub over_budget: usize,
    /// Runs not started: the stop came first.
    pub not_started: usize,
}

/// As [`run`], every run watched by `watch` ([`crate::Sim::watch`]: its simulated time and steps
/// add up there, and it counts each run done). Once `watch` is asked to stop, the running runs stop
/// at their next check with partial results and the others are not started. `walk_limit`: each
/// run's ([`crate::Sim::limit_walked`]), else the default.
pub fn run_watched(
    scenarios: &[Scenario],
    params: &[Vec<(String, String)>],
    seeds: &[u64],
    watch: &Arc<Progress>,
    walk_limit: Option<u64>,
) -> Result<Swept> {
    run_each(scenarios, params, seeds, Some(watch), walk_limit, &|| watch.run_done())
}

fn run_each(
    scenarios: &[Scenario],
    params: &[Vec<(String, String)>],
    seeds: &[u64],
    watch: Option<&Arc<Progress>>,
    walk_limit: Option<u64>,
    progress: &(dyn Fn() + Sync),
) -> Result<Swept> {
    use rayon::prelude::*;
    check_runs(scenarios.len(), seeds.len())?;
    let jobs: Vec<(usize, u64)> =
        (0..scenarios.len()).flat_map(|c| seeds.iter().map(move |&s| (c, s))).collect();
    // None: not started, the stop came first.
    let made: Vec<Result<Option<SimResult>>> = jobs
        .par_iter()
        .map(|&(c, seed)| {
            if watch.is_some_and(|w| w.stopping()) {
                return Ok(None);
            }
            let r = simulate(&scenarios[c], seed, watch, walk_limit)?;
            // A run past its walk limit has ended too: only one the stop cut short is not done.
            if r.partial.as_ref().is_none_or(|p| p.reason == PartialReason::OverBudget) {
                progress();
            }
            Ok(Some(r))
        })
        .collect();
    let mut out =
        Swept { rows: Vec::new(), runs: jobs.len(), done: 0, partial: 0, over_budget: 0, not_started: 0 };
    for (&(c, seed), m) in jobs.iter().zip(made) {
        match m? {
            None => out.not_started += 1,
            Some(r) => {
                if let Some(p) = &r.partial {
                    out.partial += 1;
                    out.over_budget += usize::from(p.reason == PartialReason::OverBudget);
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

    const SMALL: &str =
        "[machine]\nduration = \"200ms\"\nhz = 1000\n\n[[task]]\nname = \"A\"\nmodel = \"periodic\"\n\
                         exec = \"1ms..3ms\"\nperiod = \"10ms\"\n\n[[task]]\nname = \"B\"\nmodel = \"cpu\"\n";

    #[test]
    fn a_plan_refuses_a_combination_with_the_scenarios_structured_error() {
        let axes = [parse_axis("machine.hz=100,-1").unwrap()];
        let e = plan(SMALL, "s.toml", &axes, None).unwrap_err();
        let r = e.downcast_ref::<Refused>().expect("structured");
        assert_eq!(r.set, ["machine.hz=-1"]);
        let d = &r.error.diagnostics[0];
        assert_eq!((d.file.as_str(), d.line, d.field.as_str()), ("s.toml", 3, "machine.hz"));
        assert!(
            format!("{e:#}").starts_with("s.toml with machine.hz=-1: the scenario refuses it:\ns.toml:3:")
        );
        let e = plan(SMALL, "s.toml", &[], Some((1..=100_001).collect())).unwrap_err();
        assert!(e.to_string().contains("at most 100000"), "{e}");
    }

    #[test]
    fn a_planned_run_gives_its_rows_as_the_jsonl_rows() {
        let axes = [parse_axis("machine.hz=100,1000").unwrap()];
        let p = plan(SMALL, "s.toml", &axes, Some(vec![3, 4])).unwrap();
        assert_eq!((p.scenarios.len(), p.seeds.as_slice()), (2, &[3, 4][..]));
        assert_eq!(p.params[1], [("machine.hz".to_string(), "1000".to_string())]);
        let rows = run(&p.scenarios, &p.params, &p.seeds, &|| {}).unwrap();
        assert_eq!(rows.len(), 2 * 2 * 2);
        // One run on its own is the same as the same run in the whole sweep.
        assert_eq!(run_one(&p.scenarios[1], &p.params[1], 4, None).unwrap(), rows[6..8]);
        let o = rows[0].to_json();
        let keys: Vec<&str> = o.keys().map(String::as_str).collect();
        assert_eq!(keys[..4], ["machine.hz", "seed", "task", "cpu_share"]);
        assert_eq!(o["machine.hz"], "100");
        assert_eq!(o["met"], serde_json::json!(rows[0].met));
        assert!(rows[1].to_json()["met"].is_null(), "a cpu task has no deadlines");
    }
}
