//! What a run produced: per-task results, system statistics, the timeline; and their JSON form
//! (the output contract of ARCHITECTURE.md). Pure output types: [`crate::metrics`] fills them.

use std::collections::BTreeMap;

use sched::Nanos;
use serde::Serialize;

/// Deadlines of a real-time task: its requests by outcome (docs/glossary.md). The outcomes met,
/// late, discarded, aborted and unfinished are disjoint and add up to `requests`; `missed` is late +
/// discarded + aborted.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Deadlines {
    /// Requests released that ended, or were open at the end of the run.
    pub requests: u64,
    /// Finished by their deadline.
    pub met: u64,
    /// Late + discarded + aborted: their deadline passed without their finishing in time.
    pub missed: u64,
    /// Of the missed, those not dropped: finished after their deadline, or open at the end past it.
    pub late: u64,
    /// Of the missed, those dropped after a notification (`on_miss = "discard"`).
    pub discarded: u64,
    /// Of the missed, those dropped at their deadline (`on_miss = "abort"`).
    pub aborted: u64,
    /// Open at the end of the run, their deadline not passed (neither met nor missed).
    pub unfinished: u64,
    /// Notifications received.
    pub notifications: u64,
}

impl Deadlines {
    /// From the count of outcomes (the one every output uses) and the notifications.
    pub fn of(r: &trace::summary::Requests, notifications: u64) -> Deadlines {
        Deadlines {
            requests: r.total(),
            met: r.met,
            missed: r.missed(),
            late: r.late,
            discarded: r.discarded,
            aborted: r.aborted,
            unfinished: r.unfinished,
            notifications,
        }
    }
}

/// Percentiles of a latency distribution, in nanoseconds: the workspace's one type (crates/trace).
pub use trace::summary::Percentiles;

/// What the policy was told a task used (tick billing bills whole ticks, Etsion 2003 §4).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Billing {
    /// CPU time billed.
    pub charged_ns: u64,
    /// Times the task was dispatched.
    pub quanta: u64,
    /// Dispatches billed nothing.
    pub unbilled_quanta: u64,
    /// Dispatches on another CPU than the one it last ran on.
    pub migrations: u64,
}

/// Per-task result.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct TaskResult {
    /// Task name.
    pub name: String,
    /// Time on the CPU (overheads billed to it included).
    pub cpu_ns: u64,
    /// `cpu_ns` over the run's duration.
    pub cpu_share: f64,
    /// When it finished (its work or its requests), if it did.
    pub finish_ns: Option<u64>,
    /// Deadlines, for real-time tasks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deadlines: Option<Deadlines>,
    /// Wake-up latency, `wake→dispatch`: from becoming runnable (from a request's nominal release for
    /// periodic tasks) to the dispatch (docs/glossary.md).
    pub latency_ns: Option<Percentiles>,
    /// Response time of requests (periodic tasks): from the nominal release to the finish, met or
    /// late.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_ns: Option<Percentiles>,
    /// Billing.
    pub billing: Billing,
    /// The application it is a thread of (`app`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub app: Option<String>,
    /// A player's frames (`model = "player"`): shown on time, early or late against its window, or
    /// dropped; and how far from their wanted time, after their timestamp, and after the frame shown
    /// before, they were shown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frames: Option<Frames>,
    /// Requests by the band of their latency (`bands`: from the release, or the user's event, to the
    /// request done, its server's work included), and those not done by the end.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bands: Option<Bands>,
    /// A `forkwait` job's iterations done, and the time each took (Nieh table 2-1: "time to execute
    /// one loop iteration"); its accumulated CPU is `cpu_ns`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iterations: Option<Iterations>,
}

/// A `forkwait` job's iterations (see [`TaskResult::iterations`]).
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Iterations {
    /// Iterations done.
    pub count: u64,
    /// The time they took, from the first fork to the last child's exit: mean and standard deviation.
    pub time_ns: MeanSd,
    /// Every iteration's time, in ns, in order (not in the JSON).
    #[serde(skip)]
    pub times: Vec<u64>,
}

/// A mean and a standard deviation (population), in ns; both 0 without samples.
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq)]
pub struct MeanSd {
    /// The mean.
    pub mean: f64,
    /// The standard deviation.
    pub sd: f64,
}

impl MeanSd {
    /// The standard deviation if `sd`, else the mean.
    pub fn pick(&self, sd: bool) -> f64 {
        if sd {
            self.sd
        } else {
            self.mean
        }
    }
}

