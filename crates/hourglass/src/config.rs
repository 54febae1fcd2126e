//! What a run is: threads with a workload model, a priority or reservation, a timer, and a window
//! inside the run; plus the run-wide settings. Built by the appendix-A parser ([`crate::cli`]) or
//! from a scenario file ([`crate::scenario`]).

use crate::sys::Priority;
use crate::timer::TimerKind;
use crate::units::{format_time, Nanos};
use std::path::PathBuf;
use workload::{Exec, LateRule, Model, Periodic, TaskSpec};

/// A thread execution model (§3.2), or a task of the scenario format.
///
/// Appendix A's own models, which the scenario format does not have, are variants of their own;
/// a scenario's task, and appendix A's `PERIODIC`, is a [`Workload::Task`], which the thread runs
/// as the simulator runs it: by its [`workload::Stream`].
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(tag = "model", rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Workload {
    /// Runs whenever it can.
    Cpu,
    /// CPU-bound, scanning an array of `bytes` (one access per 64-byte line); a pass is a unit of work.
    CpuScan {
        /// Working-set size in bytes.
        bytes: usize,
    },
    /// CPU-bound, yields after each `amount` of CPU time received.
    CpuYield {
        /// CPU time between yields.
        amount: Nanos,
    },
    /// Scanning and yielding.
    CpuScanYield {
        /// Working-set size in bytes.
        bytes: usize,
        /// CPU time between yields.
        amount: Nanos,
    },
    /// Never blocks: each time it has received `amount` it begins another period; a period that
    /// elapses without a completed frame is a miss.
    CpuPeriodic {
        /// CPU time per frame.
        amount: Nanos,
        /// Period.
        period: Nanos,
    },
    /// Dispatch latency test: sleeps `period` from its actual wake-up (resynchronised), records
    /// the lateness of each wake-up. Records no execution trace.
    Lat {
        /// Sleep period.
        period: Nanos,
    },
    /// A task of the scenario format (`cpu`, `periodic`, `interactive`): its start and jitter,
    /// requests and their execution draws, deadlines, what a late request becomes, interactions,
    /// all as its [`workload::Stream`] says. Its name, `start` and `stop` are its thread's (see
    /// [`ThreadSpec::align_task`]); a `cpu` task with a `working_set` scans an array that size.
    /// In JSON it is written as the appendix-A model it amounts to (`CPU`, `CPU_SCAN`,
    /// `PERIODIC`, `INTERACTIVE`).
    #[serde(untagged, serialize_with = "task_params")]
    Task(Box<TaskSpec>),
}

/// How a task's parameters are written (`workload_params` in hourglass's JSON).
#[derive(serde::Serialize)]
#[serde(tag = "model", rename_all = "SCREAMING_SNAKE_CASE")]
enum TaskParams<'a> {
    Cpu,
    CpuScan {
        bytes: usize,
    },
    Periodic {
        exec: &'a Exec,
        period: Nanos,
        /// The relative deadline when it is not the period.
        #[serde(skip_serializing_if = "Option::is_none")]
        deadline: Option<Nanos>,
        /// A late request is finished, not dropped at its deadline.
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        finish_late: bool,
    },
    Interactive {
        think: &'a Exec,
        burst: &'a Exec,
    },
}

fn task_params<S: serde::Serializer>(t: &TaskSpec, s: S) -> Result<S::Ok, S::Error> {
    use serde::Serialize;
    match &t.model {
        Model::Cpu { .. } => match scan_bytes(t) {
            Some(bytes) => TaskParams::CpuScan { bytes },
            None => TaskParams::Cpu,
        },
        Model::Periodic(p) => TaskParams::Periodic {
            exec: &p.exec,
            period: p.period,
            deadline: (p.deadline != p.period).then_some(p.deadline),
            finish_late: late_rule(p) == LateRule::Finish,
        },
        Model::Interactive { think, burst, .. } => TaskParams::Interactive { think, burst },
        // Refused before a run (simulated only).
        Model::Server | Model::Player(_) | Model::ForkWait { .. } => TaskParams::Cpu,
    }
    .serialize(s)
}

/// What a thread does with a late request of periodic task `p`: Linux sends no notification of a
/// coming miss, but the thread sees its own deadline pass (`"discard"` drops the request there).
pub fn late_rule(p: &Periodic) -> LateRule {
    p.late_rule(false, true)
}

/// The array a `cpu` task with a `working_set` scans (at least 64 bytes, at most
/// [`crate::budget::SCAN_CAP`]: larger than any cache, so that every line is refilled after a
/// switch, as the simulator's `min(working_set, cache)` refill has it), in bytes.
fn scan_bytes(t: &TaskSpec) -> Option<usize> {
    let cpu = matches!(t.model, Model::Cpu { .. });
    let bytes = t.working_set.clamp(64, crate::budget::SCAN_CAP);
    (cpu && t.working_set > 0).then(|| usize::try_from(bytes).unwrap_or(usize::MAX))
}

