//! The validating walk over the span-carrying TOML tree.
//!
//! Every check reports into [`Ctx`] and carries on, so that one run lists all problems. A value
//! that fails its check is replaced by its default only to keep walking; the scenario is thrown
//! away at the end if anything was reported.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use toml::de::{DeTable, DeValue};
use toml::Spanned;

use crate::error::{Diagnostic, ScenarioError};
use crate::exec::Exec;
use crate::time::{format_time, parse_bandwidth, parse_bounded_time, parse_size, Nanos, MAX_TIME};
use crate::{
    Adapt, Billing, Discard, Estimate, Machine, Model, Notify, OnMiss, Overheads, Periodic, Player, Scenario,
    SchedulerCfg, ServerCall, TaskSpec, TimerKind, Trace, MAX_TRACE_BYTES, MAX_TRACE_TIMES,
};

/// How the parser reads a file a scenario names (an `include`, a `file(...)` of times): its text, or
/// why it cannot be read. [`crate::load`] reads the file system; `smartsim reproduce` its compiled-in
/// files.
pub type Loader = dyn Fn(&Path) -> Result<String, String>;

type Val<'i> = Spanned<DeValue<'i>>;

// The key lists below are the parser's whole vocabulary: a key not in them is refused. They are public so
// that a test (tests/docs.rs) checks each is documented in docs/scenario.md.

/// The keys a scenario accepts at its top level.
pub const TOP_KEYS: &[&str] = &["description", "include", "machine", "scheduler", "task"];
/// The keys an `include` entry written as a table accepts besides `file`: what it sets on every task of
/// the file it includes.
pub const INCLUDE_KEYS: &[&str] =
    &["file", "name", "share", "priority", "nice", "class", "start", "stop", "discard"];
/// The keys of `[machine]`.
pub const MACHINE_KEYS: &[&str] =
    &["cpus", "hz", "billing", "timer", "duration", "seed", "sample", "overhead"];
/// The keys of `[machine.overhead]`.
pub const OVERHEAD_KEYS: &[&str] =
    &["tick", "switch", "decision", "cache", "bandwidth", "migration", "tick_cache"];
/// The keys every `[[task]]` accepts, whatever its model.
pub const COMMON_TASK_KEYS: &[&str] = &[
    "name",
    "model",
    "share",
    "priority",
    "latency_tolerance",
    "start",
    "stop",
    "jitter",
    "timer",
    "working_set",
    "cpus",
    "nice",
    "class",
    "runtime",
    "dl_deadline",
    "dl_period",
    "app",
];
/// The keys of a task that hands work to a server (models `periodic`, `interactive`, `player`).
pub const CLIENT_KEYS: &[&str] = &["server", "server_exec", "wait"];
/// Each task model and its own keys (besides [`COMMON_TASK_KEYS`]).
pub const MODELS: &[(&str, &[&str])] = &[
    ("cpu", &["work"]),
    (
        "periodic",
        &[
            "exec",
            "period",
            "interarrival",
            "input_delay",
            "deadline",
            "count",
            "on_miss",
            "estimate",
            "estimate_alpha",
            "estimate_factor",
            "estimate_initial",
            "notify",
            "time_constraint",
            "busy_wait",
            "bands",
            "server",
            "server_exec",
            "wait",
        ],
    ),
    ("interactive", &["think", "burst", "count", "bands", "server", "server_exec", "wait"]),
    ("server", &[]),
    (
        "player",
        &[
            "exec",
            "period",
            "interarrival",
            "count",
            "window",
            "delay",
            "pace",
            "discard",
            "ring",
            "adapt",
            "estimate_alpha",
            "estimate_factor",
            "estimate_initial",
            "server",
            "server_exec",
            "wait",
        ],
    ),
    ("forkwait", &["fork", "child", "children", "count", "bands"]),
];
/// Highest `machine.hz`: a tick period of at least 1 µs. Every trace reader takes the same bound
/// (`trace::MAX_HZ`).
pub const MAX_HZ: u32 = 1_000_000;
/// Shortest timeline sampling period (`machine.sample`).
pub const MIN_SAMPLE: Nanos = 1_000;
/// Most timeline samples a run takes (each holds every task's CPU time and deadlines met).
pub const MAX_SAMPLES: u64 = 1_000_000;

/// Collects diagnostics; maps byte offsets to lines and columns.
struct Ctx<'a> {
    src: &'a str,
    file: &'a str,
    /// Byte offset of the start of each line.
    line_starts: Vec<usize>,
    diags: Vec<(usize, Diagnostic)>,
    warns: Vec<(usize, Diagnostic)>,
    /// Reads the files the scenario names, relative to `dir` (the directory of `file`).
    loader: &'a Loader,
    dir: PathBuf,
    /// The times files the task being read names (`file(...)`), moved into it when it is done.
    traces: Vec<Trace>,
}

impl<'a> Ctx<'a> {
    fn new(src: &'a str, file: &'a str, loader: &'a Loader) -> Ctx<'a> {
        let line_starts = std::iter::once(0).chain(src.match_indices('\n').map(|(i, _)| i + 1)).collect();
        let dir = Path::new(file).parent().map(Path::to_path_buf).unwrap_or_default();
        Ctx { src, file, line_starts, diags: Vec::new(), warns: Vec::new(), loader, dir, traces: Vec::new() }
    }

    /// A problem found in another file (a times file, an included scenario) at its `line`, reported in
    /// this file's order at offset `at` (the key that names the file).
    fn err_in(&mut self, at: usize, file: &str, line: usize, field: &str, message: impl Into<String>) {
        let d = Diagnostic {
            file: file.to_string(),
            line,
            col: 1,
            field: field.to_string(),
            message: message.into(),
        };
        self.diags.push((at, d));
    }

    /// The path a scenario's `name` of a file stands for: relative to the scenario's directory.
    fn resolve(&self, name: &str) -> PathBuf {
        let p = Path::new(name);
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.dir.join(p)
        }
    }

    /// 1-based line and column (in characters) of a byte offset.
    fn line_col(&self, offset: usize) -> (usize, usize) {
        let mut offset = offset.min(self.src.len());
        while !self.src.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.line_starts.partition_point(|&s| s <= offset);
        let start = self.line_starts[line - 1];
        (line, self.src[start..offset].chars().count() + 1)
    }

    fn line(&self, offset: usize) -> usize {
        self.line_col(offset).0
    }

    fn diag(&self, at: usize, field: &str, message: String) -> (usize, Diagnostic) {
        let (line, col) = self.line_col(at);
        (at, Diagnostic { file: self.file.to_string(), line, col, field: field.to_string(), message })
    }

    fn err(&mut self, at: usize, field: &str, message: impl Into<String>) {
        let d = self.diag(at, field, message.into());
        self.diags.push(d);
    }

    /// Something legitimate but probably not meant: said on stderr, the run goes on.
    fn warn(&mut self, at: usize, field: &str, message: impl Into<String>) {
        let d = self.diag(at, field, message.into());
        self.warns.push(d);
    }
}

/// A table being read, with the words that name its fields in messages.
struct Tbl<'t, 'i> {
    table: Option<&'t DeTable<'i>>,
    /// Where "missing key" errors point: the table's header, or the start of the file.
    at: usize,
    /// Field prefix, e.g. `machine.` or `task[2].`.
    prefix: String,
    /// Appended to the field, e.g. ` (task "R1")`.
    suffix: String,
}

impl<'t, 'i> Tbl<'t, 'i> {
    fn field(&self, key: &str) -> String {
        format!("{}{key}{}", self.prefix, self.suffix)
    }

    fn get(&self, key: &str) -> Option<&'t Val<'i>> {
        self.table.and_then(|t| t.get(key))
    }

    /// Reports every key not in `allowed`; `explain` may give a better message for some keys.
    fn check_keys(&self, cx: &mut Ctx, allowed: &[&str], explain: impl Fn(&str) -> Option<String>) {
        let Some(t) = self.table else { return };
        for (k, _) in t.iter() {
            let key: &str = k.get_ref();
            if allowed.contains(&key) {
                continue;
            }
            let msg = explain(key).unwrap_or_else(|| unknown_key(key, allowed));
            cx.err(k.span().start, &self.field(key), msg);
        }
    }

    /// A time, at most [`MAX_TIME`] (every time of a scenario is read here, by [`Exec`]'s parser, or
    /// by `estimate` and `notify` below, all through `parse_bounded_time`).
    fn time(&self, cx: &mut Ctx, key: &str) -> Option<Nanos> {
        let v = self.get(key)?;
        let field = self.field(key);
        match v.get_ref() {
            DeValue::String(s) => match parse_bounded_time(s) {
                Ok(t) => Some(t),
                Err(e) => {
                    cx.err(v.span().start, &field, e.to_string());
                    None
                }
            },
            DeValue::Integer(_) | DeValue::Float(_) => {
                cx.err(v.span().start, &field, bare_number(v, key, "ms"));
                None
            }
            other => {
                type_error(cx, v, &field, other, "a time such as \"40ms\"");
                None
            }
        }
    }

