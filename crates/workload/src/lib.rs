//! The SMART scenario format: a TOML file that says what machine to simulate, which scheduling
//! policy to run, and which tasks to run on it; parsed and fully validated into a [`Scenario`].
//!
//! # Design
//!
//! A scenario is either entirely valid or rejected with *every* problem listed, each as
//! `file:line:col: field: message`. That decided the implementation: instead of a
//! `#[derive(Deserialize)]` (which stops at the first error and loses positions), the file is
//! parsed into a span-carrying TOML tree (`toml::de::DeTable`) that is walked by hand. Unknown keys
//! are errors that suggest the nearest valid key (a typo such as `peroid` must not silently fall
//! back to a default), and a key of another task model says which model it belongs to.
//!
//! Times always carry a unit (`"40ms"`, see [`parse_time`]); a bare number is refused because
//! its unit would be a guess. Times are exact integers of nanoseconds ([`Nanos`]), and none is
//! longer than [`MAX_TIME`], 1,000,000 h ([`parse_bounded_time`] reads every one): with the run's
//! CPU time (`duration × cpus`) and a switch's cache refill held to the same bound, and random draws
//! and estimates clamped to it, no release or deadline of a run can pass 2^63 ns and no sum of
//! times can wrap (`sched`'s "Time that cannot wrap" says why, and why this rather than a time
//! type: a time the validator accepts is one the simulator and hourglass can add). Sizes are read
//! the same way ([`parse_size`]; `KB` is 1000 bytes, `KiB` 1024), by the workspace's only size
//! parser: hourglass and klogger call it too.
//!
//! Randomness is the caller's: [`Exec::sample`] draws from a generator it is given, and
//! [`task_rng`] derives one `Pcg64` per task from the seed and the task's name, so a task's draws
//! do not change when other tasks are added or reordered.
//!
//! Tasks that work together are part of the format: a `server` does the work other tasks hand it
//! (`server`, `server_exec`, `wait`), a `player` shows timestamped frames within a window, a periodic
//! task's requests may come at drawn times (`interarrival`), times may be correlated series (`ar1`) or
//! a file's (`file(...)`), and `include` takes the tasks of application models from other files, so
//! that a mix is written once per application (`scenarios/apps/`). Reading a file a scenario names
//! goes through a [`Loader`] ([`parse_with`]), so that a tool with its files compiled in reads the
//! same scenarios.
//!
//! Weak spots: the models are `cpu`, `periodic`, `interactive`, `server` and `player` (a producer
//! filling a bounded ring, threads of one application sharing more than a name, fork-and-wait jobs
//! and rt-app JSON import are to come); `hourglass` runs only the first three; policy names and
//! `[scheduler]` options are not checked here (the policy registry is in `sched`; a tool reports
//! its own errors at [`SchedulerCfg::key_lines`] with [`Scenario::error`]); the normal
//! distribution's [`Exec::mean`] ignores its truncation at 0; seeded draws depend on `rand` 0.9's
//! integer-range algorithm (pinned by a test, so an upgrade that changes them is noticed).
//!
//! # The format
//!
//! ```toml
//! description = "two periodic tasks against a batch job"   # optional
//!
//! [machine]
//! duration = "10s"        # required: simulated time
//! hz = 1000               # clock interrupts per second; 0 = tickless (default 1000)
//! billing = "exact"       # "exact" ns, or "tick": whole ticks to whoever runs at the tick
//! timer = "hr"            # "hr" (exact) | "tick" (next tick) | "linux-2.4" (2.4 usleep) | "rtc:<Hz>" (power of two, 2..=8192)
//! seed = 1                # every random draw follows from it (default 1)
//! cpus = 4                # processors, 1 to 1024 (default 1)
//! sample = "10ms"         # optional: timeline sampling interval
//!
//! [machine.overhead]      # all default to 0
//! tick = "2us"            # clock-interrupt handler
//! switch = "3us"          # context switch
//! decision = "1us"        # one scheduling decision
//! cache = "512KiB"        # cache refilled after a switch: min(working_set, cache) / bandwidth
//! bandwidth = "1GB/s"     # memory bandwidth, bytes per second ("1GB/s", or an integer)
//! migration = "20us"      # a task dispatched on another CPU than the one it last ran on
//!
//! [scheduler]
//! policy = "smart"        # default "smart"; every other key goes to the policy as an option
//! partition = "global"    # "global" (one queue) | "affinity" (each task's one CPU) | "ffd" (first
//!                         # fit by decreasing utilisation, chosen before the run)
//!
//! [[task]]
//! name = "audio"          # required, unique
//! model = "periodic"      # releases a request every period, with a deadline
//! exec = "2ms..3ms"       # CPU per request: "3ms", "2ms..3ms", "exp(2ms)", "normal(2ms, 200us)"
//! period = "10ms"
//! deadline = "8ms"        # relative to the release; default = period
//! count = 500             # requests; default: until the end
//! on_miss = "discard"     # "discard" it when notified | "finish" it late | "abort" it at its
//!                         # deadline, whatever the policy (default discard)
//! estimate = "ewma"       # what the task tells the scheduler: "ewma" | "exact" | a time
//! estimate_alpha = 0.5    # ewma weight of the newest request
//! estimate_factor = 1.1   # safety margin on the average (SMART §3.5: +10%)
//! notify = "asap"         # when to hear of a coming miss: "asap" | "deadline" | "never" | a time
//! priority = 1            # larger = more important (default 0)
//! share = 1               # proportional share (default 1; 0 allowed)
//! timer = "tick"          # this task's timer, overriding the machine's
//! jitter = "500us"        # each release is late by a uniform draw in [0, jitter]
//! cpus = [0, 1]           # the CPUs it may run on (its affinity); default: any
//!
//! [[task]]
//! name = "batch"
//! model = "cpu"           # always runnable
//! work = "4s"             # total CPU; without it, runs until the end
//! start = "1s"            # default 0
//! stop = "9s"             # optional: leaves at this time
//! working_set = "256KiB"  # bytes to refill in the cache after a switch (size, or an integer)
//!
//! [[task]]
//! name = "editor"
//! model = "interactive"   # thinks (sleeps), then runs a burst; each wake is a user event
//! think = "exp(500ms)"
//! burst = "1ms..5ms"
//! latency_tolerance = "50ms"  # SMART §4.3: how long it may wait when woken
//! ```
//!
//! Keys by model (a key of another model is an error that names its model):
//!
//! | model         | keys                                                                  |
//! |---------------|-----------------------------------------------------------------------|
//! | every task    | `name model share priority latency_tolerance start stop jitter timer working_set cpus nice class runtime dl_deadline dl_period app` |
//! | `cpu`         | `work`                                                                |
//! | `periodic`    | `exec` and `period` or `interarrival` (required), `deadline count on_miss estimate estimate_alpha estimate_factor estimate_initial notify time_constraint busy_wait bands server server_exec wait` |
//! | `interactive` | `think` and `burst` (required), `count bands server server_exec wait` |
//! | `server`      | none: its clients' `server_exec` is its work                          |
//! | `player`      | `exec` and `period` or `interarrival` (required), `count window delay pace discard ring estimate_alpha estimate_factor estimate_initial server server_exec wait` |
//! | `forkwait`    | `fork` and `child` (required), `children count bands`                 |
//!
//! ```
//! # let src = include_str!("../examples/every-key.toml");
//! let s = workload::parse_str(src, "every-key.toml").unwrap();
//! assert_eq!(s.name, "every-key");
//! assert_eq!(s.machine.duration, 10_000_000_000);
//! assert_eq!(s.tasks.len(), 7);
//! match &s.tasks[0].model {
//!     workload::Model::Periodic(p) => {
//!         assert_eq!(p.exec, workload::Exec::Uniform(2_000_000, 3_000_000));
//!         assert_eq!(p.deadline, 8_000_000);
//!     }
//!     other => panic!("{other:?}"),
//! }
//! ```
//!
//! An invalid file gets all its problems at once:
//!
//! ```
//! let src = r#"
//! [machine]
//! duration = "10"
//!
//! [[task]]
//! name = "R1"
//! model = "cpu"
//! peroid = "40ms"
//! "#;
//! let e = workload::parse_str(src, "bad.toml").unwrap_err();
//! assert_eq!(e.to_string(), "\
//! bad.toml:3:12: machine.duration: \"10\" has no unit: write e.g. \"10ms\" (units: ns, us, ms, s, m = minutes, h)
//! bad.toml:8:1: task[0].peroid (task \"R1\"): unknown key `peroid`; did you mean `period`? (a key of model \"periodic\" or \"player\", this task's model is \"cpu\")");
//! ```