impl Workload {
    /// Appendix A's `PERIODIC amount period`: a periodic task needing `amount` every `period`, due
    /// at the end of its period, every other key at the scenario format's default (`on_miss =
    /// "discard"`: a request not done by its deadline is dropped there). Its thread gives it its
    /// name and window ([`ThreadSpec::align_task`]).
    pub fn periodic(amount: Nanos, period: Nanos) -> Workload {
        let p = Periodic::new(Exec::Fixed(amount), period);
        Workload::Task(Box::new(TaskSpec::new("", Model::Periodic(p))))
    }

    /// The scenario task this thread runs, if it runs one.
    pub fn task(&self) -> Option<&TaskSpec> {
        match self {
            Workload::Task(t) => Some(t),
            _ => None,
        }
    }

    /// The periodic task this thread runs, if it runs one.
    pub fn periodic_task(&self) -> Option<&Periodic> {
        match self.task().map(|t| &t.model) {
            Some(Model::Periodic(p)) => Some(p),
            _ => None,
        }
    }

    /// Appendix-A spelling, e.g. `PERIODIC 4ms 5ms`.
    pub fn describe(&self) -> String {
        let t = format_time;
        match self {
            Workload::Cpu => "CPU".into(),
            Workload::CpuScan { bytes } => format!("CPU_SCAN {}", bytes / 1024),
            Workload::CpuYield { amount } => format!("CPU_YIELD {}", t(*amount)),
            Workload::CpuScanYield { bytes, amount } => {
                format!("CPU_SCAN_YIELD {} {}", bytes / 1024, t(*amount))
            }
            Workload::CpuPeriodic { amount, period } => {
                format!("CPU_PERIODIC {} {}", t(*amount), t(*period))
            }
            Workload::Lat { period } => format!("LAT {}", t(*period)),
            Workload::Task(task) => match &task.model {
                Model::Cpu { .. } => match scan_bytes(task) {
                    Some(bytes) => format!("CPU_SCAN {}", bytes / 1024),
                    None => "CPU".into(),
                },
                Model::Periodic(p) => match p.exec {
                    Exec::Fixed(a) => format!("PERIODIC {} {}", t(a), t(p.period)),
                    e => format!("PERIODIC {e} {}", t(p.period)),
                },
                Model::Interactive { think, burst, .. } => format!("INTERACTIVE {think} {burst}"),
                m @ (Model::Server | Model::Player(_) | Model::ForkWait { .. }) => {
                    format!("{} (simulated only)", m.name())
                }
            },
        }
    }

    /// The model's name in the scenario format (`cpu`, `cpu-scan`, `periodic`, `latency`...).
    pub fn scenario_name(&self) -> &'static str {
        match self {
            Workload::Cpu => "cpu",
            Workload::CpuScan { .. } => "cpu-scan",
            Workload::CpuYield { .. } => "cpu-yield",
            Workload::CpuScanYield { .. } => "cpu-scan-yield",
            Workload::CpuPeriodic { .. } => "cpu-periodic",
            Workload::Lat { .. } => "latency",
            Workload::Task(t) if scan_bytes(t).is_some() => "cpu-scan",
            Workload::Task(t) => t.model.name(),
        }
    }

    /// The bytes of the array the thread scans, for the scanning models.
    pub fn scan_bytes(&self) -> Option<usize> {
        match self {
            Workload::CpuScan { bytes } | Workload::CpuScanYield { bytes, .. } => Some(*bytes),
            Workload::Task(t) => scan_bytes(t),
            _ => None,
        }
    }

    /// True for models that never block (they can monopolise a CPU at a real-time priority).
    pub fn never_blocks(&self) -> bool {
        match self {
            Workload::Cpu | Workload::CpuScan { .. } | Workload::CpuPeriodic { .. } => true,
            Workload::Task(t) => matches!(t.model, Model::Cpu { .. }),
            _ => false,
        }
    }

    /// True for models with deadlines (periodic ones).
    pub fn has_deadlines(&self) -> bool {
        matches!(self, Workload::CpuPeriodic { .. }) || self.periodic_task().is_some()
    }

    /// The period of periodic and latency models.
    pub fn period(&self) -> Option<Nanos> {
        match self {
            Workload::CpuPeriodic { period, .. } | Workload::Lat { period } => Some(*period),
            _ => self.periodic_task().map(|p| p.period),
        }
    }

    /// For the models that sleep on a timer, the interval its wake-ups come at (an RTC's rate is
    /// picked from it): the period, or an interactive task's mean think time (at least 1 µs).
    pub fn timer_period(&self) -> Option<Nanos> {
        match self {
            Workload::Lat { period } => Some(*period),
            Workload::Task(t) => match &t.model {
                Model::Cpu { .. } => None,
                Model::Periodic(p) => Some(p.period),
                Model::Interactive { think, .. } => Some(think.mean().max(1_000)),
                Model::Server | Model::Player(_) | Model::ForkWait { .. } => None,
            },
            _ => None,
        }
    }
}