    fn positive_time(&self, cx: &mut Ctx, key: &str) -> Option<Nanos> {
        let t = self.time(cx, key)?;
        if t == 0 {
            cx.err(self.at_value(key), &self.field(key), "must be > 0");
            return None;
        }
        Some(t)
    }

    fn boolean(&self, cx: &mut Ctx, key: &str) -> Option<bool> {
        let v = self.get(key)?;
        match v.get_ref() {
            DeValue::Boolean(b) => Some(*b),
            other => {
                type_error(cx, v, &self.field(key), other, "true or false");
                None
            }
        }
    }

    /// A list of times, ascending, each > 0, at most `most` of them.
    fn times(&self, cx: &mut Ctx, key: &str, most: usize) -> Option<Vec<Nanos>> {
        let v = self.get(key)?;
        let field = self.field(key);
        let DeValue::Array(items) = v.get_ref() else {
            type_error(cx, v, &field, v.get_ref(), "a list of times such as [\"50ms\", \"150ms\"]");
            return None;
        };
        if items.is_empty() || items.len() > most {
            cx.err(v.span().start, &field, format!("give 1 to {most} times, e.g. [\"50ms\", \"150ms\"]"));
            return None;
        }
        let mut out = Vec::new();
        for item in items.iter() {
            let t = match item.get_ref() {
                DeValue::String(s) => match parse_bounded_time(s) {
                    Ok(t) => t,
                    Err(e) => {
                        cx.err(item.span().start, &field, e.to_string());
                        return None;
                    }
                },
                other => {
                    type_error(cx, item, &field, other, "a time such as \"50ms\"");
                    return None;
                }
            };
            if t == 0 || out.last().is_some_and(|&l| t <= l) {
                cx.err(item.span().start, &field, "the times must be > 0 and ascending");
                return None;
            }
            out.push(t);
        }
        Some(out)
    }

    fn at_value(&self, key: &str) -> usize {
        self.get(key).map_or(self.at, |v| v.span().start)
    }

    fn string(&self, cx: &mut Ctx, key: &str) -> Option<&'t str> {
        let v = self.get(key)?;
        match v.get_ref() {
            DeValue::String(s) => Some(s.as_ref()),
            other => {
                type_error(cx, v, &self.field(key), other, "a string");
                None
            }
        }
    }

    /// An integer in `[lo, hi]`.
    fn int(&self, cx: &mut Ctx, key: &str, lo: i128, hi: i128) -> Option<i128> {
        let v = self.get(key)?;
        let field = self.field(key);
        match v.get_ref() {
            DeValue::Integer(i) => {
                let Ok(n) = i128::from_str_radix(i.as_str(), i.radix()) else {
                    cx.err(v.span().start, &field, "integer out of range");
                    return None;
                };
                if n < lo || n > hi {
                    let range = match (lo, hi) {
                        (0, hi) if hi >= i128::from(u32::MAX) => "an integer >= 0".to_string(),
                        (1, hi) if hi >= i128::from(u32::MAX) => "an integer >= 1".to_string(),
                        _ => format!("an integer in {lo}..={hi}"),
                    };
                    cx.err(v.span().start, &field, format!("{n} is out of range: expected {range}"));
                    return None;
                }
                Some(n)
            }
            other => {
                type_error(cx, v, &field, other, "an integer");
                None
            }
        }
    }

    fn float(&self, cx: &mut Ctx, key: &str) -> Option<f64> {
        let v = self.get(key)?;
        match v.get_ref() {
            DeValue::Float(f) => f.as_str().replace('_', "").parse().ok(),
            DeValue::Integer(i) => i64::from_str_radix(i.as_str(), i.radix()).ok().map(|n| n as f64),
            other => {
                type_error(cx, v, &self.field(key), other, "a number");
                None
            }
        }
    }

    /// A size in bytes: an integer, or a string with a unit (`"512KiB"`).
    fn size(&self, cx: &mut Ctx, key: &str, parse: fn(&str) -> Result<u64, String>) -> Option<u64> {
        let v = self.get(key)?;
        match v.get_ref() {
            DeValue::String(s) => match parse(s) {
                Ok(n) => Some(n),
                Err(e) => {
                    cx.err(v.span().start, &self.field(key), e);
                    None
                }
            },
            DeValue::Integer(_) => self.int(cx, key, 0, i128::from(u64::MAX)).map(|n| n as u64),
            other => {
                type_error(cx, v, &self.field(key), other, "a size such as \"512KiB\" or bytes");
                None
            }
        }
    }

    fn exec(&self, cx: &mut Ctx, key: &str) -> Option<Exec> {
        let v = self.get(key)?;
        let field = self.field(key);
        match v.get_ref() {
            DeValue::String(s) if s.trim().starts_with("file(") => {
                trace(cx, v.span().start, &field, s.trim())
            }
            DeValue::String(s) => match s.parse::<Exec>() {
                Ok(e) => Some(e),
                Err(e) => {
                    cx.err(v.span().start, &field, e);
                    None
                }
            },
            DeValue::Integer(_) | DeValue::Float(_) => {
                cx.err(v.span().start, &field, bare_number(v, key, "ms"));
                None
            }
            other => {
                type_error(cx, v, &field, other, "a time \"30ms\" or a range \"28ms..30ms\"");
                None
            }
        }
    }

    fn timer(&self, cx: &mut Ctx, key: &str) -> Option<TimerKind> {
        let s = self.string(cx, key)?;
        let at = self.at_value(key);
        let field = self.field(key);
        match s {
            "tick" => Some(TimerKind::Tick),
            "hr" => Some(TimerKind::Hr),
            "linux-2.4" => Some(TimerKind::Linux24),
            _ => match s.strip_prefix("rtc:") {
                Some(hz) => match hz.trim().parse::<u32>() {
                    Ok(hz) if hz.is_power_of_two() && (2..=8192).contains(&hz) => Some(TimerKind::Rtc(hz)),
                    _ => {
                        cx.err(
                            at,
                            &field,
                            format!("\"{s}\": the rtc rate must be a power of two from 2 to 8192 Hz, e.g. \"rtc:1024\""),
                        );
                        None
                    }
                },
                None => {
                    cx.err(
                        at,
                        &field,
                        format!(
                            "unknown timer \"{s}\": expected \"tick\", \"hr\", \"linux-2.4\" or \"rtc:<Hz>\""
                        ),
                    );
                    None
                }
            },
        }
    }

    /// One of `choices` (string keywords).
    fn keyword(&self, cx: &mut Ctx, key: &str, choices: &[&str]) -> Option<&'t str> {
        let s = self.string(cx, key)?;
        if choices.contains(&s) {
            return Some(s);
        }
        cx.err(self.at_value(key), &self.field(key), unknown_choice(s, choices));
        None
    }
}

/// The message for a time written as a bare TOML number, e.g. `period = 40`.
fn bare_number(v: &Val, key: &str, unit: &str) -> String {
    let n = match v.get_ref() {
        DeValue::Integer(i) => i.to_string(),
        DeValue::Float(f) => f.to_string(),
        _ => String::new(),
    };
    format!(
        "{n} has no unit: times are strings with a unit, e.g. {key} = \"{n}{unit}\" (units: ns, us, ms, s, m = minutes, h)"
    )
}

fn type_error(cx: &mut Ctx, v: &Val, field: &str, found: &DeValue, expected: &str) {
    cx.err(v.span().start, field, format!("expected {expected}, found {}", found.type_str()));
}

fn quoted(items: &[&str]) -> String {
    items.iter().map(|c| format!("\"{c}\"")).collect::<Vec<_>>().join(", ")
}

fn unknown_choice(s: &str, choices: &[&str]) -> String {
    let mut m = format!("unknown value \"{s}\": expected one of {}", quoted(choices));
    if let Some(best) = closest(s, choices) {
        m.push_str(&format!("; did you mean \"{best}\"?"));
    }
    m
}

/// The candidate nearest to a misspelt `word`, if near enough to be a likely typo.
fn closest<'c>(word: &str, candidates: &[&'c str]) -> Option<&'c str> {
    let w = word.to_lowercase();
    candidates
        .iter()
        .map(|&c| (strsim::damerau_levenshtein(&w, c), c))
        .filter(|&(d, c)| d <= 2.max(c.len() / 3) || (w.len() >= 3 && c.starts_with(&w)))
        .min_by_key(|&(d, _)| d)
        .map(|(_, c)| c)
}