#![deny(missing_docs)]
#![forbid(unsafe_code)]

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use serde::Serialize;

mod error;
mod exec;
mod parse;
pub mod stream;
mod time;

pub use error::{Diagnostic, ScenarioError};
pub use exec::{task_rng, Exec, Series};
pub use parse::{
    Loader, CLIENT_KEYS, COMMON_TASK_KEYS, INCLUDE_KEYS, MACHINE_KEYS, MAX_HZ, MAX_INCLUDES, MODELS,
    OVERHEAD_KEYS, TOP_KEYS,
};
/// The `rand` this crate samples with; use it (not another version) for [`Exec::sample`].
pub use rand;
/// The `rand_pcg` of [`task_rng`].
pub use rand_pcg;
pub use stream::{Ended, Interaction, LateRule, Piece, Planned, Stream};
pub use time::{
    format_time, parse_bandwidth, parse_bounded_time, parse_size, parse_size_bare, parse_time, parse_units,
    Nanos, Time, TimeError, MAX_TIME, SIZE_UNITS, TIME_UNITS,
};

/// The most CPUs a machine may have (`sched::MAX_CPUS`).
pub const MAX_CPUS: u32 = sched::MAX_CPUS as u32;

/// A validated scenario: machine, scheduler and tasks. Every invariant stated on the fields
/// below has been checked.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Scenario {
    /// The file it came from, as given.
    pub path: String,
    /// The file stem (`scenarios/mix.toml` → `mix`), a short name for reports.
    pub name: String,
    /// The optional top-level `description`.
    pub description: Option<String>,
    /// `[machine]`.
    pub machine: Machine,
    /// `[scheduler]`.
    pub scheduler: SchedulerCfg,
    /// The `[[task]]` entries, in file order; at least one; names unique.
    pub tasks: Vec<TaskSpec>,
    /// What is legitimate but probably not meant (a task that is always overloaded), in file order:
    /// tools print these on stderr and run.
    #[serde(skip)]
    pub warnings: Vec<Diagnostic>,
}