/// A CPU reservation (`-rh` hard, `-rs` soft), provided by `SCHED_DEADLINE`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Reservation {
    /// Budget per period.
    pub amount: Nanos,
    /// Relative deadline: the budget is due this long after each period begins (`amount <=
    /// deadline <= period`, as the kernel requires); the period for `-rh`/`-rs`, a scenario
    /// task's `deadline` under a deadline policy.
    pub deadline: Nanos,
    /// Period.
    pub period: Nanos,
    /// Soft: `SCHED_FLAG_RECLAIM` lets the thread use idle time beyond its budget.
    pub soft: bool,
}

/// One Hourglass thread.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ThreadSpec {
    /// Name shown in outputs (`thread N` by default; the task name in scenario mode).
    pub name: String,
    /// Time-sharing or real-time priority.
    pub priority: Priority,
    /// A CPU reservation, which replaces the priority.
    pub reservation: Option<Reservation>,
    /// Execution model.
    pub workload: Workload,
    /// Timer for blocking models.
    pub timer: TimerKind,
    /// Start this far into the run (`-s`).
    pub start: Nanos,
    /// Stop this far into the run (`-f`); the run's end by default.
    pub finish: Option<Nanos>,
}

impl ThreadSpec {
    /// The default thread of appendix A: `-p NORMAL -w CPU -i NATIVE`.
    pub fn new(id: usize) -> ThreadSpec {
        ThreadSpec {
            name: format!("thread {id}"),
            priority: Priority::Normal,
            reservation: None,
            workload: Workload::Cpu,
            timer: TimerKind::Native,
            start: 0,
            finish: None,
        }
    }

    /// The thread of scenario task `t` (number `id`), in its window, with the run's defaults for
    /// what the scenario does not say (priority, timer).
    pub fn for_task(id: usize, t: &TaskSpec) -> ThreadSpec {
        ThreadSpec {
            name: t.name.clone(),
            workload: Workload::Task(Box::new(t.clone())),
            start: t.start,
            finish: t.stop,
            ..ThreadSpec::new(id)
        }
    }

    /// Gives a [`Workload::Task`] its thread's name, start and stop (appendix A's `-s` and `-f`
    /// may come before or after `-w PERIODIC`), so that its stream draws from the thread's
    /// generator and releases requests in the thread's window.
    pub fn align_task(&mut self) {
        if let Workload::Task(t) = &mut self.workload {
            t.name.clone_from(&self.name);
            t.start = self.start;
            t.stop = self.finish;
        }
    }

    /// True when this thread runs in a real-time class (FIFO or DEADLINE).
    pub fn is_rt(&self) -> bool {
        self.priority.is_rt() || self.reservation.is_some()
    }

    /// The scheduling it asks for, as text.
    pub fn sched_describe(&self) -> String {
        match self.reservation {
            Some(r) => format!(
                "{} {} {}{}",
                if r.soft { "-rs" } else { "-rh" },
                format_time(r.amount),
                format_time(r.period),
                if r.deadline == r.period {
                    String::new()
                } else {
                    format!(" deadline {}", format_time(r.deadline))
                }
            ),
            None => self.priority.name(),
        }
    }
}

/// Where threads run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum CpuChoice {
    /// All threads pinned to this CPU (the paper's uniprocessor).
    One(usize),
    /// Not pinned: the kernel's SMP scheduling.
    All,
}

impl std::str::FromStr for CpuChoice {
    type Err = String;

    /// `all`, or a CPU number (whether the process may use it is the caller's to check).
    fn from_str(s: &str) -> Result<CpuChoice, String> {
        if s == "all" {
            return Ok(CpuChoice::All);
        }
        s.parse().map(CpuChoice::One).map_err(|_| format!("'{s}' is not a CPU number or 'all'"))
    }
}

/// Output format of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Format {
    /// One-screen summary (default), plus the paper's `thread N: missed` lines.
    Text,
    /// The paper's complete output: every trace line, every `latlate:` line, the miss lines.
    Paper,
    /// The project's output contract (ARCHITECTURE.md).
    Json,
}

/// Output format of `hourglass analyze` and `hourglass bench` (`--format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ReportFormat {
    /// Readable text.
    Text,
    /// JSON.
    Json,
}