fn unknown_key(key: &str, allowed: &[&str]) -> String {
    match closest(key, allowed) {
        Some(best) => format!("unknown key `{key}`; did you mean `{best}`?"),
        None => format!("unknown key `{key}`; valid keys here: {}", allowed.join(", ")),
    }
}

/// The models whose own keys include `key`.
fn models_with_key(key: &str) -> Vec<&'static str> {
    MODELS.iter().filter(|(_, keys)| keys.contains(&key)).map(|(m, _)| *m).collect()
}

fn model_keys(model: &str) -> &'static [&'static str] {
    MODELS.iter().find(|(m, _)| *m == model).map_or(&[], |(_, k)| *k)
}

/// Converts a TOML tree value into a `toml::Value` (for scheduler options).
fn to_value(v: &DeValue) -> toml::Value {
    match v {
        DeValue::String(s) => toml::Value::String(s.to_string()),
        DeValue::Integer(i) => i64::from_str_radix(i.as_str(), i.radix())
            .map(toml::Value::Integer)
            // Out of i64 range: TOML forbids it, the parser has reported it.
            .unwrap_or(toml::Value::Integer(0)),
        DeValue::Float(f) => toml::Value::Float(f.as_str().replace('_', "").parse().unwrap_or(f64::NAN)),
        DeValue::Boolean(b) => toml::Value::Boolean(*b),
        DeValue::Datetime(d) => toml::Value::Datetime(*d),
        DeValue::Array(a) => toml::Value::Array(a.iter().map(|x| to_value(x.get_ref())).collect()),
        DeValue::Table(t) => toml::Value::Table(
            t.iter().map(|(k, x)| (k.get_ref().to_string(), to_value(x.get_ref()))).collect(),
        ),
    }
}

/// `file(<path>)`: the times of a file, one per line with its unit (`28.3ms`), `#` comments and blank
/// lines skipped; kept in the task being read ([`Ctx::traces`]).
fn trace(cx: &mut Ctx, at: usize, field: &str, s: &str) -> Option<Exec> {
    let Some(name) = s.strip_prefix("file(").and_then(|r| r.strip_suffix(')')).map(str::trim) else {
        cx.err(at, field, format!("\"{s}\": write file(<path>), e.g. \"file(frames.txt)\""));
        return None;
    };
    let name = name.trim_matches('"');
    if name.is_empty() {
        cx.err(at, field, "file(): the path is empty");
        return None;
    }
    let path = cx.resolve(name);
    let shown = path.display().to_string();
    let text = match (cx.loader)(&path) {
        Ok(t) => t,
        Err(e) => {
            cx.err(at, field, format!("cannot read the times file {shown}: {e}"));
            return None;
        }
    };
    if text.len() as u64 > MAX_TRACE_BYTES {
        cx.err(at, field, format!("the times file {shown} is over {} MiB", MAX_TRACE_BYTES >> 20));
        return None;
    }
    let mut times = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let l = line.split('#').next().unwrap_or("").trim();
        if l.is_empty() {
            continue;
        }
        if times.len() == MAX_TRACE_TIMES {
            cx.err_in(at, &shown, n + 1, field, format!("more than {MAX_TRACE_TIMES} times"));
            return None;
        }
        match parse_bounded_time(l) {
            Ok(t) => times.push(t),
            Err(e) => {
                cx.err_in(at, &shown, n + 1, field, format!("\"{l}\": {e}"));
                return None;
            }
        }
    }
    if times.is_empty() {
        cx.err(at, field, format!("the times file {shown} holds no time (one per line, e.g. 28.3ms)"));
        return None;
    }
    let sum: u128 = times.iter().map(|&t| u128::from(t)).sum();
    let mean = sched::clamp_nanos(sum / times.len() as u128);
    let (min, max) = (*times.iter().min().expect("one"), *times.iter().max().expect("one"));
    let id = cx.traces.len() as u32;
    cx.traces.push(Trace { path: name.to_string(), times: times.into() });
    Some(Exec::Trace { id, mean, min, max })
}

/// The file stem: `dir/mix.toml` → `mix`.
fn stem(path: &str) -> String {
    std::path::Path::new(path)
        .file_stem()
        .map_or_else(|| path.to_string(), |s| s.to_string_lossy().into_owned())
}

pub(crate) fn parse(src: &str, path: &str, loader: &Loader) -> Result<Scenario, ScenarioError> {
    let mut cx = Ctx::new(src, path, loader);
    let (doc, syntax) = DeTable::parse_recoverable(src);
    if !syntax.is_empty() {
        // A broken file: report the syntax only, since a recovered tree would give confusing
        // follow-on errors.
        for e in syntax {
            let at = e.span().map_or(0, |s| s.start);
            cx.err(at, "", format!("TOML syntax: {}", e.message()));
        }
        return Err(finish(cx));
    }
    let root = Tbl { table: Some(doc.get_ref()), at: 0, prefix: String::new(), suffix: String::new() };
    root.check_keys(&mut cx, TOP_KEYS, |k| {
        (k == "tasks").then(|| "unknown key `tasks`; tasks are written [[task]]".to_string())
    });
    let description = root.string(&mut cx, "description").map(str::to_string);
    let machine = machine(&mut cx, &root);
    let scheduler = scheduler(&mut cx, &root);
    let by_affinity =
        matches!(scheduler.options.get("partition"), Some(toml::Value::String(p)) if p == "affinity");
    let mut tasks = includes(&mut cx, &root, &machine, by_affinity);
    let own = root.get("task").is_some() || tasks.is_empty();
    if own {
        tasks.extend(self::tasks(&mut cx, &root, &machine, by_affinity));
    }
    across_tasks(&mut cx, &root, &mut tasks);
    overheads_against_their_periods(&mut cx, &root, &machine, &scheduler, &tasks);
    if cx.diags.is_empty() {
        cx.warns.sort_by_key(|(at, _)| *at);
        let warnings = cx.warns.into_iter().map(|(_, d)| d).collect();
        Ok(Scenario {
            path: path.to_string(),
            name: stem(path),
            description,
            machine,
            scheduler,
            tasks,
            warnings,
        })
    } else {
        Err(finish(cx))
    }
}

/// Most files a scenario may include.
pub const MAX_INCLUDES: usize = 64;

/// Key `include`: the tasks of other files (application models, `scenarios/apps/`), each a path
/// relative to this file, or a table `{ file = "...", priority = 1, ... }` that also sets keys of
/// [`INCLUDE_KEYS`] on each of its tasks. An included file holds only `description` and `[[task]]`s; its
/// problems are reported with its own lines.
fn includes(cx: &mut Ctx, root: &Tbl, machine: &Machine, by_affinity: bool) -> Vec<TaskSpec> {
    let Some(v) = root.get("include") else { return Vec::new() };
    let DeValue::Array(items) = v.get_ref() else {
        type_error(cx, v, "include", v.get_ref(), "a list of files, e.g. include = [\"../apps/news.toml\"]");
        return Vec::new();
    };
    if items.len() > MAX_INCLUDES {
        cx.err(v.span().start, "include", format!("{} files: at most {MAX_INCLUDES}", items.len()));
        return Vec::new();
    }
    let mut out = Vec::new();
    // Each file included so far, and whether every inclusion of it renamed its task.
    let mut seen: Vec<(PathBuf, bool)> = Vec::new();
    let mut renamed_to: Vec<String> = Vec::new();
    for (k, item) in items.iter().enumerate() {
        let at = item.span().start;
        let field = format!("include[{k}]");
        let (name, sets) = match item.get_ref() {
            DeValue::String(s) => (s.to_string(), None),
            DeValue::Table(t) => {
                let tb = Tbl { table: Some(t), at, prefix: format!("{field}."), suffix: String::new() };
                tb.check_keys(cx, INCLUDE_KEYS, |_| None);
                let Some(f) = tb.string(cx, "file") else {
                    if tb.get("file").is_none() {
                        cx.err(at, &tb.field("file"), "missing: the file to include");
                    }
                    continue;
                };
                (f.to_string(), Some(tb))
            }
            other => {
                type_error(cx, item, &field, other, "a file name or a table { file = \"...\" }");
                continue;
            }
        };
        // `name`: the file's one task takes this name (one application included several times).
        let rename = match &sets {
            Some(tb) if tb.get("name").is_some() => match tb.string(cx, "name") {
                Some(n) => match name_problem(n) {
                    Some(why) => {
                        cx.err(tb.at_value("name"), &tb.field("name"), why);
                        continue;
                    }
                    None if renamed_to.iter().any(|r| r == n) => {
                        cx.err(
                            tb.at_value("name"),
                            &tb.field("name"),
                            format!("another include already names its task \"{n}\""),
                        );
                        continue;
                    }
                    None => Some(n.to_string()),
                },
                None => continue,
            },
            _ => None,
        };
        let path = cx.resolve(&name);
        let shown = path.display().to_string();
        if let Some((_, all_renamed)) = seen.iter().find(|(p, _)| *p == path) {
            if !(*all_renamed && rename.is_some()) {
                cx.err(
                    at,
                    &field,
                    format!(
                        "{shown} is included twice: its tasks would be there twice (include a file of one \
                         task several times with a `name` for each)"
                    ),
                );
                continue;
            }
        }
        seen.push((path.clone(), rename.is_some()));
        let text = match (cx.loader)(&path) {
            Ok(t) => t,
            Err(e) => {
                cx.err(at, &field, format!("cannot read the included file {shown}: {e}"));
                continue;
            }
        };
        let mut tasks = included(cx, at, &field, &text, &shown, machine, by_affinity);
        if let (Some(n), Some(tb)) = (&rename, &sets) {
            match tasks.as_mut_slice() {
                [t] => {
                    // Its application, if it was the task itself, is renamed with it.
                    if t.app.as_deref() == Some(t.name.as_str()) {
                        t.app = Some(n.clone());
                    }
                    t.name.clone_from(n);
                    renamed_to.push(n.clone());
                }
                [] => {}
                more => {
                    let k = more.len();
                    cx.err(
                        tb.at_value("name"),
                        &tb.field("name"),
                        format!("names the included file's one task, but {shown} has {k}"),
                    );
                    continue;
                }
            }
        }
        if let Some(tb) = sets {
            set_on(cx, &tb, machine, &mut tasks);
        }
        out.extend(tasks);
    }
    out
}