impl Scenario {
    /// A scenario built in code (benchmarks, property tests): `policy` without options, the machine's
    /// defaults (1 CPU, 1000 Hz, exact billing, exact timers, no overheads) for `duration` and `seed`.
    pub fn new(name: &str, duration: Nanos, seed: u64, policy: &str, tasks: Vec<TaskSpec>) -> Self {
        Scenario {
            path: format!("<{name}>"),
            name: name.to_string(),
            description: None,
            machine: Machine {
                cpus: 1,
                hz: 1000,
                billing: Billing::Exact,
                timer: TimerKind::Hr,
                duration,
                seed,
                overhead: Overheads::default(),
                sample: None,
                key_lines: BTreeMap::new(),
            },
            scheduler: SchedulerCfg {
                policy: policy.to_string(),
                options: BTreeMap::new(),
                key_lines: BTreeMap::new(),
                line: 1,
            },
            tasks,
            warnings: Vec::new(),
        }
    }

    /// The task named `name`.
    pub fn task(&self, name: &str) -> Option<&TaskSpec> {
        self.tasks.iter().find(|t| t.name == name)
    }

    /// An error about this scenario found after loading, in the same form as load errors; e.g.
    /// an unknown policy: `s.error(s.scheduler.key_lines["policy"], "scheduler.policy", "...")`.
    /// The column is 1 (a key at the start of its line).
    pub fn error(&self, line: usize, field: &str, message: impl Into<String>) -> ScenarioError {
        ScenarioError::single(self.path.clone(), line, 1, field, message)
    }
}

/// `[machine]`: the simulated machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Machine {
    /// Processors (key `cpus`, 1 to [`MAX_CPUS`], default 1).
    pub cpus: u32,
    /// Clock interrupts per second (key `hz`, default 1000); 0 = tickless. At most 1,000,000.
    pub hz: u32,
    /// How the running task is charged (key `billing`, default `"exact"`).
    pub billing: Billing,
    /// The timer used for wake-ups unless a task has its own (key `timer`, default `"hr"`).
    pub timer: TimerKind,
    /// How long to simulate (key `duration`, required, > 0).
    pub duration: Nanos,
    /// Seed of every random draw (key `seed`, default 1).
    pub seed: u64,
    /// Costs of the machine itself (`[machine.overhead]`).
    pub overhead: Overheads,
    /// Timeline sampling interval (key `sample`: at least 1us, and at most 1,000,000 samples over the
    /// run), if any.
    pub sample: Option<Nanos>,
    /// The line of each key given in `[machine]`, for a tool's messages about it (as
    /// [`SchedulerCfg::key_lines`]); not part of the scenario's meaning.
    #[serde(skip)]
    pub key_lines: BTreeMap<String, usize>,
}

/// How CPU use is charged to tasks (Etsion 2003 §4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Billing {
    /// `"tick"`: at each clock interrupt, the task running then is charged a whole tick, whatever
    /// it really used. Requires `hz > 0`.
    Tick,
    /// `"exact"`: tasks are charged the nanoseconds they ran.
    Exact,
}

/// The resolution of a timer (when a sleeping task is woken). Serializes as the scenario syntax.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimerKind {
    /// `"tick"`: fires at the first clock tick at or after the requested time. Requires `hz > 0`.
    Tick,
    /// `"hr"`: a high-resolution timer, fires at the requested time.
    Hr,
    /// `"rtc:<Hz>"`: a periodic source at this rate (a power of two in 2..=8192, as the PC's
    /// real-time clock); fires at its first period boundary at or after the requested time.
    Rtc(u32),
    /// `"linux-2.4"`: Linux 2.4's `nanosleep`/`usleep`: a sleep of `d` begun at `t` ends on tick
    /// `⌊t·hz⌋ + ⌈d·hz⌉ + 1` (the jiffies then, the sleep rounded up to ticks, and one more so that
    /// it is never short): up to two ticks late. Requires `hz > 0`.
    Linux24,
}