/// A player's frames (see [`TaskResult::frames`]; Nieh §6.4.1, table 6-3: on time within the window
/// of the wanted time, early, late, dropped).
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Frames {
    /// Frames the player took in turn (shown or dropped).
    pub frames: u64,
    /// Shown within the window of their wanted time.
    pub on_time: u64,
    /// Shown more than the window before it.
    pub early: u64,
    /// Shown more than the window after it.
    pub late: u64,
    /// Not shown: dropped by the player.
    pub dropped: u64,
    /// The window: a frame shown within it of its wanted time is on time.
    pub window_ns: u64,
    /// Shown time minus wanted time.
    pub error_ns: MeanSd,
    /// Shown time minus the frame's timestamp (Nieh §6.3's delay).
    pub delay_ns: MeanSd,
    /// Time between two frames shown in turn (Nieh §6.3's time delta).
    pub interdisplay_ns: MeanSd,
    /// Every shown frame's error, in ns, in order (for the distributions of figs. 6-20 and 6-21; not
    /// in the JSON).
    #[serde(skip)]
    pub errors: Vec<i64>,
    /// The wanted time of each shown frame, in the order of `errors` (not in the JSON).
    #[serde(skip)]
    pub wanted_ns: Vec<u64>,
    /// Each shown frame's delay (shown − timestamp), in the order of `errors` (not in the JSON).
    #[serde(skip)]
    pub delays_ns: Vec<u64>,
    /// The wanted time of each dropped frame, in order (not in the JSON).
    #[serde(skip)]
    pub dropped_wanted_ns: Vec<u64>,
}

/// Requests by latency band (see [`TaskResult::bands`]).
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Bands {
    /// The bounds, ascending: band `k` is below `bounds_ns[k]` and at or above the one before; the
    /// last band is at or above the last bound.
    pub bounds_ns: Vec<u64>,
    /// Requests done, per band (one more than the bounds).
    pub counts: Vec<u64>,
    /// Requests released and not done by the end of the run.
    pub not_done: u64,
    /// Latency of the requests done: mean and standard deviation (Nieh's table 6-3 and §6.4.3).
    pub latency_ns: MeanSd,
    /// Every done request's latency, in ns, in order (for the distribution of fig. 6-22; not in the
    /// JSON).
    #[serde(skip)]
    pub latencies: Vec<u64>,
}

/// What one CPU did over a run.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct CpuStats {
    /// Time a task was on it (overheads paid for the task included).
    pub busy_ns: u64,
    /// Time with nothing to run.
    pub idle_ns: u64,
    /// Time spent in overheads (switch, decision, tick handler, cache refill, migration).
    pub overhead_ns: u64,
    /// Context switches on it.
    pub switches: u64,
}

/// Whole-system statistics of a run.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct SystemStats {
    /// Time with nothing to run, summed over the CPUs.
    pub idle_ns: u64,
    /// Time spent in overheads (switch, decision, tick handler, cache refill, migration), summed over
    /// the CPUs.
    pub overhead_ns: u64,
    /// Context switches (a different task dispatched on a CPU).
    pub switches: u64,
    /// Dispatches of a task on another CPU than the one it last ran on.
    pub migrations: u64,
    /// Scheduling decisions (calls of pick_next).
    pub decisions: u64,
    /// Task timer events.
    pub events: u64,
    /// Real-time requests released.
    pub jobs: u64,
    /// Clock ticks simulated (one per CPU per tick).
    pub ticks: u64,
    /// Notifications delivered.
    pub notifications: u64,
    /// Per CPU, in CPU order.
    pub cpus: Vec<CpuStats>,
}

/// Cumulative CPU time and deadlines met of every task, sampled at regular times.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Timeline {
    /// Sample times.
    pub at: Vec<Nanos>,
    /// `cpu[k][i]`: cumulative CPU of task `i` at `at[k]`.
    pub cpu: Vec<Vec<Nanos>>,
    /// `met[k][i]`: deadlines met by task `i` by `at[k]`.
    pub met: Vec<Vec<u64>>,
}

impl Timeline {
    /// An empty timeline for `n` tasks.
    pub fn new(_n: usize) -> Self {
        Timeline::default()
    }

    /// Record one sample.
    pub fn push(&mut self, at: Nanos, cpu: Vec<Nanos>, met: Vec<u64>) {
        self.at.push(at);
        self.cpu.push(cpu);
        self.met.push(met);
    }

    /// Cumulative CPU of task `i` as (seconds, milliseconds) points.
    pub fn cpu_series(&self, i: usize) -> Vec<(f64, f64)> {
        self.at.iter().zip(&self.cpu).map(|(t, c)| (*t as f64 / 1e9, c[i] as f64 / 1e6)).collect()
    }