/// The tasks of an included file, read with a context of its own; its problems are moved into `cx`
/// (ordered at the `include` entry, `at`).
fn included(
    cx: &mut Ctx,
    at: usize,
    field: &str,
    text: &str,
    shown: &str,
    machine: &Machine,
    by_affinity: bool,
) -> Vec<TaskSpec> {
    let loader = cx.loader;
    let mut sub = Ctx::new(text, shown, loader);
    let (doc, syntax) = DeTable::parse_recoverable(text);
    let tasks = if syntax.is_empty() {
        let root = Tbl { table: Some(doc.get_ref()), at: 0, prefix: String::new(), suffix: String::new() };
        root.check_keys(&mut sub, &["description", "task"], |k| {
            Some(format!(
                "an included file holds only a description and [[task]]s; `{k}` belongs in the scenario that \
                 includes it"
            ))
        });
        tasks(&mut sub, &root, machine, by_affinity)
    } else {
        for e in syntax {
            let off = e.span().map_or(0, |s| s.start);
            sub.err(off, "", format!("TOML syntax: {}", e.message()));
        }
        Vec::new()
    };
    if sub.diags.is_empty() && tasks.is_empty() {
        cx.err(at, field, format!("{shown} has no [[task]]"));
    }
    let mut tasks = tasks;
    for t in &mut tasks {
        t.file = shown.to_string();
    }
    for (_, d) in sub.diags.drain(..) {
        cx.diags.push((at, d));
    }
    for (_, d) in sub.warns.drain(..) {
        cx.warns.push((at, d));
    }
    tasks
}

/// What an `include` table sets on every task it includes (`priority`, `class`, ...), checked as a
/// task's own keys are.
fn set_on(cx: &mut Ctx, tb: &Tbl, machine: &Machine, tasks: &mut [TaskSpec]) {
    let share = tb.int(cx, "share", 0, i128::from(u32::MAX)).map(|n| n as u32);
    let priority = tb.int(cx, "priority", i128::from(i32::MIN), i128::from(i32::MAX)).map(|n| n as i32);
    let nice = tb.int(cx, "nice", -20, 19).map(|n| n as i8);
    let class = tb.string(cx, "class").map(str::to_string);
    let start = tb.time(cx, "start");
    let stop = tb.time(cx, "stop");
    let discard = match tb.keyword(cx, "discard", &["estimate", "notified", "never"]) {
        Some("estimate") => Some(Discard::Estimate),
        Some("notified") => Some(Discard::Notified),
        Some(_) => Some(Discard::Never),
        None => None,
    };
    if discard.is_some() && !tasks.iter().any(|t| matches!(t.model, Model::Player(_))) {
        cx.err(
            tb.at_value("discard"),
            &tb.field("discard"),
            "sets a player's `discard`, but the file has no player",
        );
    }
    if start.is_some_and(|s| machine.duration > 0 && s >= machine.duration) {
        cx.err(
            tb.at_value("start"),
            &tb.field("start"),
            "is not before machine.duration: the tasks would never run",
        );
    }
    for t in tasks.iter_mut() {
        share.inspect(|&v| t.share = v);
        priority.inspect(|&v| t.priority = v);
        if nice.is_some() {
            t.nice = nice;
        }
        if class.is_some() {
            t.class.clone_from(&class);
        }
        start.inspect(|&v| t.start = v);
        if stop.is_some() {
            t.stop = stop;
        }
        if let (Some(d), Model::Player(p)) = (discard, &mut t.model) {
            // The player adapted to SMART estimates 10 % over (§3.5.1), unless its file says otherwise.
            if let Estimate::Ewma { factor, .. } = &mut p.estimate {
                if p.discard != Discard::Notified && d == Discard::Notified && *factor == 1.0 {
                    *factor = crate::EWMA_FACTOR;
                }
            }
            p.discard = d;
        }
        if t.stop.is_some_and(|s| s <= t.start) {
            cx.err(
                tb.at_value("stop"),
                &tb.field("stop"),
                format!("task \"{}\" would stop before it starts", t.name),
            );
        }
    }
}

/// Checks that span tasks: names unique across the included files and this one, every `server` the
/// name of a task of model `"server"` (resolved to its index).
fn across_tasks(cx: &mut Ctx, root: &Tbl, tasks: &mut [TaskSpec]) {
    let file_of = |t: &TaskSpec| t.source(cx.file).to_string();
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    let mut problems = Vec::new();
    for (i, t) in tasks.iter().enumerate() {
        match seen.get(t.name.as_str()) {
            // Within one file the duplicate was reported where it was read.
            Some(&first) if tasks[first].file != t.file => problems.push((
                file_of(t),
                t.line,
                format!("task \"{}\".name", t.name),
                format!(
                    "duplicate task name \"{}\" (also {}:{})",
                    t.name,
                    file_of(&tasks[first]),
                    tasks[first].line
                ),
            )),
            Some(_) => {}
            None => {
                seen.insert(&t.name, i);
            }
        }
    }
    let names: Vec<(String, bool)> =
        tasks.iter().map(|t| (t.name.clone(), matches!(t.model, Model::Server))).collect();
    for t in tasks.iter_mut() {
        let (file, line, name) = (file_of(t), t.line, t.name.clone());
        let Some(call) = t.send.as_mut() else { continue };
        let why = match names.iter().position(|(n, _)| *n == call.to) {
            Some(k) if names[k].0 == name => Some("a task cannot hand its work to itself".to_string()),
            Some(k) if names[k].1 => {
                call.to_index = k;
                None
            }
            Some(_) => Some(format!("\"{}\" is not of model \"server\"", call.to)),
            None => Some(format!("no task is named \"{}\"", call.to)),
        };
        if let Some(why) = why {
            problems.push((file, line, format!("task \"{name}\".server"), why));
        }
    }
    for (file, line, field, why) in problems {
        cx.err_in(root.at, &file, line, &field, why);
    }
}

/// Byte offset of the value at `path` below the root (no error if absent or of another type).
fn value_at(root: &Tbl, path: &[&str]) -> Option<usize> {
    let mut table = root.table?;
    let (last, parents) = path.split_last()?;
    for p in parents {
        match table.get(*p)?.get_ref() {
            DeValue::Table(t) => table = t,
            _ => return None,
        }
    }
    table.get(*last).map(|v| v.span().start)
}

