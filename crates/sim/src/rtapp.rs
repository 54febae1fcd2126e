//! # Importing rt-app workloads (`smartsim import rt-app FILE.json`)
//!
//! [rt-app](https://github.com/scheduler-tools/rt-app) describes threads in JSON: each thread runs a
//! sequence of events (`run`, `runtime`, `sleep`, `timer`, locks, signals, ...) in a loop, under a
//! Linux scheduling policy. [`convert`] turns the subset that has a smartsim equivalent into a
//! scenario (TOML text) under Linux's class stack (`[scheduler] classes = "linux"`: SCHED_DEADLINE in
//! `cbs`, SCHED_FIFO/RR in `rt`, SCHED_OTHER in `eevdf`), and refuses everything else with an
//! [`Error`] naming the JSON path of what does not map (`tasks.thread0.phases.p1.lock`), or the line
//! and column of a syntax error. Nothing is dropped silently: the keys of rt-app's `global` object
//! that only concern rt-app's host (its logs, calibration, page locking) are listed in a comment of
//! the scenario.
//!
//! The mapping, per thread (docs/scenario.md, "Importing rt-app", has it as a table):
//!
//! | rt-app | smartsim |
//! |---|---|
//! | `run` X then `timer` period P (or `timer` then `run`) | `periodic`, `exec` X, `period` P (`start` + P when the timer comes first), `on_miss = "finish"` |
//! | `sleep` S then `run` X | `interactive`, `think` S, `burst` X |
//! | `run` X then `sleep` S | `interactive`, `think` S, `burst` X: the first burst comes one sleep later than rt-app's |
//! | `run` X alone | `cpu` (with `work` = X × loops when the loop is finite) |
//! | `runtime` X | as `run` X (CPU time; rt-app's runtime is wall-clock time, the same unless preempted) |
//! | `loop` N (−1: forever) | `count` (none: until the end) |
//! | `instance` N | N tasks named `name-0` .. `name-(N−1)` |
//! | `delay` D | `start` D |
//! | several `phases`, each `run` + `timer` with one timer | a task per phase (and per loop of the thread), each with its `start` and `count` |
//! | `policy` SCHED_OTHER, `priority` (nice) | `class = "fair"`, `nice` |
//! | `policy` SCHED_FIFO / SCHED_RR, `priority` | `class = "fifo"` / `"rr"`, `priority` |
//! | `policy` SCHED_DEADLINE, `dl-runtime`, `dl-period`, `dl-deadline` | `class = "deadline"`, `runtime`, `dl_period`, `dl_deadline` |
//! | `cpus` | `cpus` (below `--cpus`) |
//! | `global.duration` (seconds) | `machine.duration` (`--duration` when −1 or absent) |
//! | `global.default_policy` | the policy of threads without one |
//!
//! Refused: the events `lock`, `unlock`, `wait`, `signal`, `broad`, `sync`, `barrier`, `suspend`,
//! `resume`, `sem_post`, `sem_wait`, `fork`, `yield`, `mem`, `memrun`, `iorun`; SCHED_BATCH and
//! SCHED_IDLE; a custom slice (`dl-runtime` of a SCHED_OTHER thread); `util_min`, `util_max`,
//! `taskgroup`, `nodes_membind`; policy or affinity changes between phases; a timer shared between
//! threads (a `ref` not starting with `unique` used by several); sequences no model has (two runs
//! with a sleep between, a sleep and a timer); phases other than run + timer with one timer; a
//! thread with no run.
//!
//! rt-app's JSON is read as rt-app (json-c) reads it: C comments (`/* */`, `//`) and trailing commas
//! are accepted; an event given twice in a thread or phase (`"run": 10, "sleep": 5, "run": 10`, which
//! rt-app's `workgen` numbers) is run in its place, any other key given twice is refused, since one of
//! the two would be lost; an event key is matched by its prefix, as rt-app does (`run0`, `sleep1`,
//! `timer_a`).

use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::path::Path;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

/// At most this many tasks come out of one file (instances and phases counted): the simulator runs
/// 100,000 tasks (docs/measurements.md); `instance = 1000000000` is refused, not allocated.
pub const MAX_TASKS: u64 = 100_000;

/// The longest time an event may give, in microseconds: rt-app reads times as C `int`s.
pub const MAX_MICROS: i128 = i32::MAX as i128;

/// What the command line adds to the file.
#[derive(Debug, Clone)]
pub struct Options {
    /// The simulated machine's CPUs (`machine.cpus`); an rt-app `cpus` list must stay below it.
    pub cpus: u32,
    /// The simulated time (ns), overriding `global.duration`; required when that is −1 or absent.
    pub duration_ns: Option<u64>,
}

impl Default for Options {
    fn default() -> Options {
        Options { cpus: 1, duration_ns: None }
    }
}

/// Why a file was not converted: its name, where in it, and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    /// The file, as given.
    pub file: String,
    /// Where: a line and column (syntax), a JSON path (meaning), or nowhere (the file itself).
    pub at: Where,
    /// What is wrong, and what would do instead when there is something.
    pub message: String,
}