    /// Deadlines met by task `i` as (seconds, count) points.
    pub fn met_series(&self, i: usize) -> Vec<(f64, f64)> {
        self.at.iter().zip(&self.met).map(|(t, m)| (*t as f64 / 1e9, m[i] as f64)).collect()
    }

    /// CPU share of each task in the window `[from, to)` (nearest samples), or `None` if the timeline
    /// does not cover it.
    pub fn shares(&self, from: Nanos, to: Nanos) -> Option<Vec<f64>> {
        let a = self.at.partition_point(|t| *t < from);
        let b = self.at.partition_point(|t| *t < to).min(self.at.len().checked_sub(1)?);
        if b <= a {
            return None;
        }
        let dt = (self.at[b] - self.at[a]) as f64;
        Some(self.cpu[b].iter().zip(&self.cpu[a]).map(|(y, x)| (y - x) as f64 / dt).collect())
    }
}

/// Why a run stopped before the end of its scenario.
#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum PartialReason {
    /// Its watcher asked it to stop (`smartsim`: Ctrl-C, SIGINT).
    Interrupted,
    /// Its policy walked more tasks than a run may without `--force` ([`crate::budget::MAX_WALKED`],
    /// [`crate::Sim::limit_walked`]); `"over_budget"` in the JSON.
    #[serde(rename = "over_budget")]
    OverBudget,
}

impl PartialReason {
    /// The reason's word, as in the JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            PartialReason::Interrupted => "interrupted",
            PartialReason::OverBudget => "over_budget",
        }
    }

    /// What stopped it, for a person: `Ctrl-C`, or the limit and how to go past it.
    pub fn cause(self) -> String {
        match self {
            PartialReason::Interrupted => "Ctrl-C".to_string(),
            PartialReason::OverBudget => "its policy walked past the run's limit of tasks walked".to_string(),
        }
    }
}

/// A run stopped before the end of its scenario (the JSON's `"partial"`): its results are those of
/// the time it simulated, `simulated_ns` (its `duration_ns`), of the scenario's `scenario_duration_ns`.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Partial {
    /// Why it stopped.
    pub reason: PartialReason,
    /// Simulated time when it stopped, ns.
    pub simulated_ns: u64,
    /// The scenario's duration, ns.
    pub scenario_duration_ns: u64,
}

impl Partial {
    /// A run stopped for `reason` at `at` of a scenario lasting `duration`.
    pub fn new(reason: PartialReason, at: u64, duration: u64) -> Partial {
        Partial { reason, simulated_ns: at, scenario_duration_ns: duration }
    }

    /// One line for a person: `interrupted at 12.345 s of 1000 s simulated`.
    pub fn describe(&self) -> String {
        format!(
            "{} at {:.3} s of {} s simulated",
            self.reason.as_str(),
            self.simulated_ns as f64 / 1e9,
            self.scenario_duration_ns as f64 / 1e9
        )
    }
}

/// The result of a run.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct SimResult {
    /// Scenario name (file stem).
    pub scenario: String,
    /// Policy name.
    pub policy: String,
    /// Simulated duration: the scenario's, or the time simulated when the run was stopped before its
    /// end (see `partial`); every share and idle time is over it.
    pub duration_ns: u64,
    /// Present only when the run stopped before the end of its scenario: why, and when.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partial: Option<Partial>,
    /// Seed of every random draw.
    pub seed: u64,
    /// Number of CPUs simulated.
    pub cpus: u32,
    /// Per task, in scenario order.
    pub tasks: Vec<TaskResult>,
    /// Whole-system statistics.
    pub system: SystemStats,
    /// The policy's own counters.
    pub counters: BTreeMap<String, u64>,
    /// The timeline (not part of the JSON output).
    #[serde(skip)]
    pub timeline: Timeline,
}

impl SimResult {
    /// A task's result by name.
    pub fn task(&self, name: &str) -> Option<&TaskResult> {
        self.tasks.iter().find(|t| t.name == name)
    }

    /// The JSON object of the output contract (`"tool": "smartsim"` first).
    pub fn to_json(&self) -> serde_json::Value {
        let mut v = serde_json::to_value(self).expect("results serialize");
        let obj = v.as_object_mut().expect("an object");
        let mut out = serde_json::Map::new();
        out.insert("tool".into(), "smartsim".into());
        out.append(obj);
        serde_json::Value::Object(out)
    }
}