/// A switch or decision cost is paid at least once per quantum (`quantum` or `slice` of the
/// scheduler) and once per request of a periodic task: one that is not smaller than the shortest of
/// these would leave no time for the work it serves.
fn overheads_against_their_periods(
    cx: &mut Ctx,
    root: &Tbl,
    machine: &Machine,
    scheduler: &SchedulerCfg,
    tasks: &[TaskSpec],
) {
    let mut eaten: Vec<(Nanos, String)> = Vec::new();
    if let Some((key, q)) = scheduler.slice_option() {
        eaten.push((q, format!("scheduler.{key} {}", format_time(q))));
    }
    if let Some((p, name)) = tasks
        .iter()
        .filter_map(|t| match &t.model {
            Model::Periodic(p) => Some((p.period, &t.name)),
            _ => None,
        })
        .min_by_key(|(p, _)| *p)
    {
        eaten.push((p, format!("the period of task \"{name}\" ({})", format_time(p))));
    }
    let Some((limit, what)) = eaten.into_iter().min_by_key(|(q, _)| *q) else { return };
    for (key, cost) in [("switch", machine.overhead.switch), ("decision", machine.overhead.decision)] {
        if cost > 0 && cost >= limit {
            let at = value_at(root, &["machine", "overhead", key]).unwrap_or(0);
            cx.err(
                at,
                &format!("machine.overhead.{key}"),
                format!(
                    "a {key} cost of {} is not smaller than {what}, which pays it at least once: \
                     no time would be left for the work",
                    format_time(cost)
                ),
            );
        }
    }
}

fn finish(mut cx: Ctx) -> ScenarioError {
    cx.diags.sort_by_key(|(at, _)| *at);
    ScenarioError { diagnostics: cx.diags.into_iter().map(|(_, d)| d).collect() }
}

/// The sub-table at `key` of `parent`; reports a value that is not a table.
fn sub_table<'t, 'i>(cx: &mut Ctx, parent: &Tbl<'t, 'i>, key: &str) -> Tbl<'t, 'i> {
    let prefix = format!("{}{key}.", parent.prefix);
    let mut t = Tbl { table: None, at: parent.at, prefix, suffix: parent.suffix.clone() };
    if let Some(v) = parent.get(key) {
        t.at = v.span().start;
        match v.get_ref() {
            DeValue::Table(table) => t.table = Some(table),
            other => type_error(cx, v, &parent.field(key), other, &format!("a table [{key}]")),
        }
    }
    t
}

fn machine(cx: &mut Ctx, root: &Tbl) -> Machine {
    let m = sub_table(cx, root, "machine");
    m.check_keys(cx, MACHINE_KEYS, |_| None);
    let cpus = m.int(cx, "cpus", 1, i128::from(crate::MAX_CPUS)).unwrap_or(1) as u32;
    let hz = m.int(cx, "hz", 0, i128::from(MAX_HZ)).unwrap_or(1000) as u32;
    let billing = match m.keyword(cx, "billing", &["tick", "exact"]) {
        Some("tick") => Billing::Tick,
        _ => Billing::Exact,
    };
    if billing == Billing::Tick && hz == 0 {
        cx.err(
            m.at_value("billing"),
            &m.field("billing"),
            "billing = \"tick\" needs clock ticks, but hz = 0 (tickless)",
        );
    }
    let timer = m.timer(cx, "timer").unwrap_or(TimerKind::Hr);
    if matches!(timer, TimerKind::Tick | TimerKind::Linux24) && hz == 0 {
        cx.err(
            m.at_value("timer"),
            &m.field("timer"),
            format!("timer = \"{timer}\" needs clock ticks, but hz = 0 (tickless)"),
        );
    }
    let duration = match m.get("duration") {
        None => {
            cx.err(m.at, &m.field("duration"), "missing: how long to simulate, e.g. duration = \"60s\"");
            0
        }
        Some(_) => m.positive_time(cx, "duration").unwrap_or(0),
    };
    if u128::from(duration) * u128::from(cpus) > u128::from(MAX_TIME) {
        cx.err(
            m.at_value("duration"),
            &m.field("duration"),
            format!(
                "{} on {cpus} CPUs is more CPU time than a run accounts: duration × cpus is at most 1000000h \
                 (about 114 years), so that its totals fit in 64 bits (here duration <= {})",
                format_time(duration),
                format_time(MAX_TIME / u64::from(cpus))
            ),
        );
    }
    let seed = m.int(cx, "seed", 0, i128::from(u64::MAX)).unwrap_or(1) as u64;
    let sample = m.positive_time(cx, "sample");
    if let Some(sa) = sample {
        let n = duration / sa;
        if sa < MIN_SAMPLE || n > MAX_SAMPLES {
            cx.err(
                m.at_value("sample"),
                &m.field("sample"),
                format!(
                    "sample {} over duration {} would take {n} samples: a sample is at least {} and a run \
                     takes at most {MAX_SAMPLES} (here sample >= {})",
                    format_time(sa),
                    format_time(duration),
                    format_time(MIN_SAMPLE),
                    format_time((duration / MAX_SAMPLES).max(MIN_SAMPLE))
                ),
            );
        }
    }
    let o = sub_table(cx, &m, "overhead");
    o.check_keys(cx, OVERHEAD_KEYS, |_| None);
    let overhead = Overheads {
        tick: o.time(cx, "tick").unwrap_or(0),
        switch: o.time(cx, "switch").unwrap_or(0),
        decision: o.time(cx, "decision").unwrap_or(0),
        cache_bytes: o.size(cx, "cache", parse_size).unwrap_or(0),
        bandwidth: o.size(cx, "bandwidth", parse_bandwidth).unwrap_or(0),
        migration: o.time(cx, "migration").unwrap_or(0),
        tick_cache: o.size(cx, "tick_cache", parse_size).unwrap_or(0),
    };
    if overhead.tick_cache > 0 && (overhead.cache_bytes == 0 || hz == 0) {
        cx.err(
            o.at_value("tick_cache"),
            &o.field("tick_cache"),
            "a clock interrupt's cache refill needs clock interrupts (hz > 0) and a cache to refill (`cache` \
             and `bandwidth`)",
        );
    }
    if hz == 0 && overhead.tick > 0 {
        cx.err(
            o.at_value("tick"),
            &o.field("tick"),
            "a clock-interrupt cost, but hz = 0 (tickless): there are no clock interrupts",
        );
    }
    let tick_refill = overhead.tick_refill(overhead.cache_bytes);
    if hz > 0 && overhead.tick.saturating_add(tick_refill) >= 1_000_000_000 / u64::from(hz) {
        let key = if overhead.tick > 0 { "tick" } else { "tick_cache" };
        cx.err(
            o.at_value(key),
            &o.field(key),
            format!(
                "the clock-interrupt handler ({}{}) would take the whole tick period ({}) at hz = {hz}",
                format_time(overhead.tick),
                if tick_refill > 0 {
                    format!(" and {} of cache refill", format_time(tick_refill))
                } else {
                    String::new()
                },
                format_time(1_000_000_000 / u64::from(hz))
            ),
        );
    }
    if overhead.bandwidth > 0
        && u128::from(overhead.cache_bytes) * 1_000_000_000 / u128::from(overhead.bandwidth)
            > u128::from(MAX_TIME)
    {
        cx.err(
            o.at_value("cache"),
            &o.field("cache"),
            "refilling this cache at this bandwidth takes longer than 1000000h (about 114 years), the \
             longest cost a switch may add: give a smaller cache or a larger bandwidth",
        );
    }
    if overhead.cache_bytes > 0 && overhead.bandwidth == 0 {
        cx.err(
            o.at_value("cache"),
            &o.field("bandwidth"),
            "missing: a cache refill cost needs a memory bandwidth, e.g. bandwidth = \"1GB/s\"",
        );
    }
    let key_lines = m.table.map_or_else(BTreeMap::new, |t| {
        t.iter().map(|(k, _)| (k.get_ref().to_string(), cx.line(k.span().start))).collect()
    });
    Machine { cpus, hz, billing, timer, duration, seed, overhead, sample, key_lines }
}

fn scheduler(cx: &mut Ctx, root: &Tbl) -> SchedulerCfg {
    let s = sub_table(cx, root, "scheduler");
    // Classes stacked by priority make the scheduler the class stack, unless it is named.
    let default = if s.get("classes").is_some() { "stack" } else { "smart" };
    let policy = s.string(cx, "policy").unwrap_or(default).to_string();
    if policy.trim().is_empty() {
        cx.err(s.at_value("policy"), &s.field("policy"), "must not be empty");
    }
    let mut options = BTreeMap::new();
    let mut key_lines = BTreeMap::new();
    if let Some(t) = s.table {
        for (k, v) in t.iter() {
            key_lines.insert(k.get_ref().to_string(), cx.line(k.span().start));
            if k.get_ref() != "policy" {
                options.insert(k.get_ref().to_string(), to_value(v.get_ref()));
            }
        }
    }
    SchedulerCfg { policy, options, key_lines, line: cx.line(s.at) }
}