/// `[machine.overhead]`: costs the machine adds (Regehr 2002 §5.2, Etsion 2003 §3). All default 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Overheads {
    /// Key `tick`: CPU time of one clock-interrupt handler; less than one tick period.
    pub tick: Nanos,
    /// Key `switch`: direct cost of one context switch.
    pub switch: Nanos,
    /// Key `decision`: cost of one scheduling decision.
    pub decision: Nanos,
    /// Key `cache`: bytes of cache a switched-in task refills, at most (a size like `"512KiB"`).
    pub cache_bytes: u64,
    /// Key `bandwidth`: memory bandwidth in bytes per second (`"1GB/s"` or an integer); > 0
    /// whenever `cache` is. The refill after a switch costs
    /// `min(working_set, cache_bytes) / bandwidth`.
    pub bandwidth: u64,
    /// Key `migration`: cost paid by a task dispatched on another CPU than the one it last ran on
    /// (cache and TLB refill elsewhere).
    pub migration: Nanos,
    /// Key `tick_cache`: bytes of the interrupted task's cache that one clock interrupt evicts (the
    /// handler's code and data: Etsion 2003 §3's indirect overhead), refilled at `bandwidth`: each
    /// tick costs the running task `min(tick_cache, working_set, cache_bytes) / bandwidth` more.
    pub tick_cache: u64,
}

impl Overheads {
    /// The cache refill after a switch to a task of `working_set` bytes: `min(working_set, cache) /
    /// bandwidth` (0 without a cache or bandwidth).
    pub fn switch_refill(&self, working_set: u64) -> Nanos {
        self.refill(working_set.min(self.cache_bytes))
    }

    /// The cache refill after a clock interrupt of a task of `working_set` bytes: `min(tick_cache,
    /// working_set, cache) / bandwidth`.
    pub fn tick_refill(&self, working_set: u64) -> Nanos {
        self.refill(self.tick_cache.min(working_set).min(self.cache_bytes))
    }

    fn refill(&self, bytes: u64) -> Nanos {
        if self.bandwidth == 0 {
            return 0;
        }
        let t = u128::from(bytes) * 1_000_000_000 / u128::from(self.bandwidth);
        Nanos::try_from(t).unwrap_or(Nanos::MAX)
    }
}

/// `[scheduler]`: which policy, with what options.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SchedulerCfg {
    /// Key `policy` (default `"smart"`, or `"stack"` when `classes` is given); not checked here: the
    /// policy registry lives in `sched`.
    pub policy: String,
    /// Every other key of `[scheduler]`, unchecked, for the policy.
    pub options: BTreeMap<String, toml::Value>,
    /// The line of each key written in `[scheduler]` (`policy` included), so that a tool that
    /// rejects a policy or option can point at it.
    pub key_lines: BTreeMap<String, usize>,
    /// The line of the `[scheduler]` header (1 if there is none).
    pub line: usize,
}

impl SchedulerCfg {
    /// The time slice the options give (`quantum` or `slice`, the shorter if both), with its key; the
    /// policy's own default otherwise, which only `sched` knows.
    pub fn slice_option(&self) -> Option<(&'static str, Nanos)> {
        ["quantum", "slice"]
            .into_iter()
            .filter_map(|k| match self.options.get(k) {
                Some(toml::Value::String(v)) => parse_time(v).ok().map(|t| (k, t)),
                _ => None,
            })
            .min_by_key(|(_, t)| *t)
    }

    /// The options of `[scheduler]` as the policy registry (`sched::build`) takes them: strings that are
    /// times (`"100ms"`) become durations, booleans and integers stay what they are.
    ///
    /// An array of strings becomes a list (`classes = ["rt", "eevdf"]`), a table the options of a part
    /// of the policy (`[scheduler.eevdf]` of a class stack), read the same way.
    pub fn policy_options(&self) -> sched::Options {
        fn value(v: &toml::Value) -> sched::OptValue {
            match v {
                toml::Value::Boolean(b) => sched::OptValue::Bool(*b),
                toml::Value::Integer(i) => sched::OptValue::Int(*i),
                toml::Value::String(s) => match parse_time(s) {
                    Ok(t) => sched::OptValue::Time(t),
                    Err(_) => sched::OptValue::Str(s.clone()),
                },
                toml::Value::Array(a) if a.iter().all(toml::Value::is_str) => {
                    sched::OptValue::List(a.iter().filter_map(|x| x.as_str().map(str::to_string)).collect())
                }
                toml::Value::Table(t) => sched::OptValue::Table(table(t)),
                other => sched::OptValue::Str(other.to_string()),
            }
        }
        fn table<'a>(t: impl IntoIterator<Item = (&'a String, &'a toml::Value)>) -> sched::Options {
            t.into_iter().map(|(k, v)| (k.clone(), value(v))).collect()
        }
        table(&self.options)
    }
}