/// Where an [`Error`] is in the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Where {
    /// A line and column (1-based), for JSON syntax.
    Position {
        /// The line.
        line: usize,
        /// The column.
        column: usize,
    },
    /// A JSON path such as `tasks.thread0.phases.p1.lock`.
    Path(String),
    /// The file as a whole (it could not be read).
    File,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.at {
            Where::Position { line, column } => write!(f, "{}:{line}:{column}: {}", self.file, self.message),
            Where::Path(p) if !p.is_empty() => write!(f, "{}: {p}: {}", self.file, self.message),
            Where::Path(_) | Where::File => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

impl std::error::Error for Error {}

/// Reads `path` (a regular file of at most 64 MiB) and converts it ([`convert`]).
pub fn convert_file(path: &Path, opts: &Options) -> Result<String, Error> {
    let file = path.display().to_string();
    let src = workload::read_capped(path, workload::MAX_SCENARIO_BYTES).map_err(|e| Error {
        file: file.clone(),
        at: Where::File,
        message: format!("cannot read the rt-app file: {e}"),
    })?;
    convert(&src, &file, opts)
}

/// Converts rt-app's JSON `src` (from `file`, which messages name) into a scenario's TOML text. The
/// scenario is parsed and its policy built before it is returned, so what comes back runs.
pub fn convert(src: &str, file: &str, opts: &Options) -> Result<String, Error> {
    let err = |at: Where, message: String| Error { file: file.to_string(), at, message };
    let stripped =
        strip_comments(src).map_err(|(line, column, m)| err(Where::Position { line, column }, m))?;
    let root: J = serde_json::from_str(&stripped).map_err(|e| {
        let m = e.to_string();
        // serde_json ends its message with " at line L column C": the position goes in front.
        let m = m.rsplit_once(" at line ").map(|(a, _)| a.to_string()).unwrap_or(m);
        err(Where::Position { line: e.line(), column: e.column() }, format!("JSON: {m}"))
    })?;
    let toml = Converter { opts, file }.root(&root).map_err(|(p, m)| err(Where::Path(p.to_string()), m))?;
    let name = Path::new(file).with_extension("toml").display().to_string();
    let scn = workload::parse_str(&toml, &name).map_err(|e| {
        err(Where::File, format!("the scenario made from it is refused (a bug of the importer): {e}"))
    })?;
    crate::simulator(&scn, None)
        .map_err(|e| err(Where::File, format!("the scenario made from it cannot run: {e:#}")))?;
    Ok(toml)
}

// ---- reading rt-app's JSON --------------------------------------------------------------------

/// Blanks C comments and trailing commas (`{"a": 1,}`), as json-c accepts them, keeping every other
/// byte where it was so that serde_json's lines and columns are the file's.
fn strip_comments(src: &str) -> Result<String, (usize, usize, String)> {
    let b = src.as_bytes();
    let mut out = b.to_vec();
    let mut i = 0;
    let mut in_string = false;
    let mut comma: Option<usize> = None;
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    while i < b.len() {
        let c = b[i];
        if in_string {
            match c {
                b'\\' => i += 2,
                b'"' => {
                    in_string = false;
                    i += 1
                }
                _ => i += 1,
            }
            continue;
        }
        match (c, b.get(i + 1)) {
            (b'"', _) => {
                in_string = true;
                comma = None;
                i += 1;
            }
            (b'/', Some(b'*')) => {
                let Some(len) = src[i + 2..].find("*/") else {
                    let (line, column) = position(src, i);
                    return Err((line, column, "a comment /* is never closed by */".into()));
                };
                let end = i + 2 + len + 2;
                blank(&mut out, i, end);
                i = end;
            }
            (b'/', Some(b'/')) => {
                let end = src[i..].find('\n').map_or(b.len(), |n| i + n);
                blank(&mut out, i, end);
                i = end;
            }
            (b',', _) => {
                comma = Some(i);
                i += 1;
            }
            (b'}' | b']', _) => {
                if let Some(k) = comma.take() {
                    out[k] = b' ';
                }
                i += 1;
            }
            (b' ' | b'\t' | b'\r' | b'\n', _) => i += 1,
            _ => {
                comma = None;
                i += 1;
            }
        }
    }
    // Only ASCII bytes and whole comments were replaced by spaces: still UTF-8.
    String::from_utf8(out).map_err(|_| (1, 1, "not UTF-8 text".into()))
}

/// The 1-based line and column of byte `at`.
fn position(src: &str, at: usize) -> (usize, usize) {
    let before = &src[..at];
    let line = before.matches('\n').count() + 1;
    let column = at - before.rfind('\n').map_or(0, |n| n + 1) + 1;
    (line, column)
}

/// A JSON value that keeps an object's keys in order and refuses a key given twice.
#[derive(Debug, Clone, PartialEq)]
enum J {
    Null,
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(String),
    Arr(Vec<J>),
    Obj(Vec<(String, J)>),
}

impl<'de> Deserialize<'de> for J {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<J, D::Error> {
        d.deserialize_any(JVisitor)
    }
}

struct JVisitor;

impl<'de> Visitor<'de> for JVisitor {
    type Value = J;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E>(self) -> Result<J, E> {
        Ok(J::Null)
    }
    fn visit_bool<E>(self, v: bool) -> Result<J, E> {
        Ok(J::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<J, E> {
        Ok(J::Int(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<J, E> {
        Ok(J::Int(v.into()))
    }
    fn visit_f64<E>(self, v: f64) -> Result<J, E> {
        Ok(J::Float(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<J, E> {
        Ok(J::Str(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<J, E> {
        Ok(J::Str(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<J, A::Error> {
        let mut v = Vec::new();
        while let Some(x) = a.next_element()? {
            v.push(x);
        }
        Ok(J::Arr(v))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<J, A::Error> {
        // Every entry is kept, in order, a key given twice too: rt-app's workgen accepts an event
        // twice (`"run": 10, "sleep": 5, "run": 10`); any other key twice is refused where it is read.
        let mut v = Vec::new();
        while let Some(k) = a.next_key::<String>()? {
            let x = a.next_value()?;
            v.push((k, x));
        }
        Ok(J::Obj(v))
    }
}

impl J {
    fn kind(&self) -> &'static str {
        match self {
            J::Null => "null",
            J::Bool(_) => "a boolean",
            J::Int(_) => "an integer",
            J::Float(_) => "a number with a fraction",
            J::Str(_) => "a string",
            J::Arr(_) => "an array",
            J::Obj(_) => "an object",
        }
    }
}

/// A JSON path, printed `tasks.thread0.phases.p1.run` (keys other than letters, digits, `_` and `-`
/// quoted: `tasks."my thread"`).
#[derive(Debug, Clone, Default, PartialEq)]
struct JPath(Vec<String>);

impl JPath {
    fn key(&self, k: &str) -> JPath {
        let mut p = self.0.clone();
        p.push(k.to_string());
        JPath(p)
    }
}

impl fmt::Display for JPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, k) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(".")?;
            }
            let plain = !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
            if plain {
                f.write_str(k)?;
            } else {
                write!(f, "{k:?}")?;
            }
        }
        Ok(())
    }
}

type R<T> = Result<T, (JPath, String)>;

fn fail<T>(p: &JPath, m: impl Into<String>) -> R<T> {
    Err((p.clone(), m.into()))
}

/// An object whose keys are each given once.
fn object<'a>(v: &'a J, p: &JPath, what: &str) -> R<&'a [(String, J)]> {
    object_with(v, p, what, false)
}

/// An object whose keys are each given once, but for events when `events` (a thread's or a phase's
/// events may repeat, as rt-app's workgen accepts them: each is run in its place).
fn object_with<'a>(v: &'a J, p: &JPath, what: &str, events: bool) -> R<&'a [(String, J)]> {
    let o = match v {
        J::Obj(o) => o,
        other => return fail(p, format!("{what} is an object, not {}", other.kind())),
    };
    let mut seen = HashSet::new();
    for (k, _) in o {
        let repeatable = events && event_of(k).is_some();
        if !seen.insert(k.as_str()) && !repeatable {
            return fail(&p.key(k), "given twice in one object: one of the two would be lost");
        }
    }
    Ok(o)
}

/// An integer in `lo..=hi`; `unit` says what it counts in messages.
fn int(v: &J, p: &JPath, lo: i128, hi: i128, unit: &str) -> R<i128> {
    match v {
        J::Int(n) if (lo..=hi).contains(n) => Ok(*n),
        J::Int(n) if *n < lo && *n < 0 && lo >= 0 => {
            fail(p, format!("{n} is negative; {unit} is {lo} to {hi}"))
        }
        J::Int(n) => fail(p, format!("{n} is out of range: {unit} is {lo} to {hi}")),
        J::Float(x) => fail(p, format!("{x} is not an integer; {unit} is an integer, {lo} to {hi}")),
        other => fail(p, format!("{unit} is an integer ({lo} to {hi}), not {}", other.kind())),
    }
}

fn string<'a>(v: &'a J, p: &JPath, what: &str) -> R<&'a str> {
    match v {
        J::Str(s) => Ok(s),
        other => fail(p, format!("{what} is a string, not {}", other.kind())),
    }
}

/// A `loop`: −1 (forever, `None`) or a count ≥ 1.
fn loops(v: &J, p: &JPath) -> R<Option<u64>> {
    match int(v, p, -1, MAX_MICROS, "a loop")? {
        -1 => Ok(None),
        0 => fail(p, "loop 0 runs nothing; give -1 (forever) or a count from 1"),
        n => Ok(Some(n as u64)),
    }
}

// ---- rt-app's model ---------------------------------------------------------------------------

/// rt-app's events, in the order rt-app matches a key's prefix against them (`runtime` before `run`,
/// `memrun` before `mem`).
const EVENTS: &[&str] = &[
    "lock", "unlock", "wait", "signal", "broad", "sync", "sleep", "runtime", "run", "timer", "suspend",
    "resume", "memrun", "mem", "iorun", "yield", "barrier", "fork", "sem_post", "sem_wait",
];

/// The event a key is, by rt-app's prefix rule.
fn event_of(key: &str) -> Option<&'static str> {
    EVENTS.iter().copied().find(|e| key.starts_with(e))
}

/// Why an event has no smartsim equivalent.
fn unmapped_event(e: &str) -> &'static str {
    match e {
        "lock" | "unlock" => "smartsim has no mutexes between tasks",
        "wait" | "signal" | "broad" | "sync" | "barrier" | "suspend" | "resume" | "sem_post" | "sem_wait" => {
            "smartsim's tasks do not wake one another (only a client and its server do)"
        }
        "fork" => "smartsim's tasks are all there from the start (`start` delays one)",
        "yield" => "smartsim's tasks do not yield",
        "mem" | "memrun" | "iorun" => "smartsim simulates CPU time only, no memory or I/O traffic",
        _ => "smartsim has no such event",
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Ev {
    Run(u64),
    Sleep(u64),
    Timer { name: String, period: u64, path: JPath },
}

/// What one phase does, per loop.
#[derive(Debug, Clone)]
enum Shape {
    /// Runs and nothing else.
    Busy { run: u64 },
    /// Runs once per timer period (`timer_first`: the timer comes before the run).
    Periodic { run: u64, period: u64, timer_first: bool, timer: String, timer_path: JPath },
    /// Runs and sleeps in turn (`sleep_first`: the sleep comes before the run).
    Alternating { run: u64, sleep: u64, sleep_first: bool },
}

/// A phase: its shape and its loop.
#[derive(Debug, Clone)]
struct Phase {
    name: Option<String>,
    path: JPath,
    shape: Shape,
    loops: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Policy {
    Other,
    Fifo,
    Rr,
    Deadline,
}

/// A thread's scheduling: the scenario's class and its keys.
#[derive(Debug, Clone)]
enum Sched {
    Fair { nice: i128 },
    Fifo { priority: i128 },
    Rr { priority: i128 },
    Deadline { runtime: u64, period: u64, deadline: u64 },
}

fn policy(v: &J, p: &JPath) -> R<Policy> {
    match string(v, p, "a policy")? {
        "SCHED_OTHER" => Ok(Policy::Other),
        "SCHED_FIFO" => Ok(Policy::Fifo),
        "SCHED_RR" => Ok(Policy::Rr),
        "SCHED_DEADLINE" => Ok(Policy::Deadline),
        s @ ("SCHED_BATCH" | "SCHED_IDLE") => fail(
            p,
            format!("{s} has no smartsim class (the linux stack's fair class runs SCHED_OTHER only); use SCHED_OTHER"),
        ),
        s => fail(
            p,
            format!("{s:?} is not an rt-app policy (SCHED_OTHER, SCHED_FIFO, SCHED_RR, SCHED_DEADLINE, SCHED_BATCH, SCHED_IDLE)"),
        ),
    }
}

/// A thread as read from the file.
#[derive(Debug)]
struct Thread {
    name: String,
    path: JPath,
    instances: u64,
    delay_us: u64,
    sched: Sched,
    cpus: Option<Vec<u32>>,
    phases: Vec<Phase>,
    /// The thread's own loop over its phases (`None`: forever); with no `phases` object it is 1.
    thread_loops: Option<u64>,
}

/// rt-app's `global` keys that only concern its host (logs, calibration, memory locking), listed in
/// the scenario's header.
const HOST_KEYS: &[&str] = &[
    "calibration",
    "pi_enabled",
    "lock_pages",
    "logdir",
    "log_basename",
    "log_size",
    "ftrace",
    "gnuplot",
    "io_device",
    "mem_buffer_size",
    "cumulative_slack",
];

struct Converter<'a> {
    opts: &'a Options,
    file: &'a str,
}

impl Converter<'_> {
    fn root(&self, root: &J) -> R<String> {
        let top = JPath::default();
        let entries = object(root, &top, "an rt-app file")?;
        let mut tasks = None;
        let mut global: &[(String, J)] = &[];
        let mut resources = false;
        for (k, v) in entries {
            let p = top.key(k);
            match k.as_str() {
                "tasks" => tasks = Some((object(v, &p, "tasks")?, p)),
                "global" => global = object(v, &p, "global")?,
                "resources" => {
                    object(v, &p, "resources")?;
                    resources = true;
                }
                _ => {
                    return fail(
                        &p,
                        "not an rt-app key (the file holds \"tasks\", \"global\" and \"resources\")",
                    )
                }
            }
        }
        let Some((tasks, tasks_path)) = tasks else {
            return fail(&top, "no \"tasks\" object: rt-app needs one");
        };

        // global
        let gp = top.key("global");
        let mut duration_s: Option<u64> = None;
        let mut default_policy = Policy::Other;
        let mut host = Vec::new();
        for (k, v) in global {
            let p = gp.key(k);
            match k.as_str() {
                "duration" => {
                    duration_s = match int(v, &p, -1, MAX_MICROS, "a duration in seconds")? {
                        -1 => None,
                        0 => return fail(&p, "0 s: give a duration from 1 s, or -1 and --duration"),
                        n => Some(n as u64),
                    }
                }
                "default_policy" => default_policy = policy(v, &p)?,
                k if HOST_KEYS.contains(&k) => host.push(k.to_string()),
                // In rt-app's own example files, and read by no rt-app version: listed, not simulated.
                "frag" => host.push("frag (not read by rt-app)".to_string()),
                _ => {
                    return fail(
                        &p,
                        format!(
                            "not a global key of rt-app's that smartsim knows (duration, default_policy, and the \
                             host's {})",
                            HOST_KEYS.join(", ")
                        ),
                    )
                }
            }
        }
        let duration_ns = match (self.opts.duration_ns, duration_s) {
            (Some(d), _) => d,
            (None, Some(s)) => s * 1_000_000_000,
            (None, None) => return fail(
                &gp.key("duration"),
                "absent or -1 (until every thread ends): a scenario runs for a given time; give --duration",
            ),
        };

        if u128::from(duration_ns) * u128::from(self.opts.cpus) > u128::from(sched::MAX_TIME) {
            let at = if self.opts.duration_ns.is_some() { top.key("--duration") } else { gp.key("duration") };
            return fail(
                &at,
                format!(
                    "{} on {} CPU(s): a scenario's duration × CPUs is at most 1000000h",
                    ns(duration_ns),
                    self.opts.cpus
                ),
            );
        }
        if tasks.is_empty() {
            return fail(&tasks_path, "no thread: rt-app needs at least one");
        }
        let mut threads = Vec::new();
        let mut total: u64 = 0;
        for (name, v) in tasks {
            let p = tasks_path.key(name);
            let t = self.thread(name, v, &p, default_policy)?;
            let per_instance = self.tasks_per_instance(&t, duration_ns);
            total = total.saturating_add(t.instances.saturating_mul(per_instance));
            if total > MAX_TASKS {
                return fail(
                    &p,
                    format!("the file makes more than {MAX_TASKS} tasks (instances × phases × loops), smartsim's limit"),
                );
            }
            threads.push(t);
        }
        if total == 0 {
            return fail(&tasks_path, "every thread has \"instance\": 0: nothing would run");
        }
        self.check_timers(&threads)?;
        self.check_admission(&threads)?;
        for t in &threads {
            let first = match &t.phases[0].shape {
                Shape::Periodic { period, timer_first: true, .. } => period.saturating_mul(1000),
                _ => 0,
            };
            if t.delay_us.saturating_mul(1000).saturating_add(first) >= duration_ns {
                return fail(
                    &t.path.key("delay"),
                    format!(
                        "{} µs: the thread's first run would come at or after the end of the run ({})",
                        t.delay_us,
                        ns(duration_ns)
                    ),
                );
            }
        }
        self.write(&threads, duration_ns, &host, resources)
    }

    fn thread(&self, name: &str, v: &J, p: &JPath, default_policy: Policy) -> R<Thread> {
        if name.is_empty() || name.len() > 200 || name.chars().any(char::is_control) {
            return fail(
                p,
                "a thread's name is 1 to 200 bytes without control characters (a scenario's task name)",
            );
        }
        let entries = object_with(v, p, "a thread", true)?;
        let mut instances = 1u64;
        let mut delay_us = 0u64;
        let mut loop_key: Option<(Option<u64>, JPath)> = None;
        let mut phases_obj: Option<(&[(String, J)], JPath)> = None;
        let mut pol: Option<Policy> = None;
        let mut priority: Option<(i128, JPath)> = None;
        let mut dl: [Option<(u64, JPath)>; 3] = [None, None, None];
        let mut cpus = None;
        let mut has_events = None;
        for (k, v) in entries {
            let kp = p.key(k);
            match k.as_str() {
                "instance" => instances = int(v, &kp, 0, MAX_TASKS as i128, "an instance count")? as u64,
                "delay" => delay_us = int(v, &kp, 0, MAX_MICROS, "a delay in µs")? as u64,
                "loop" => loop_key = Some((loops(v, &kp)?, kp)),
                "phases" => phases_obj = Some((object(v, &kp, "phases")?, kp)),
                "policy" => pol = Some(policy(v, &kp)?),
                "priority" => {
                    priority = Some((int(v, &kp, i32::MIN.into(), i32::MAX.into(), "a priority")?, kp))
                }
                "dl-runtime" | "dl-period" | "dl-deadline" => {
                    let i =
                        ["dl-runtime", "dl-period", "dl-deadline"].iter().position(|x| x == k).unwrap_or(0);
                    dl[i] = Some((int(v, &kp, 0, MAX_MICROS, "a time in µs")? as u64, kp));
                }
                "cpus" => cpus = Some(self.cpus(v, &kp)?),
                "period" | "deadline" => {
                    return fail(&kp, format!("rt-app's legacy deadline key; write \"dl-{k}\""));
                }
                "util_min" | "util_max" => {
                    return fail(
                        &kp,
                        "utilisation clamping has no smartsim equivalent (its CPUs have no speeds)",
                    )
                }
                "taskgroup" => return fail(&kp, "task groups (cgroups) have no smartsim equivalent"),
                "nodes_membind" => return fail(&kp, "NUMA memory binding has no smartsim equivalent"),
                _ if event_of(k).is_some() => {
                    has_events.get_or_insert(kp);
                }
                _ => return fail(&kp, "not an rt-app thread key (nor an event's)"),
            }
        }
        let pol = pol.unwrap_or(default_policy);
        let sched = self.sched(pol, priority, dl, p)?;
        let (phases, thread_loops) = match phases_obj {
            Some((obj, pp)) => {
                if let Some(ep) = has_events {
                    return fail(
                        &ep,
                        "an event beside \"phases\": rt-app runs only the phases; move it into one",
                    );
                }
                if obj.is_empty() {
                    return fail(&pp, "no phase");
                }
                let mut phases = Vec::new();
                for (k, v) in obj {
                    let php = pp.key(k);
                    let o = object_with(v, &php, "a phase", true)?;
                    phases.push(self.phase(Some(k.clone()), o, &php, true)?);
                }
                (phases, loop_key.and_then(|l| l.0))
            }
            None => {
                // The thread is its one phase: its `loop` is the phase's (default forever).
                let mut ph = self.phase(None, entries, p, false)?;
                ph.loops = match &loop_key {
                    Some((l, _)) => *l,
                    None => None,
                };
                (vec![ph], Some(1))
            }
        };
        if phases.len() > 1 {
            self.check_phases(&phases, &sched, p)?;
        }
        Ok(Thread {
            name: name.to_string(),
            path: p.clone(),
            instances,
            delay_us,
            sched,
            cpus,
            phases,
            thread_loops,
        })
    }

    fn cpus(&self, v: &J, p: &JPath) -> R<Vec<u32>> {
        let J::Arr(a) = v else {
            return fail(p, format!("cpus is an array of CPU numbers, not {}", v.kind()));
        };
        if a.is_empty() {
            return fail(p, "an empty affinity: the thread could run nowhere");
        }
        let mut out: Vec<u32> = Vec::new();
        for (i, c) in a.iter().enumerate() {
            let cp = p.key(&i.to_string());
            let n = int(c, &cp, 0, u32::MAX.into(), "a CPU number")? as u32;
            if n >= self.opts.cpus {
                return fail(
                    &cp,
                    format!(
                        "CPU {n} is not on the simulated machine of {} CPU(s); give --cpus {}",
                        self.opts.cpus,
                        n + 1
                    ),
                );
            }
            if out.contains(&n) {
                return fail(&cp, format!("CPU {n} is named twice"));
            }
            out.push(n);
        }
        Ok(out)
    }

    fn sched(
        &self,
        pol: Policy,
        priority: Option<(i128, JPath)>,
        dl: [Option<(u64, JPath)>; 3],
        p: &JPath,
    ) -> R<Sched> {
        if pol != Policy::Deadline {
            if let Some((_, dp)) = dl.iter().flatten().next() {
                let m = if pol == Policy::Other {
                    "a custom slice for SCHED_OTHER (Linux 6.12's sched_runtime) has no smartsim key"
                } else {
                    "dl-runtime, dl-period and dl-deadline belong to SCHED_DEADLINE"
                };
                return fail(dp, m);
            }
        }
        match pol {
            Policy::Other => {
                let nice = priority.as_ref().map_or(0, |x| x.0);
                if !(-20..=19).contains(&nice) {
                    return fail(
                        &priority.map(|x| x.1).unwrap_or_default(),
                        format!("nice {nice}: SCHED_OTHER's priority is a nice level, -20 to 19"),
                    );
                }
                Ok(Sched::Fair { nice })
            }
            Policy::Fifo | Policy::Rr => {
                let prio = priority.as_ref().map_or(10, |x| x.0);
                if !(1..=99).contains(&prio) {
                    return fail(
                        &priority.map(|x| x.1).unwrap_or_default(),
                        format!("priority {prio}: SCHED_FIFO and SCHED_RR take 1 to 99"),
                    );
                }
                Ok(if pol == Policy::Fifo {
                    Sched::Fifo { priority: prio }
                } else {
                    Sched::Rr { priority: prio }
                })
            }
            Policy::Deadline => {
                if let Some((n, pp)) = priority.filter(|x| x.0 != 0) {
                    return fail(
                        &pp,
                        format!("priority {n}: a SCHED_DEADLINE thread has none (its reservation orders it)"),
                    );
                }
                let [rt, per, dead] = dl;
                let Some((runtime, rp)) = rt.filter(|x| x.0 > 0) else {
                    return fail(
                        p,
                        "SCHED_DEADLINE needs \"dl-runtime\" (µs, > 0); rt-app's legacy \"runtime\" key is read as a runtime event",
                    );
                };
                let period = per.as_ref().map_or(runtime, |x| x.0);
                let deadline = dead.as_ref().map_or(period, |x| x.0);
                if !(runtime <= deadline && deadline <= period) {
                    let at = dead.or(per).map(|x| x.1).unwrap_or(rp);
                    return fail(
                        &at,
                        format!("dl-runtime {runtime} ≤ dl-deadline {deadline} ≤ dl-period {period} does not hold (Linux refuses it too)"),
                    );
                }
                Ok(Sched::Deadline { runtime, period, deadline })
            }
        }
    }

    /// A phase's events (in `entries`, where a thread's own keys are skipped when `in_phases` is
    /// false) and its loop.
    fn phase(&self, name: Option<String>, entries: &[(String, J)], p: &JPath, in_phases: bool) -> R<Phase> {
        let mut evs: Vec<(Ev, JPath)> = Vec::new();
        let mut loops_v = Some(1);
        for (k, v) in entries {
            let kp = p.key(k);
            if in_phases {
                match k.as_str() {
                    "loop" => {
                        loops_v = loops(v, &kp)?;
                        continue;
                    }
                    "policy" | "priority" | "dl-runtime" | "dl-period" | "dl-deadline" | "cpus" | "util_min"
                    | "util_max" | "taskgroup" | "nodes_membind" => {
                        return fail(
                            &kp,
                            format!("a change of \"{k}\" between phases has no smartsim equivalent (a task keeps its class and affinity); set it on the thread"),
                        )
                    }
                    _ => {}
                }
            }
            let Some(e) = event_of(k) else {
                if in_phases {
                    return fail(&kp, "not an rt-app phase key (\"loop\" or an event)");
                }
                continue;
            };
            let ev = match e {
                "run" | "runtime" => Ev::Run(int(v, &kp, 0, MAX_MICROS, "a run time in µs")? as u64),
                "sleep" => Ev::Sleep(int(v, &kp, 0, MAX_MICROS, "a sleep time in µs")? as u64),
                "timer" => self.timer(v, &kp)?,
                other => {
                    return fail(
                        &kp,
                        format!(
                            "rt-app's \"{other}\" event has no smartsim equivalent: {}",
                            unmapped_event(other)
                        ),
                    )
                }
            };
            evs.push((ev, kp));
        }
        let shape = shape(&evs, p)?;
        Ok(Phase { name, path: p.clone(), shape, loops: loops_v })
    }

    fn timer(&self, v: &J, p: &JPath) -> R<Ev> {
        let o = object(v, p, "a timer")?;
        let mut name = None;
        let mut period = None;
        for (k, x) in o {
            let kp = p.key(k);
            match k.as_str() {
                "ref" => name = Some(string(x, &kp, "a timer's ref")?.to_string()),
                "period" => period = Some(int(x, &kp, 1, MAX_MICROS, "a timer period in µs")? as u64),
                "mode" => match string(x, &kp, "a timer's mode")? {
                    "relative" | "absolute" => {}
                    m => {
                        return fail(&kp, format!("{m:?} is not a timer mode (\"relative\" or \"absolute\")"))
                    }
                },
                _ => return fail(&kp, "not a timer key (\"ref\", \"period\", \"mode\")"),
            }
        }
        let Some(name) = name else { return fail(p, "a timer needs its \"ref\"") };
        let Some(period) = period else { return fail(p, "a timer needs its \"period\" (µs, > 0)") };
        Ok(Ev::Timer { name, period, path: p.clone() })
    }

    /// Several phases map only as run + timer each, on one timer, outside SCHED_DEADLINE: each
    /// phase then lasts exactly its loops × its period, whatever the scheduling.
    fn check_phases(&self, phases: &[Phase], sched: &Sched, p: &JPath) -> R<()> {
        if matches!(sched, Sched::Deadline { .. }) {
            return fail(p, "several phases under SCHED_DEADLINE: smartsim would need one reservation shared by a task per phase");
        }
        let mut first: Option<&str> = None;
        for ph in phases {
            match &ph.shape {
                Shape::Periodic { timer, timer_path, .. } => {
                    if ph.loops.is_none() {
                        return fail(&ph.path.key("loop"), "a phase that loops forever among several: the next phases never run; give a count");
                    }
                    match first {
                        None => first = Some(timer),
                        Some(f) if f != timer => {
                            return fail(
                                timer_path,
                                format!("timer {timer:?} after timer {f:?}: a phase on a new timer starts it from the thread's start (rt-app's rule), so its first periods run late and back to back; smartsim maps phases that share one timer"),
                            )
                        }
                        _ => {}
                    }
                }
                _ => {
                    return fail(
                        &ph.path,
                        "among several phases smartsim maps only run + timer phases (each lasts loops × period whatever the scheduling); a phase of runs and sleeps lasts as long as it is scheduled",
                    )
                }
            }
        }
        Ok(())
    }

    /// Linux admits SCHED_DEADLINE threads while their bandwidths (runtime / period, in its fixed
    /// point of 2^20 a CPU) add up to at most 95 % of the CPUs; past it `sched_setattr` fails
    /// (EBUSY) and rt-app stops, where smartsim's `cbs` would run the thread in the background.
    fn check_admission(&self, threads: &[Thread]) -> R<()> {
        let capacity = ((95u128 << 20) / 100) * u128::from(self.opts.cpus);
        let mut total: u128 = 0;
        for t in threads {
            if let Sched::Deadline { runtime, period, .. } = t.sched {
                let bw = (u128::from(runtime) << 20) / u128::from(period);
                total += bw * u128::from(t.instances);
                if total > capacity {
                    return fail(
                        &t.path,
                        format!(
                            "the SCHED_DEADLINE reservations add up to more than 95 % of {} CPU(s): Linux refuses \
                             this one (sched_setattr: EBUSY) and rt-app stops",
                            self.opts.cpus
                        ),
                    );
                }
            }
        }
        Ok(())
    }

    /// Tasks one instance of `t` makes in a run of `duration_ns`.
    fn tasks_per_instance(&self, t: &Thread, duration_ns: u64) -> u64 {
        if t.phases.len() == 1 {
            return 1;
        }
        let cycle_ns: u64 = cycle_ns(t);
        let loops = match t.thread_loops {
            Some(n) => n,
            None => duration_ns.div_ceil(cycle_ns.max(1)),
        };
        loops.saturating_mul(t.phases.len() as u64)
    }

    /// A timer whose `ref` does not start with "unique" is one timer for every thread that uses it:
    /// refused when several do.
    fn check_timers(&self, threads: &[Thread]) -> R<()> {
        let mut users: BTreeMap<&str, (u64, &JPath)> = BTreeMap::new();
        for t in threads {
            let mut mine: Vec<(&str, &JPath)> = Vec::new();
            for ph in &t.phases {
                if let Shape::Periodic { timer, timer_path, .. } = &ph.shape {
                    if !timer.starts_with("unique") && !mine.iter().any(|m| m.0 == timer) {
                        mine.push((timer, timer_path));
                    }
                }
            }
            for (name, path) in mine {
                let e = users.entry(name).or_insert((0, path));
                e.0 += t.instances;
                if e.0 > 1 {
                    return fail(
                        path,
                        format!("the timer {name:?} is shared by several threads (rt-app shares a timer whose ref does not start with \"unique\" between all its users, who then take turns on its periods); smartsim has no shared timer: name it \"unique\" for one per thread"),
                    );
                }
            }
        }
        Ok(())
    }

    fn write(&self, threads: &[Thread], duration_ns: u64, host: &[String], resources: bool) -> R<String> {
        use std::fmt::Write;
        let mut s = String::new();
        let mut names: HashSet<String> = HashSet::new();
        let mut unique = |name: &str, t: &Thread| -> R<()> {
            if names.insert(name.to_string()) {
                Ok(())
            } else {
                fail(&t.path, format!("makes a task named {name:?}, the name of another thread's task (instances are named name-0, name-1, ...)"))
            }
        };
        let stem =
            Path::new(self.file).file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
        let _ = writeln!(
            s,
            "description = {}",
            quote(&format!("rt-app's {stem}, imported by smartsim import rt-app"))
        );
        let _ = writeln!(
            s,
            "\n# Made by `smartsim import rt-app` (docs/scenario.md, \"Importing rt-app\"): every thread of"
        );
        let _ = writeln!(s, "# the file is here; the JSON path of each is above its tasks.");
        if !host.is_empty() {
            let _ = writeln!(s, "# Not simulated (they concern rt-app's host): global {}.", host.join(", "));
        }
        if resources {
            let _ = writeln!(
                s,
                "# Not simulated: the \"resources\" object (rt-app's legacy list of mutexes and timers)."
            );
        }
        let _ = writeln!(s, "\n[machine]\nduration = \"{}\"", ns(duration_ns));
        if self.opts.cpus != 1 {
            let _ = writeln!(s, "cpus = {}", self.opts.cpus);
        }
        let _ = writeln!(s, "\n[scheduler]\nclasses = \"linux\"");
        for t in threads {
            for i in 0..t.instances {
                let base = if t.instances > 1 { format!("{}-{i}", t.name) } else { t.name.clone() };
                let inst = if t.instances > 1 {
                    format!(" (instance {i} of {})", t.instances)
                } else {
                    String::new()
                };
                if t.phases.len() == 1 {
                    let ph = &t.phases[0];
                    let count = match (ph.loops, t.thread_loops) {
                        (Some(a), Some(b)) => Some(a.saturating_mul(b)),
                        _ => None,
                    };
                    unique(&base, t)?;
                    let _ = writeln!(s, "\n# {}{inst}", t.path);
                    self.task(&mut s, t, &base, &ph.shape, count, t.delay_us * 1000);
                } else {
                    let cycle = cycle_ns(t);
                    let loops = t.thread_loops.unwrap_or_else(|| duration_ns.div_ceil(cycle.max(1)));
                    let mut at = t.delay_us * 1000;
                    for k in 0..loops {
                        for ph in &t.phases {
                            if at >= duration_ns {
                                break;
                            }
                            let pname = ph.name.as_deref().unwrap_or("");
                            let name = if loops > 1 {
                                format!("{base}.{pname}.{k}")
                            } else {
                                format!("{base}.{pname}")
                            };
                            let lp =
                                if loops > 1 { format!(", loop {k} of the thread") } else { String::new() };
                            unique(&name, t)?;
                            let _ = writeln!(s, "\n# {}{inst}{lp}", ph.path);
                            self.task(&mut s, t, &name, &ph.shape, ph.loops, at);
                            at = at.saturating_add(phase_ns(ph));
                        }
                    }
                }
            }
        }
        Ok(s)
    }

    /// One `[[task]]`.
    fn task(&self, s: &mut String, t: &Thread, name: &str, shape: &Shape, count: Option<u64>, start_ns: u64) {
        use std::fmt::Write;
        let _ = writeln!(s, "[[task]]\nname = {}", quote(name));
        let mut start = start_ns;
        match shape {
            Shape::Busy { run } => {
                let _ = writeln!(s, "model = \"cpu\"");
                if let Some(n) = count {
                    let _ = writeln!(s, "work = \"{}\"", ns(run.saturating_mul(n).saturating_mul(1000)));
                }
            }
            Shape::Periodic { run, period, timer_first, .. } => {
                let _ = writeln!(
                    s,
                    "model = \"periodic\"\nexec = \"{}\"\nperiod = \"{}\"\non_miss = \"finish\"",
                    us(*run),
                    us(*period)
                );
                if *timer_first {
                    start = start.saturating_add(period * 1000);
                }
                if let Some(n) = count {
                    let _ = writeln!(s, "count = {n}");
                }
            }
            Shape::Alternating { run, sleep, sleep_first } => {
                if !sleep_first {
                    let _ = writeln!(
                        s,
                        "# rt-app runs first, then sleeps: here the first burst comes one think later"
                    );
                }
                let _ = writeln!(
                    s,
                    "model = \"interactive\"\nthink = \"{}\"\nburst = \"{}\"",
                    us(*sleep),
                    us(*run)
                );
                if let Some(n) = count {
                    let _ = writeln!(s, "count = {n}");
                }
            }
        }
        if start > 0 {
            let _ = writeln!(s, "start = \"{}\"", ns(start));
        }
        match &t.sched {
            Sched::Fair { nice } => {
                let _ = writeln!(s, "class = \"fair\"\nnice = {nice}");
            }
            Sched::Fifo { priority } => {
                let _ = writeln!(s, "class = \"fifo\"\npriority = {priority}");
            }
            Sched::Rr { priority } => {
                let _ = writeln!(s, "class = \"rr\"\npriority = {priority}");
            }
            Sched::Deadline { runtime, period, deadline } => {
                let _ = writeln!(
                    s,
                    "class = \"deadline\"\nruntime = \"{}\"\ndl_period = \"{}\"\ndl_deadline = \"{}\"",
                    us(*runtime),
                    us(*period),
                    us(*deadline)
                );
            }
        }
        if let Some(c) = &t.cpus {
            let list: Vec<String> = c.iter().map(u32::to_string).collect();
            let _ = writeln!(s, "cpus = [{}]", list.join(", "));
        }
    }
}

/// How long one loop over a thread's phases lasts (ns).
fn cycle_ns(t: &Thread) -> u64 {
    t.phases.iter().map(phase_ns).fold(0, u64::saturating_add)
}

/// How long a run + timer phase lasts: its loops × its period (ns).
fn phase_ns(ph: &Phase) -> u64 {
    match ph.shape {
        Shape::Periodic { period, .. } => ph.loops.unwrap_or(1).saturating_mul(period).saturating_mul(1000),
        _ => 0,
    }
}

/// What a phase's events make: consecutive runs (and sleeps) add up, zero runs and sleeps do
/// nothing (as in rt-app), and the sequence left must be one a smartsim model has.
fn shape(evs: &[(Ev, JPath)], p: &JPath) -> R<Shape> {
    let mut seq: Vec<(Ev, JPath)> = Vec::new();
    for (e, ep) in evs {
        match e {
            Ev::Run(0) | Ev::Sleep(0) => continue,
            _ => {}
        }
        match (seq.last_mut(), e) {
            (Some((Ev::Run(a), _)), Ev::Run(b)) => *a += b,
            (Some((Ev::Sleep(a), _)), Ev::Sleep(b)) => *a += b,
            _ => seq.push((e.clone(), ep.clone())),
        }
    }
    let names: Vec<&str> = seq
        .iter()
        .map(|(e, _)| match e {
            Ev::Run(_) => "run",
            Ev::Sleep(_) => "sleep",
            Ev::Timer { .. } => "timer",
        })
        .collect();
    let timer = |e: &Ev| match e {
        Ev::Timer { name, period, path } => (name.clone(), *period, path.clone()),
        _ => unreachable!("matched as a timer"),
    };
    match seq.as_slice() {
        [(Ev::Run(run), _)] => Ok(Shape::Busy { run: *run }),
        [(Ev::Run(run), _), (t @ Ev::Timer { .. }, _)] => {
            let (timer, period, timer_path) = timer(t);
            Ok(Shape::Periodic { run: *run, period, timer_first: false, timer, timer_path })
        }
        [(t @ Ev::Timer { .. }, _), (Ev::Run(run), _)] => {
            let (timer, period, timer_path) = timer(t);
            Ok(Shape::Periodic { run: *run, period, timer_first: true, timer, timer_path })
        }
        [(Ev::Run(run), _), (Ev::Sleep(sleep), _)] => {
            Ok(Shape::Alternating { run: *run, sleep: *sleep, sleep_first: false })
        }
        [(Ev::Sleep(sleep), _), (Ev::Run(run), _)] => {
            Ok(Shape::Alternating { run: *run, sleep: *sleep, sleep_first: true })
        }
        [] => fail(p, "no run: a thread that never runs has no smartsim task (runs and sleeps of 0 do nothing)"),
        _ if !names.contains(&"run") => {
            fail(
                p,
                format!(
                    "no run, only {}: nothing here would be simulated (a sleep before a thread's first run is its \"delay\")",
                    names.join(", ")
                ),
            )
        }
        _ => fail(
            p,
            format!(
                "the events {} have no smartsim model: it maps run + timer (periodic), run + sleep or sleep + run \
                 (interactive) and run alone (cpu)",
                names.join(", ")
            ),
        ),
    }
}

/// A time in ns as the scenario writes it, exactly, in the largest unit that divides it.
fn ns(t: u64) -> String {
    match t {
        0 => "0s".into(),
        t if t % 1_000_000_000 == 0 => format!("{}s", t / 1_000_000_000),
        t if t % 1_000_000 == 0 => format!("{}ms", t / 1_000_000),
        t if t % 1000 == 0 => format!("{}us", t / 1000),
        t => format!("{t}ns"),
    }
}

/// A time in µs as the scenario writes it.
fn us(t: u64) -> String {
    ns(t.saturating_mul(1000))
}

/// A TOML basic string.
fn quote(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    o.push('"');
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            c if c.is_control() => o.push_str(&format!("\\u{:04X}", c as u32)),
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_and_trailing_commas_are_blanked_in_place() {
        let src = "{ /* a\n comment */ \"a\": [1, 2,], // x\n \"s\": \"/* kept */,\", }";
        let out = strip_comments(src).unwrap();
        assert_eq!(out.len(), src.len());
        assert_eq!(out.matches('\n').count(), 2);
        let v: J = serde_json::from_str(&out).unwrap();
        assert_eq!(
            v,
            J::Obj(vec![
                ("a".into(), J::Arr(vec![J::Int(1), J::Int(2)])),
                ("s".into(), J::Str("/* kept */,".into()))
            ])
        );
    }

    #[test]
    fn an_unclosed_comment_names_its_line_and_column() {
        assert_eq!(strip_comments("{\n  /* x").unwrap_err().0, 2);
        assert_eq!(strip_comments("{\n  /* x").unwrap_err().1, 3);
    }

    #[test]
    fn event_keys_match_by_prefix_in_rt_apps_order() {
        assert_eq!(event_of("runtime2"), Some("runtime"));
        assert_eq!(event_of("run0"), Some("run"));
        assert_eq!(event_of("memrun_a"), Some("memrun"));
        assert_eq!(event_of("sleepy"), Some("sleep"));
        assert_eq!(event_of("instance"), None);
    }

    #[test]
    fn paths_quote_keys_that_are_not_plain() {
        let p = JPath::default().key("tasks").key("my thread").key("run0");
        assert_eq!(p.to_string(), "tasks.\"my thread\".run0");
    }
}