fn tasks(cx: &mut Ctx, root: &Tbl, machine: &Machine, by_affinity: bool) -> Vec<TaskSpec> {
    let Some(v) = root.get("task") else {
        if root.get("tasks").is_some() {
            return Vec::new(); // already reported as a misspelling
        }
        cx.err(0, "task", "no tasks: add at least one [[task]] with a name and a model");
        return Vec::new();
    };
    let items: &[Val] = match v.get_ref() {
        DeValue::Array(a) => a,
        DeValue::Table(_) => {
            cx.err(v.span().start, "task", "tasks are an array of tables: write [[task]], not [task]");
            return Vec::new();
        }
        other => {
            type_error(cx, v, "task", other, "[[task]] tables");
            return Vec::new();
        }
    };
    if items.is_empty() {
        cx.err(v.span().start, "task", "no tasks: add at least one [[task]]");
    }
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let DeValue::Table(table) = item.get_ref() else {
            type_error(cx, item, &format!("task[{i}]"), item.get_ref(), "a table");
            continue;
        };
        // Names are checked for uniqueness whether or not the rest of the task is valid.
        let name = table.get("name").and_then(|n| n.get_ref().as_str().map(|s| (s, n)));
        if let Some((name, v)) = name.filter(|(s, _)| name_problem(s).is_none()) {
            if let Some(&first) = seen.get(name) {
                cx.err(
                    v.span().start,
                    &format!("task[{i}].name (task \"{name}\")"),
                    format!("duplicate task name \"{name}\" (first used at line {first})"),
                );
            } else {
                seen.insert(name.to_string(), cx.line(v.span().start));
            }
        }
        out.extend(task(cx, i, item.span().start, table, machine, by_affinity));
    }
    if !out.is_empty() && out.len() == items.len() && out.iter().all(|t| t.share == 0) {
        let at = match items[0].get_ref() {
            DeValue::Table(t) => t.get("share").map_or(items[0].span().start, |v| v.span().start),
            _ => items[0].span().start,
        };
        cx.err(
            at,
            "task[0].share",
            "every task has share = 0: nobody could be given any time (give at least one task a share)",
        );
    }
    out
}

/// Most bytes in a task name.
pub const MAX_NAME_BYTES: usize = 255;

/// What is wrong with a task name, if anything: empty, longer than [`MAX_NAME_BYTES`], or holding a
/// control character (names reach terminals, CSV, traces and HTML).
fn name_problem(n: &str) -> Option<String> {
    if n.trim().is_empty() {
        return Some("must not be empty".into());
    }
    if n.len() > MAX_NAME_BYTES {
        return Some(format!("a name of {} bytes: at most {MAX_NAME_BYTES} bytes", n.len()));
    }
    n.char_indices().find(|(_, c)| c.is_control()).map(|(i, c)| {
        format!(
            "holds a control character (U+{:04X}) at byte {i}: names reach terminals, CSV and HTML",
            c as u32
        )
    })
}

fn task(
    cx: &mut Ctx,
    i: usize,
    at: usize,
    table: &DeTable,
    machine: &Machine,
    by_affinity: bool,
) -> Option<TaskSpec> {
    cx.traces.clear();
    let mut t = Tbl { table: Some(table), at, prefix: format!("task[{i}]."), suffix: String::new() };
    let name = match t.get("name") {
        None => {
            cx.err(at, &t.field("name"), "missing: every task needs a unique name");
            None
        }
        Some(_) => match t.string(cx, "name") {
            Some(n) => match name_problem(n) {
                Some(why) => {
                    cx.err(t.at_value("name"), &t.field("name"), why);
                    None
                }
                None => Some(n),
            },
            None => None,
        },
    };
    if let Some(n) = name {
        t.suffix = format!(" (task \"{n}\")");
    }
    let model_names: Vec<&str> = MODELS.iter().map(|(m, _)| *m).collect();
    let model = match t.get("model") {
        None => {
            cx.err(at, &t.field("model"), format!("missing: one of {}", quoted(&model_names)));
            None
        }
        Some(_) => t.keyword(cx, "model", &model_names),
    };

    // Keys: common ones, the model's own; a key of another model says so.
    match model {
        Some(m) => {
            let own = model_keys(m);
            let allowed: Vec<&str> = COMMON_TASK_KEYS.iter().chain(own).copied().collect();
            let all: Vec<&str> =
                COMMON_TASK_KEYS.iter().chain(MODELS.iter().flat_map(|(_, k)| k.iter())).copied().collect();
            t.check_keys(cx, &allowed, |key| {
                let other_models = models_with_key(key);
                if !other_models.is_empty() {
                    let keys = if own.is_empty() {
                        "it has no keys of its own".to_string()
                    } else {
                        format!("whose own keys are: {}", own.join(", "))
                    };
                    return Some(format!(
                        "`{key}` is a key of model {} (this task's model is \"{m}\", {keys})",
                        or_list(&other_models),
                    ));
                }
                let best = closest(key, &all)?;
                let mut msg = format!("unknown key `{key}`; did you mean `{best}`?");
                if !allowed.contains(&best) {
                    msg.push_str(&format!(
                        " (a key of model {}, this task's model is \"{m}\")",
                        or_list(&models_with_key(best))
                    ));
                }
                Some(msg)
            });
        }
        None => {
            // Model unknown: check against every key, so typos are still reported.
            let all: Vec<&str> =
                COMMON_TASK_KEYS.iter().chain(MODELS.iter().flat_map(|(_, k)| k.iter())).copied().collect();
            t.check_keys(cx, &all, |_| None);
        }
    }

    let share = t.int(cx, "share", 0, i128::from(u32::MAX)).unwrap_or(1) as u32;
    let priority = t.int(cx, "priority", i128::from(i32::MIN), i128::from(i32::MAX)).unwrap_or(0) as i32;
    let latency_tolerance = t.time(cx, "latency_tolerance");
    let start = t.time(cx, "start").unwrap_or(0);
    let stop = t.time(cx, "stop");
    let jitter = t.time(cx, "jitter");
    let timer = t.timer(cx, "timer");
    let working_set = t.size(cx, "working_set", parse_size).unwrap_or(0);
    let cpus = affinity(cx, &t, machine.cpus);
    let nice = t.int(cx, "nice", -20, 19).map(|n| n as i8);
    let class = t.string(cx, "class").map(str::to_string);
    if class.as_deref().is_some_and(|c| c.trim().is_empty()) {
        cx.err(
            t.at_value("class"),
            &t.field("class"),
            "must not be empty: the name of a class, e.g. \"fifo\"",
        );
    }
    let reservation = reservation(cx, &t);
    let app = t.string(cx, "app").map(str::to_string);
    if let Some(a) = app.as_deref().and_then(name_problem) {
        cx.err(t.at_value("app"), &t.field("app"), a);
    }
    let bands = t.times(cx, "bands", 8).unwrap_or_default();
    let send =
        if model.is_some_and(|m| model_keys(m).contains(&"server")) { server_call(cx, &t) } else { None };
    if by_affinity && t.get("cpus").is_some_and(|_| cpus.as_ref().is_some_and(|c| c.len() != 1)) {
        cx.err(
            t.at_value("cpus"),
            &t.field("cpus"),
            "scheduler.partition = \"affinity\" binds each task to one CPU: give exactly one, e.g. cpus = [0]",
        );
    } else if by_affinity && t.get("cpus").is_none() {
        cx.err(
            at,
            &t.field("cpus"),
            "missing: scheduler.partition = \"affinity\" binds each task to the one CPU it names, e.g. cpus = [0]",
        );
    }

    if machine.duration > 0 && start >= machine.duration {
        cx.err(
            t.at_value("start"),
            &t.field("start"),
            format!(
                "start {} is not before machine.duration {}: the task would never run",
                format_time(start),
                format_time(machine.duration)
            ),
        );
    }
    if let Some(s) = stop {
        if s <= start {
            cx.err(
                t.at_value("stop"),
                &t.field("stop"),
                format!("stop {} must be after start {}", format_time(s), format_time(start)),
            );
        }
    }
    if let Some(k @ (TimerKind::Tick | TimerKind::Linux24)) = timer {
        if machine.hz == 0 {
            cx.err(
                t.at_value("timer"),
                &t.field("timer"),
                format!("timer = \"{k}\" needs clock ticks, but machine.hz = 0 (tickless)"),
            );
        }
    }

    let model = match model? {
        "cpu" => {
            let work = t.get("work").and_then(|_| t.positive_time(cx, "work"));
            Model::Cpu { work }
        }
        "periodic" => Model::Periodic(periodic(cx, &t, jitter)?),
        "interactive" => interactive(cx, &t)?,
        "server" => Model::Server,
        "player" => Model::Player(player(cx, &t)?),
        "forkwait" => forkwait(cx, &t)?,
        other => unreachable!("model {other} was checked against MODELS"),
    };
    Some(TaskSpec {
        name: name?.to_string(),
        line: cx.line(at),
        model,
        share,
        priority,
        latency_tolerance,
        start,
        stop,
        jitter,
        timer,
        working_set,
        cpus,
        nice,
        class,
        reservation,
        app,
        send,
        bands,
        file: String::new(),
        traces: std::mem::take(&mut cx.traces),
    })
}