/// Which clock gap detection polls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum ClockChoice {
    /// Invariant TSC if present, else monotonic.
    Auto,
    /// Force `clock_gettime(CLOCK_MONOTONIC)`.
    Monotonic,
}

/// Default run length (appendix A).
pub const DEFAULT_DURATION: Nanos = 10_000_000_000;
/// Most threads in one run, from the command line (`-n`) or a scenario: each has its own trace
/// buffer and stack, and a thousand already share one CPU in slices too short to measure.
pub const MAX_THREADS: usize = 1024;

/// Longest run without `--force`.
pub const MAX_DURATION: Nanos = 600_000_000_000;
/// Default trace records (appendix A: "300000 (about 5 MB)").
pub const DEFAULT_RECORDS: usize = 300_000;

/// A whole run.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RunConfig {
    /// The threads, index = thread id.
    pub threads: Vec<ThreadSpec>,
    /// Run length (`-d`).
    pub duration: Nanos,
    /// Trace buffer records (`-e`); sized from the run when absent ([`crate::run::trace_records`]).
    pub records: Option<usize>,
    /// Also print the raw trace in cycles (`-c`).
    pub raw_cycles: bool,
    /// CPU placement (`--cpu`; in scenario mode, `machine.cpus` unless `--cpu` is given).
    pub cpu: CpuChoice,
    /// True when `--cpu` was given (it then replaces a scenario's `machine.cpus`, with a warning).
    #[serde(skip)]
    pub cpu_given: bool,
    /// Gap threshold override (`--gap`); calibrated per thread otherwise.
    pub gap: Option<Nanos>,
    /// Clock choice (`--clock`).
    pub clock: ClockChoice,
    /// Allow what the safety checks refuse (`--force`).
    pub force: bool,
    /// Output format.
    pub format: Format,
    /// Chrome-trace file to write (`--perfetto`).
    pub perfetto: Option<PathBuf>,
    /// Print latency/gap histograms (`--hist`).
    pub hist: bool,
    /// Include every interval and latency sample in JSON output (`--intervals`).
    pub trace: bool,
    /// The project's trace file to write (`--trace FILE`, crates/trace).
    pub trace_file: Option<PathBuf>,
    /// The watchdog ends the run if normal tasks on the workload CPU starve this long.
    pub starve_limit: Nanos,
    /// Hold `/dev/cpu_dma_latency` at this many µs during the run (`--pm-qos`; cyclictest writes 0
    /// by default, which keeps idle CPUs out of deep C-states).
    pub pm_qos: Option<i32>,
    /// The command line or scenario path, echoed in outputs.
    pub source: String,
    /// How much diagnostic chatter goes to stderr: the number of `-v` less the number of `-q`
    /// (0: warnings and progress; 1: debug; 2: trace; -1: warnings only; see [`crate::diag`]).
    #[serde(skip)]
    pub verbosity: i8,
    /// Scheduler policy label for JSON (`linux` unless a scenario names one).
    pub policy: String,
    /// Seed of the random draws (execution times, jitter): each thread draws from
    /// `workload::task_rng(seed, name)`, the simulator's per-task stream (1 when absent).
    pub seed: Option<u64>,
    /// The policy a scenario asked for (scenario mode).
    pub scenario_policy: Option<String>,
    /// The scenario's short name, its file stem, as `smartsim` reports it (scenario mode).
    pub scenario_name: Option<String>,
    /// What the scenario asked for that the real kernel cannot give (scenario mode).
    pub scenario_warnings: Vec<String>,
    /// How the scenario was mapped onto Linux, one line per decision (scenario mode): printed
    /// before the run and in the JSON output as `mapping`.
    pub scenario_mapping: Vec<String>,
}

impl RunConfig {
    /// A run of `n` default threads with default settings.
    pub fn new(n: usize) -> RunConfig {
        RunConfig {
            threads: (0..n).map(ThreadSpec::new).collect(),
            duration: DEFAULT_DURATION,
            records: None,
            raw_cycles: false,
            cpu: CpuChoice::One(default_cpu()),
            cpu_given: false,
            gap: None,
            clock: ClockChoice::Auto,
            force: false,
            format: Format::Text,
            perfetto: None,
            trace_file: None,
            hist: false,
            trace: false,
            starve_limit: 2_000_000_000,
            pm_qos: None,
            source: String::new(),
            verbosity: 0,
            policy: "linux".into(),
            seed: None,
            scenario_policy: None,
            scenario_name: None,
            scenario_warnings: Vec::new(),
            scenario_mapping: Vec::new(),
        }
    }
}

/// The default CPU: the last one the process may use (CPU 0 tends to take more housekeeping).
pub fn default_cpu() -> usize {
    *crate::sys::allowed_cpus().last().unwrap_or(&0)
}