/// One `[[task]]`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskSpec {
    /// Key `name`: non-empty, unique in the scenario.
    pub name: String,
    /// The line of this task's `[[task]]` header, for messages about it.
    pub line: usize,
    /// Key `model` and the model's own keys.
    pub model: Model,
    /// Key `share`: proportional share or weight (default 1; 0 = a legacy zero-share task).
    pub share: u32,
    /// Key `priority` (default 0): larger is more important, as in Solaris and SMART.
    pub priority: i32,
    /// Key `latency_tolerance`: how long a conventional task tolerates waiting (SMART §4.3).
    pub latency_tolerance: Option<Nanos>,
    /// Key `start` (default 0): when the task arrives; before `machine.duration`.
    pub start: Nanos,
    /// Key `stop`: when the task leaves, if it does; after `start`.
    pub stop: Option<Nanos>,
    /// Key `jitter`: each release (a periodic request, an interactive wake-up, a cpu task's
    /// start) is late by a uniform draw in `[0, jitter]`; for periodic tasks, less than `period`.
    pub jitter: Option<Nanos>,
    /// Key `timer`: this task's timer, overriding `machine.timer`.
    pub timer: Option<TimerKind>,
    /// Key `working_set`: bytes the task refills in the cache after a switch (default 0).
    pub working_set: u64,
    /// Key `cpus`: the CPUs it may run on, ascending, without repeats, each below `machine.cpus`
    /// (its affinity); `None` = any.
    pub cpus: Option<Vec<u32>>,
    /// Key `nice`: its nice level, −20..=19, for the policies that have one (`sched::TaskParams::nice`);
    /// `None` = the policy's default.
    pub nice: Option<i8>,
    /// Key `class`: the class it runs in, under a class stack (`[scheduler] classes`) or a policy that
    /// tells kinds of task apart (`rt`: `"fifo"` or `"rr"`); checked against the policy by the tool that
    /// builds it (`sched::registry::check_class`). `None` = the stack's lowest class.
    pub class: Option<String>,
    /// Keys `runtime`, `dl_deadline` (default `dl_period`) and `dl_period`: a SCHED_DEADLINE
    /// reservation, `1us ≤ runtime ≤ dl_deadline ≤ dl_period`.
    #[serde(serialize_with = "serialize_reservation")]
    pub reservation: Option<sched::Reservation>,
    /// Key `app`: the application the task is a thread of (News's audio and video), for reports; no
    /// scheduling meaning.
    pub app: Option<String>,
    /// Keys `server`, `server_exec` and `wait`: each request of the task ends with work it hands to a
    /// `server` task (a frame or a character the X server must draw); the request is done when the
    /// server has done it.
    pub send: Option<ServerCall>,
    /// Key `bands`: bounds of latency bands, ascending (`["50ms", "150ms"]`): its requests are counted
    /// by the band their latency (release to done) falls in.
    pub bands: Vec<Nanos>,
    /// The file it was read from when another file includes it (`include`); empty for the scenario's
    /// own tasks. [`TaskSpec::line`] is a line of this file.
    #[serde(skip)]
    pub file: String,
    /// The files its times come from (`exec = "file(...)"` and the like), in the order the task's keys
    /// name them: [`Exec::Trace`]'s `id` indexes this.
    #[serde(skip)]
    pub traces: Vec<Trace>,
}

/// Work a task hands to a server task with each request (keys `server`, `server_exec`, `wait`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ServerCall {
    /// Key `server`: the name of a task of model `"server"`.
    pub to: String,
    /// Its index among the scenario's tasks.
    #[serde(skip)]
    pub to_index: usize,
    /// Key `server_exec` (required with `server`, mean > 0): the server's CPU per request.
    pub exec: Exec,
    /// Key `wait` (default `false`): the task blocks until the server has done its request (a
    /// round trip); else it goes on with its next request while the server works (X requests are
    /// asynchronous).
    pub wait: bool,
}

/// The times of a file (`"file(frames.txt)"`): one time with its unit per line, `#` comments and blank
/// lines skipped, at least one and at most [`MAX_TRACE_TIMES`].
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    /// The file, as the scenario names it.
    pub path: String,
    /// Its times, in order.
    pub times: std::sync::Arc<[Nanos]>,
}

/// Most times a trace file may hold.
pub const MAX_TRACE_TIMES: usize = 1_000_000;
/// Largest trace file read, in bytes.
pub const MAX_TRACE_BYTES: u64 = 32 << 20;

/// A reservation as `{ "runtime": ns, "deadline": ns, "period": ns }` (`sched` has no serde).
fn serialize_reservation<S: serde::Serializer>(
    r: &Option<sched::Reservation>,
    s: S,
) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeStruct;
    match r {
        None => s.serialize_none(),
        Some(r) => {
            let mut st = s.serialize_struct("Reservation", 3)?;
            st.serialize_field("runtime", &r.runtime)?;
            st.serialize_field("deadline", &r.deadline)?;
            st.serialize_field("period", &r.period)?;
            st.end()
        }
    }
}

impl TaskSpec {
    /// The file the task was read from: its included file, or else `scenario_path` (the scenario's own).
    pub fn source<'a>(&'a self, scenario_path: &'a str) -> &'a str {
        if self.file.is_empty() {
            scenario_path
        } else {
            &self.file
        }
    }

    /// The timer this task's wake-ups use: its own `timer`, else the machine's.
    pub fn effective_timer(&self, machine: &Machine) -> TimerKind {
        self.timer.unwrap_or(machine.timer)
    }
}

impl TaskSpec {
    /// A task built in code with every optional key at its default (share 1, priority 0, start 0, ...).
    pub fn new(name: &str, model: Model) -> Self {
        TaskSpec {
            name: name.to_string(),
            line: 0,
            model,
            share: 1,
            priority: 0,
            latency_tolerance: None,
            start: 0,
            stop: None,
            jitter: None,
            timer: None,
            working_set: 0,
            nice: None,
            class: None,
            reservation: None,
            cpus: None,
            app: None,
            send: None,
            bands: Vec::new(),
            file: String::new(),
            traces: Vec::new(),
        }
    }
}