/// Keys `runtime`, `dl_deadline` and `dl_period` of a task: a SCHED_DEADLINE reservation, with
/// `1us <= runtime <= dl_deadline <= dl_period` (`dl_deadline` defaults to `dl_period`), as the kernel's
/// `sched_setattr` requires; `runtime` and `dl_period` come together.
fn reservation(cx: &mut Ctx, t: &Tbl) -> Option<sched::Reservation> {
    let runtime = t.time(cx, "runtime");
    let period = t.time(cx, "dl_period");
    let deadline = t.time(cx, "dl_deadline");
    let (runtime, period) = match (runtime, period) {
        (Some(r), Some(p)) => (r, p),
        (None, None) => {
            if t.get("dl_deadline").is_some() {
                cx.err(
                    t.at_value("dl_deadline"),
                    &t.field("dl_deadline"),
                    "a reservation needs runtime and dl_period too, e.g. runtime = \"2ms\", dl_period = \"10ms\"",
                );
            }
            return None;
        }
        (Some(_), None) => {
            if t.get("dl_period").is_none() {
                cx.err(
                    t.at_value("runtime"),
                    &t.field("dl_period"),
                    "missing: a reservation (runtime) needs its dl_period, e.g. dl_period = \"10ms\"",
                );
            }
            return None;
        }
        (None, Some(_)) => {
            if t.get("runtime").is_none() {
                cx.err(
                    t.at_value("dl_period"),
                    &t.field("runtime"),
                    "missing: a reservation (dl_period) needs its runtime, e.g. runtime = \"2ms\"",
                );
            }
            return None;
        }
    };
    let deadline = match (deadline, t.get("dl_deadline")) {
        (Some(d), _) => d,
        (None, Some(_)) => return None, // reported by the reader
        (None, None) => period,
    };
    let mut ok = true;
    if runtime < 1_000 {
        cx.err(
            t.at_value("runtime"),
            &t.field("runtime"),
            format!("{}: a runtime is at least 1us", format_time(runtime)),
        );
        ok = false;
    }
    if runtime > deadline {
        let key = if t.get("dl_deadline").is_some() { "dl_deadline" } else { "dl_period" };
        cx.err(
            t.at_value("runtime"),
            &t.field("runtime"),
            format!(
                "runtime {} is longer than {key} {}: a reservation gives at most its deadline",
                format_time(runtime),
                format_time(deadline)
            ),
        );
        ok = false;
    }
    if deadline > period {
        cx.err(
            t.at_value("dl_deadline"),
            &t.field("dl_deadline"),
            format!(
                "dl_deadline {} is longer than dl_period {} (SCHED_DEADLINE needs deadline <= period)",
                format_time(deadline),
                format_time(period)
            ),
        );
        ok = false;
    }
    ok.then_some(sched::Reservation { runtime, deadline, period })
}

/// Key `cpus` of a task: a non-empty array of distinct CPU numbers below `machine.cpus`, sorted.
fn affinity(cx: &mut Ctx, t: &Tbl, ncpus: u32) -> Option<Vec<u32>> {
    let v = t.get("cpus")?;
    let field = t.field("cpus");
    let DeValue::Array(items) = v.get_ref() else {
        type_error(cx, v, &field, v.get_ref(), "an array of CPU numbers such as [0, 2]");
        return None;
    };
    if items.is_empty() {
        cx.err(v.span().start, &field, "empty: a task must be allowed at least one CPU");
        return None;
    }
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        let n = match item.get_ref() {
            DeValue::Integer(i) => i128::from_str_radix(i.as_str(), i.radix()).ok(),
            _ => None,
        };
        match n {
            Some(n) if (0..i128::from(ncpus)).contains(&n) => out.push(n as u32),
            Some(n) => cx.err(
                item.span().start,
                &field,
                format!("CPU {n} does not exist: machine.cpus = {ncpus} (CPUs 0 to {})", ncpus - 1),
            ),
            None => type_error(cx, item, &field, item.get_ref(), "a CPU number"),
        }
    }
    out.sort_unstable();
    if out.windows(2).any(|w| w[0] == w[1]) {
        cx.err(v.span().start, &field, "a CPU is listed twice");
        return None;
    }
    (out.len() == items.len()).then_some(out)
}

fn or_list(models: &[&str]) -> String {
    models.iter().map(|m| format!("\"{m}\"")).collect::<Vec<_>>().join(" or ")
}

fn required<T>(
    cx: &mut Ctx,
    t: &Tbl,
    key: &str,
    example: &str,
    read: impl FnOnce(&mut Ctx) -> Option<T>,
) -> Option<T> {
    if t.get(key).is_none() {
        cx.err(t.at, &t.field(key), format!("missing: required by this model, e.g. {key} = \"{example}\""));
        return None;
    }
    read(cx)
}

fn count(cx: &mut Ctx, t: &Tbl) -> Option<u64> {
    t.int(cx, "count", 1, i128::from(u64::MAX)).map(|n| n as u64)
}

/// An exec whose mean must be > 0 (CPU per request).
fn cpu_exec(cx: &mut Ctx, t: &Tbl, key: &str) -> Option<Exec> {
    let e = t.exec(cx, key)?;
    if e.max() == Some(0) {
        cx.err(t.at_value(key), &t.field(key), "must be > 0");
        return None;
    }
    Some(e)
}

/// Keys `period` and `interarrival` (exactly one): the time between releases, fixed, or drawn per
/// request; returns the period (the draws' mean) and the draws.
fn spacing(cx: &mut Ctx, t: &Tbl) -> Option<(Nanos, Option<Exec>)> {
    match (t.get("period"), t.get("interarrival")) {
        (Some(_), Some(_)) => {
            cx.err(
                t.at_value("interarrival"),
                &t.field("interarrival"),
                "give `period` (fixed) or `interarrival` (drawn per request), not both",
            );
            None
        }
        (None, Some(_)) => {
            let e = cpu_exec(cx, t, "interarrival")?;
            if e.mean() == 0 {
                cx.err(t.at_value("interarrival"), &t.field("interarrival"), "its mean must be > 0");
                return None;
            }
            Some((e.mean(), Some(e)))
        }
        _ => required(cx, t, "period", "40ms", |cx| t.positive_time(cx, "period")).map(|p| (p, None)),
    }
}

fn periodic(cx: &mut Ctx, t: &Tbl, jitter: Option<Nanos>) -> Option<Periodic> {
    let exec = required(cx, t, "exec", "28ms..30ms", |cx| cpu_exec(cx, t, "exec"));
    let spaced = spacing(cx, t);
    let (period, interarrival) = match spaced {
        Some((p, i)) => (Some(p), i),
        None => (None, None),
    };
    let deadline = t.positive_time(cx, "deadline");
    let count = count(cx, t);
    let on_miss = match t.keyword(cx, "on_miss", &["discard", "finish", "abort"]) {
        Some("finish") => OnMiss::Finish,
        Some("abort") => OnMiss::Abort,
        _ => OnMiss::Discard,
    };
    let on_miss_line = t.get("on_miss").map(|v| cx.line(v.span().start));
    let estimate = estimate(cx, t);
    let notify = notify(cx, t);
    let (exec, period) = (exec?, period?);
    let deadline = deadline.unwrap_or(period);
    let least = exec.min();
    if least > period.min(deadline) {
        let (what, limit, outcome) = if least > period {
            ("period", period, "its requests pile up: the task is always overloaded")
        } else {
            ("deadline", deadline, "every request misses its deadline")
        };
        cx.warn(
            t.at_value("exec"),
            &t.field("exec"),
            format!(
                "exec of at least {} is above the {what} {}: {outcome} (overload is a legitimate experiment; \
                 is it the one meant?)",
                format_time(least),
                format_time(limit)
            ),
        );
    }
    if let Some(j) = jitter {
        if j >= period {
            cx.err(
                t.at_value("jitter"),
                &t.field("jitter"),
                format!("jitter {} must be shorter than the period {}", format_time(j), format_time(period)),
            );
        }
    }
    if let Notify::After(n) = notify {
        if n > deadline {
            cx.err(
                t.at_value("notify"),
                &t.field("notify"),
                format!(
                    "notify {} is after the deadline {}: the notice would come too late to act on",
                    format_time(n),
                    format_time(deadline)
                ),
            );
        }
    }
    let input_delay = t.exec(cx, "input_delay");
    let time_constraint = t.boolean(cx, "time_constraint").unwrap_or(true);
    let busy_wait = t.positive_time(cx, "busy_wait").unwrap_or(0);
    if busy_wait >= period && t.get("busy_wait").is_some() {
        cx.err(
            t.at_value("busy_wait"),
            &t.field("busy_wait"),
            format!(
                "busy_wait {} must be shorter than the period {}: the task would never sleep",
                format_time(busy_wait),
                format_time(period)
            ),
        );
    }
    if interarrival.is_some() && t.get("deadline").is_none() {
        cx.err(
            t.at,
            &t.field("deadline"),
            "missing: requests that come at drawn times need a `deadline` (it defaults to a fixed period)",
        );
    }
    Some(Periodic {
        exec,
        period,
        interarrival,
        input_delay,
        deadline,
        count,
        on_miss,
        on_miss_line,
        estimate: estimate?,
        notify,
        time_constraint,
        busy_wait,
    })
}

/// Keys `server`, `server_exec` and `wait`; the server's name is resolved once every task is read.
fn server_call(cx: &mut Ctx, t: &Tbl) -> Option<ServerCall> {
    let Some(to) = t.string(cx, "server") else {
        for k in ["server_exec", "wait"] {
            if t.get(k).is_some() {
                cx.err(t.at_value(k), &t.field(k), "only applies with `server` (the task it hands work to)");
            }
        }
        return None;
    };
    let exec = required(cx, t, "server_exec", "1ms..2ms", |cx| cpu_exec(cx, t, "server_exec"))?;
    let wait = t.boolean(cx, "wait").unwrap_or(false);
    Some(ServerCall { to: to.to_string(), to_index: usize::MAX, exec, wait })
}

fn player(cx: &mut Ctx, t: &Tbl) -> Option<Player> {
    let exec = required(cx, t, "exec", "28ms", |cx| cpu_exec(cx, t, "exec"));
    let spaced = spacing(cx, t);
    let count = count(cx, t);
    let window = t.time(cx, "window").unwrap_or(20 * 1_000_000);
    let delay = t.time(cx, "delay");
    let pace = t.boolean(cx, "pace").unwrap_or(true);
    let discard = match t.keyword(cx, "discard", &["estimate", "notified", "never"]) {
        Some("notified") => Discard::Notified,
        Some("never") => Discard::Never,
        _ => Discard::Estimate,
    };
    let alpha = t.float(cx, "estimate_alpha").unwrap_or(crate::EWMA_ALPHA);
    if !(alpha > 0.0 && alpha <= 1.0) {
        cx.err(
            t.at_value("estimate_alpha"),
            &t.field("estimate_alpha"),
            format!("{alpha} is out of range: the weight of the newest frame is in (0, 1]"),
        );
    }
    let default_factor = if discard == Discard::Notified { crate::EWMA_FACTOR } else { 1.0 };
    let factor = t.float(cx, "estimate_factor").unwrap_or(default_factor);
    if !(factor > 0.0 && factor.is_finite()) {
        cx.err(
            t.at_value("estimate_factor"),
            &t.field("estimate_factor"),
            format!("{factor} is out of range: must be > 0 (1.1 = 10% margin)"),
        );
    }
    let initial = t.positive_time(cx, "estimate_initial");
    let ring = t.int(cx, "ring", 0, MAX_RING).map(|n| n as u64);
    let adapt = match t.keyword(cx, "adapt", &["none", "late", "availability"]) {
        Some("late") => Adapt::Late,
        Some("availability") => Adapt::Availability,
        _ => Adapt::None,
    };
    if adapt != Adapt::None && t.get("interarrival").is_some() {
        cx.err(
            t.at_value("adapt"),
            &t.field("adapt"),
            "a player adapts its rate to whole periods: it needs a fixed `period`, not `interarrival`",
        );
    }
    if ring.is_some() && t.get("interarrival").is_some() {
        cx.err(
            t.at_value("ring"),
            &t.field("ring"),
            "a ring is filled by a device at a fixed `period`; it cannot take `interarrival`",
        );
    }
    let (exec, (period, interarrival)) = (exec?, spaced?);
    let estimate = Estimate::Ewma { alpha, factor, initial };
    Some(Player {
        exec,
        period,
        interarrival,
        count,
        window,
        delay: delay.unwrap_or(period),
        pace,
        discard,
        ring,
        adapt,
        estimate,
    })
}

/// Most slots a player's `ring` may have (a device's frame buffers: a handful in practice).
const MAX_RING: i128 = 1 << 16;

fn estimate(cx: &mut Ctx, t: &Tbl) -> Option<Estimate> {
    let kind = match t.get("estimate") {
        None => Some("ewma"),
        Some(v) => match v.get_ref() {
            DeValue::String(s) if s == "ewma" || s == "exact" => Some(s.as_ref()),
            DeValue::String(s) => match parse_bounded_time(s) {
                Ok(0) => {
                    cx.err(v.span().start, &t.field("estimate"), "must be > 0");
                    return None;
                }
                Ok(_) => None,
                Err(e) => {
                    cx.err(
                        v.span().start,
                        &t.field("estimate"),
                        format!("expected \"ewma\", \"exact\" or a time: {e}"),
                    );
                    return None;
                }
            },
            _ => {
                // Reports the type (or a missing unit) like any time.
                t.time(cx, "estimate");
                return None;
            }
        },
    };
    let ewma_keys = ["estimate_alpha", "estimate_factor", "estimate_initial"];
    if kind != Some("ewma") {
        for k in ewma_keys {
            if t.get(k).is_some() {
                cx.err(t.at_value(k), &t.field(k), "only applies with estimate = \"ewma\"");
            }
        }
    }
    match kind {
        Some("exact") => Some(Estimate::Exact),
        Some(_) => {
            let mut ok = true;
            let alpha = t.float(cx, "estimate_alpha").unwrap_or(crate::EWMA_ALPHA);
            if !(alpha > 0.0 && alpha <= 1.0) {
                cx.err(
                    t.at_value("estimate_alpha"),
                    &t.field("estimate_alpha"),
                    format!("{alpha} is out of range: the weight of the newest request is in (0, 1]"),
                );
                ok = false;
            }
            let factor = t.float(cx, "estimate_factor").unwrap_or(crate::EWMA_FACTOR);
            if !(factor > 0.0 && factor.is_finite()) {
                cx.err(
                    t.at_value("estimate_factor"),
                    &t.field("estimate_factor"),
                    format!("{factor} is out of range: must be > 0 (1.1 = 10% margin)"),
                );
                ok = false;
            }
            let initial = t.positive_time(cx, "estimate_initial");
            ok.then_some(Estimate::Ewma { alpha, factor, initial })
        }
        None => t.time(cx, "estimate").map(Estimate::Fixed),
    }
}

fn notify(cx: &mut Ctx, t: &Tbl) -> Notify {
    let Some(v) = t.get("notify") else {
        return Notify::Asap;
    };
    match v.get_ref() {
        DeValue::String(s) => match s.as_ref() {
            "asap" => Notify::Asap,
            "deadline" => Notify::AtDeadline,
            "never" => Notify::Never,
            other => match parse_bounded_time(other) {
                Ok(n) => Notify::After(n),
                Err(e) => {
                    cx.err(
                        v.span().start,
                        &t.field("notify"),
                        format!(
                            "expected \"asap\", \"deadline\", \"never\" or a time after the release: {e}"
                        ),
                    );
                    Notify::Asap
                }
            },
        },
        _ => {
            t.time(cx, "notify");
            Notify::Asap
        }
    }
}

fn interactive(cx: &mut Ctx, t: &Tbl) -> Option<Model> {
    let think = required(cx, t, "think", "exp(500ms)", |cx| t.exec(cx, "think"));
    let burst = required(cx, t, "burst", "1ms..5ms", |cx| cpu_exec(cx, t, "burst"));
    let count = count(cx, t);
    Some(Model::Interactive { think: think?, burst: burst?, count })
}

fn forkwait(cx: &mut Ctx, t: &Tbl) -> Option<Model> {
    let fork = required(cx, t, "fork", "20ms", |cx| cpu_exec(cx, t, "fork"));
    let child = required(cx, t, "child", "normal(129ms, 6ms)", |cx| cpu_exec(cx, t, "child"));
    let children = t.int(cx, "children", 1, 1 << 20).map_or(1, |n| n as u64);
    let count = count(cx, t);
    Some(Model::ForkWait { fork: fork?, child: child?, children, count })
}

#[cfg(test)]
#[path = "parse_tests.rs"]
mod tests;