/// What a task does (key `model`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "model", rename_all = "snake_case")]
pub enum Model {
    /// `model = "cpu"`: always runnable; finite with `work` (total CPU, > 0), else endless.
    Cpu {
        /// Key `work`: total CPU time, after which the task ends.
        work: Option<Nanos>,
    },
    /// `model = "periodic"`: a request every period, each with a deadline.
    Periodic(Periodic),
    /// `model = "interactive"`: sleeps `think` (the user), then runs `burst` of CPU; each wake-up
    /// is a user interaction, whose response time is what matters.
    Interactive {
        /// Key `think` (required): time between the end of a burst and the next wake-up.
        think: Exec,
        /// Key `burst` (required, mean > 0): CPU per interaction.
        burst: Exec,
        /// Key `count`: interactions, > 0; default: until the end.
        count: Option<u64>,
    },
    /// `model = "server"`: does the work other tasks hand it (their `server` key), one request at a
    /// time in the order they came, and sleeps when there is none (the X server).
    Server,
    /// `model = "player"`: a media player showing timestamped frames ([`Player`]).
    Player(Player),
    /// `model = "forkwait"`: a batch job that forks children one at a time and waits for each (a
    /// `make`, a shell loop: Nieh ch. 2's `compute`). Per child the parent runs `fork` of CPU, then
    /// sleeps until the child has run `child` of CPU and exited; `children` children make one
    /// iteration (the quality: the time an iteration takes). The child is simulated as its parent
    /// going on (one schedulable task, as SVR4's `ts_fork` gives a child its parent's priority): what
    /// the scheduler sees is a fork's burst ending in a yield (the child, a new process, queued behind
    /// those waiting), then the child's burst ending in a sleep (the parent woken from `wait`).
    ForkWait {
        /// Key `fork` (required, mean > 0): the parent's CPU per child (fork, and the loop's own work).
        fork: Exec,
        /// Key `child` (required, mean > 0): a child's CPU (exec, its run, exit).
        child: Exec,
        /// Key `children` (default 1): children per iteration.
        children: u64,
        /// Key `count`: iterations, > 0; default: until the end.
        count: Option<u64>,
    },
}

impl Model {
    /// The model's name as written in a scenario: `"cpu"`, `"periodic"`, `"interactive"`, `"server"`,
    /// `"player"`, `"forkwait"`.
    pub fn name(&self) -> &'static str {
        match self {
            Model::Cpu { .. } => "cpu",
            Model::Periodic(_) => "periodic",
            Model::Interactive { .. } => "interactive",
            Model::Server => "server",
            Model::Player(_) => "player",
            Model::ForkWait { .. } => "forkwait",
        }
    }
}

/// A media player (Nieh §3.5.1, §6.4: the Integrated Media Streams player): frame `k` carries the
/// timestamp `start + k·period` (or the sum of `interarrival` draws), is wanted on screen at that
/// timestamp plus `delay`, and is on time when shown within `window` of then. The player takes the
/// frames in order, each when it is done with the one before: if its estimate says it would finish
/// more than `window` early it sleeps until it would finish on time (`pace`); it drops a frame it
/// expects to finish more than `window` late (`discard = "estimate"`: the tuning for UNIX time
/// sharing, estimating by the wall-clock time past frames took), or tells the scheduler its time
/// constraint and drops a frame it is notified of before it starts it (`discard = "notified"`: the
/// player adapted to SMART, estimating by the CPU past frames took, 10 % more); a frame is shown when
/// its work is done.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Player {
    /// Key `exec` (required, mean > 0): CPU per frame.
    pub exec: Exec,
    /// Key `period`: the time between frames' timestamps (or the mean of `interarrival`).
    pub period: Nanos,
    /// Key `interarrival`: the time between timestamps drawn per frame, in place of `period`.
    pub interarrival: Option<Exec>,
    /// Key `count`: frames, > 0; default: until the end.
    pub count: Option<u64>,
    /// Key `window` (default 20ms): a frame shown more than this early or late is early or late.
    pub window: Nanos,
    /// Key `delay` (default: one `period`): from a frame's timestamp to when it is wanted on screen.
    pub delay: Nanos,
    /// Key `pace` (default true): sleep rather than show a frame early.
    pub pace: bool,
    /// Key `discard` (default `"estimate"`).
    pub discard: Discard,
    /// Key `ring`: the frames come from a device (a digitizer) that puts frame `k` into a ring of this
    /// many slots at its timestamp, overwriting the oldest when the ring is full (that frame is
    /// dropped); the player takes the oldest frame in the ring and sleeps while it is empty. `ring = 0`
    /// keeps no frame: the player gets the next frame captured after it asks (a digitizer read that
    /// waits for the next frame). Without it, every frame is there from the start (a file). Needs a
    /// fixed `period`.
    pub ring: Option<u64>,
    /// Key `adapt` (default `"none"`): how the player chooses its frame rate ([`Adapt`]).
    pub adapt: Adapt,
    /// Keys `estimate_alpha`, `estimate_factor` (default 1.0 with `discard = "estimate"`, 1.1 with
    /// `"notified"`), `estimate_initial`: the exponential average of past frames.
    pub estimate: Estimate,
}

/// How a [`Player`] chooses its frame rate (key `adapt`, Nieh §6.3.6 and §6.3.7). An adapting player
/// shows one frame of every `n` (from 1) and wants each on screen `n` periods after its timestamp
/// (its `delay` is then `n · period`); every ten frames it has taken (shown, or dropped by lateness)
/// it decides again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Adapt {
    /// `"none"`: every frame, wanted `delay` after its timestamp.
    None,
    /// `"late"`: by its own lateness (the TS2 player of §6.3.6): `n` grows when half or more of the ten
    /// were late (shown late, dropped by its estimate or lost in the ring: "a large percentage"),
    /// shrinks when none was ("all on time").
    Late,
    /// `"availability"`: by the scheduler's availability (SMART's §3.4.3 API, the player of §6.3.7):
    /// `n` grows when some of the ten were late and the CPU its estimate needs at one frame in `n` is
    /// more than its allocation rate; it shrinks when its consumption rate is below its allocation and
    /// one frame in `n − 1` would fit the allocation.
    Availability,
}

/// How a [`Player`] drops frames (key `discard`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Discard {
    /// `"estimate"`: a frame the player expects to finish late, by the wall-clock time past frames took.
    Estimate,
    /// `"notified"`: the player gives each frame a time constraint (the scheduler's SMART API) and drops
    /// a frame it is notified of before it starts it.
    Notified,
    /// `"never"`: every frame is shown, late or not.
    Never,
}

/// A periodic real-time task: requests released every `period`, each needing `exec` of CPU by
/// `deadline` after its release.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Periodic {
    /// Key `exec` (required, mean > 0): CPU per request.
    pub exec: Exec,
    /// Key `period` (required unless `interarrival` is given, > 0; with `interarrival`, its mean).
    pub period: Nanos,
    /// Key `interarrival`: requests come at independent draws apart (sporadic: a user's keystrokes)
    /// instead of every `period`.
    pub interarrival: Option<Exec>,
    /// Key `input_delay`: a request reaches the task this draw after it arrives (a keystroke through the
    /// serial line, its driver and STREAMS), taking no CPU of the task's; its latency counts from its
    /// arrival. Requests stay in order.
    pub input_delay: Option<Exec>,
    /// Key `deadline`: relative to the release, > 0; default = `period`.
    pub deadline: Nanos,
    /// Key `count`: requests, > 0; default: until the end.
    pub count: Option<u64>,
    /// Key `on_miss` (default `"discard"`).
    pub on_miss: OnMiss,
    /// The line where `on_miss` is written, if it is (a tool refusing the value for its policy points
    /// there; the default `"discard"` under a policy that never notifies behaves as `"finish"`).
    #[serde(skip)]
    pub on_miss_line: Option<usize>,
    /// Key `estimate` (default `"ewma"`) with `estimate_alpha`, `estimate_factor`,
    /// `estimate_initial`: the CPU estimate the task gives the scheduler with each request.
    pub estimate: Estimate,
    /// Key `notify` (default `"asap"`): when the task wants to hear that a deadline will be missed.
    pub notify: Notify,
    /// Key `time_constraint` (default true): each request gives the scheduler its time constraint
    /// (SMART §3.4.1); false: a conventional application, whose deadline only counts requests met and
    /// missed (and which hears of no miss).
    pub time_constraint: bool,
    /// Key `busy_wait` (default 0: none): a wait for the next request of at most this long is spent
    /// spinning on the CPU rather than asleep, and the request then starts at its exact time, whatever
    /// the task's timer (Linux 2.4's `usleep` of 2 ms or less in a real-time class, Regehr §5.5).
    pub busy_wait: Nanos,
}

/// Default `estimate_alpha`: the weight of the newest request in the EWMA estimate.
pub const EWMA_ALPHA: f64 = 0.5;
/// Default `estimate_factor`: the margin the EWMA estimate is multiplied by (1.1 = 10 %).
pub const EWMA_FACTOR: f64 = 1.1;

impl Periodic {
    /// A periodic task needing `exec` every `period`, every other key at its scenario default:
    /// deadline = period, requests until the end, `on_miss = "discard"`, the EWMA estimate, `notify =
    /// "asap"` (what a `[[task]]` with only `exec` and `period` parses to). Change a field with
    /// `Periodic { on_miss: OnMiss::Finish, ..Periodic::new(exec, period) }`.
    pub fn new(exec: Exec, period: Nanos) -> Periodic {
        Periodic {
            exec,
            period,
            interarrival: None,
            input_delay: None,
            deadline: period,
            count: None,
            on_miss: OnMiss::Discard,
            on_miss_line: None,
            estimate: Estimate::Ewma { alpha: EWMA_ALPHA, factor: EWMA_FACTOR, initial: None },
            notify: Notify::Asap,
            time_constraint: true,
            busy_wait: 0,
        }
    }

    /// The CPU fraction this task asks for on average: mean exec / period.
    pub fn utilization(&self) -> f64 {
        self.exec.mean() as f64 / self.period as f64
    }
}

/// What a periodic task does with a request whose deadline will be missed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OnMiss {
    /// `"discard"`: drops the request when notified (as SMART's audio and video applications do).
    Discard,
    /// `"finish"`: completes it late.
    Finish,
    /// `"abort"`: the request is dropped at its deadline if unfinished, whatever the policy does
    /// (SimSo's `abort_on_miss`).
    Abort,
}

/// The CPU estimate a periodic task passes with each request (SMART's time constraint).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "kind", content = "value", rename_all = "snake_case")]
pub enum Estimate {
    /// `"exact"`: the true exec of each request (an oracle, for tests and upper bounds).
    Exact,
    /// A time, e.g. `"30ms"`: always this estimate.
    Fixed(Nanos),
    /// `"ewma"`: `factor` × an exponentially weighted average of past requests' CPU use.
    Ewma {
        /// Key `estimate_alpha` (default 0.5), in (0, 1]: weight of the newest request.
        alpha: f64,
        /// Key `estimate_factor` (default 1.1, as SMART §3.5 scales the average by 10%), > 0.
        factor: f64,
        /// Key `estimate_initial`: the first request's estimate; `None` = the exec's mean.
        initial: Option<Nanos>,
    },
}

/// When a periodic task asks to be notified that a request will miss its deadline
/// (SMART's notify-time).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "after", rename_all = "snake_case")]
pub enum Notify {
    /// `"never"`: no notification.
    Never,
    /// `"asap"` (default): as soon as the scheduler sees the miss coming (notify-time 0).
    Asap,
    /// `"deadline"`: at the deadline.
    AtDeadline,
    /// A time, e.g. `"5ms"`: at this time after the release, at most the deadline.
    After(Nanos),
}

impl fmt::Display for Billing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Billing::Tick => "tick",
            Billing::Exact => "exact",
        })
    }
}

impl Serialize for TimerKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl fmt::Display for TimerKind {
    /// Writes the scenario syntax: `tick`, `hr`, `rtc:1024`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TimerKind::Tick => f.write_str("tick"),
            TimerKind::Hr => f.write_str("hr"),
            TimerKind::Rtc(hz) => write!(f, "rtc:{hz}"),
            TimerKind::Linux24 => f.write_str("linux-2.4"),
        }
    }
}

/// Largest scenario file read, in bytes. A scenario of 100,000 tasks is about 7.6 MB; the cap keeps a
/// device or a runaway file from being read into memory, and leaves room for an oversized field to
/// be reported by its own rule.
pub const MAX_SCENARIO_BYTES: u64 = 64 << 20;

/// Reads a text input file of at most `cap` bytes: a regular file (not a device, pipe or directory,
/// which could be read without end) whose size is checked before reading. The error says which
/// and, for a file too large, the cap.
pub fn read_capped(path: &Path, cap: u64) -> Result<String, String> {
    let meta = std::fs::metadata(path).map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("not a regular file (a device, directory or pipe is not read)".into());
    }
    if meta.len() > cap {
        return Err(format!("{} bytes, over the limit of {} MiB", meta.len(), cap >> 20));
    }
    // Checked again while reading: the file may grow meanwhile.
    read_capped_from(std::fs::File::open(path).map_err(|e| e.to_string())?, cap)
}

/// Reads all of `input` (standard input, say) as text, refusing more than `cap` bytes; the error
/// (over the limit, an I/O error, invalid UTF-8) does not name the input.
pub fn read_capped_from(input: impl std::io::Read, cap: u64) -> Result<String, String> {
    use std::io::Read;
    let mut text = String::new();
    input.take(cap + 1).read_to_string(&mut text).map_err(|e| e.to_string())?;
    if text.len() as u64 > cap {
        return Err(format!("over the limit of {} MiB", cap >> 20));
    }
    Ok(text)
}

/// Reads and validates a scenario file (at most [`MAX_SCENARIO_BYTES`]). On error, lists every
/// problem with its line and field.
pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
    let file = path.display().to_string();
    match read_capped(path, MAX_SCENARIO_BYTES) {
        Ok(src) => parse_str(&src, &file),
        Err(e) => Err(ScenarioError::single(file, 0, 0, "", format!("cannot read the scenario: {e}"))),
    }
}

/// Validates a scenario given as text; `path` names it in messages, and its stem becomes
/// [`Scenario::name`]. The files it names (`include`, `file(...)` times) are read from the file
/// system, relative to `path`'s directory.
pub fn parse_str(src: &str, path: &str) -> Result<Scenario, ScenarioError> {
    parse::parse(src, path, &|p| read_capped(p, MAX_SCENARIO_BYTES))
}

/// [`parse_str`] with the files the scenario names read by `loader` (a tool with its files compiled
/// in: `smartsim reproduce`).
pub fn parse_with(src: &str, path: &str, loader: &Loader) -> Result<Scenario, ScenarioError> {
    parse::parse(src, path, loader)
}
