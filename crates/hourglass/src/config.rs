//! What a run is: threads with a workload model, a priority or reservation, a timer, and a window
//! inside the run; plus the run-wide settings. Built by the appendix-A parser ([`crate::cli`]) or
//! from a scenario file ([`crate::scenario`]).

use crate::sys::Priority;
use crate::timer::TimerKind;
use crate::units::{format_time, Nanos};
use std::path::PathBuf;
use workload::Exec;

/// A thread execution model (§3.2).
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
    /// Needs `exec` of CPU time every `period` (a fixed time, or a distribution drawn per request,
    /// as the simulator draws it), blocks on its timer once it has it; a request not done by its
    /// deadline is a missed deadline (its rest is dropped, or finished late with `finish_late`).
    Periodic {
        /// CPU time per request (`PERIODIC amount period`: fixed; scenario `exec`: any [`Exec`]).
        exec: Exec,
        /// Period.
        period: Nanos,
        /// Relative deadline when it is not the period (scenario `deadline`; may exceed the
        /// period, then requests queue behind a late one as in the simulator).
        #[serde(skip_serializing_if = "Option::is_none")]
        deadline: Option<Nanos>,
        /// Finish a late request instead of dropping it at its deadline (scenario
        /// `on_miss = "finish"`, or `notify = "never"`).
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        finish_late: bool,
    },
    /// Sleeps a `think` time (the user), then runs a `burst` of CPU; again and again (scenario
    /// model `interactive`). Each wake-up's lateness is a latency sample.
    Interactive {
        /// Time between the end of a burst and the next wake-up.
        think: Exec,
        /// CPU per interaction.
        burst: Exec,
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
}

impl Workload {
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
            Workload::Periodic { exec, period, .. } => match exec {
                Exec::Fixed(a) => format!("PERIODIC {} {}", t(*a), t(*period)),
                e => format!("PERIODIC {e} {}", t(*period)),
            },
            Workload::Interactive { think, burst } => format!("INTERACTIVE {think} {burst}"),
            Workload::CpuPeriodic { amount, period } => {
                format!("CPU_PERIODIC {} {}", t(*amount), t(*period))
            }
            Workload::Lat { period } => format!("LAT {}", t(*period)),
        }
    }

    /// The model's name in the scenario format (`cpu`, `cpu-scan`, `periodic`, `latency`...).
    pub fn scenario_name(&self) -> &'static str {
        match self {
            Workload::Cpu => "cpu",
            Workload::CpuScan { .. } => "cpu-scan",
            Workload::CpuYield { .. } => "cpu-yield",
            Workload::CpuScanYield { .. } => "cpu-scan-yield",
            Workload::Periodic { .. } => "periodic",
            Workload::Interactive { .. } => "interactive",
            Workload::CpuPeriodic { .. } => "cpu-periodic",
            Workload::Lat { .. } => "latency",
        }
    }

    /// True for models that never block (they can monopolise a CPU at a real-time priority).
    pub fn never_blocks(&self) -> bool {
        matches!(self, Workload::Cpu | Workload::CpuScan { .. } | Workload::CpuPeriodic { .. })
    }

    /// The period of periodic and latency models.
    pub fn period(&self) -> Option<Nanos> {
        match self {
            Workload::Periodic { period, .. }
            | Workload::CpuPeriodic { period, .. }
            | Workload::Lat { period } => Some(*period),
            _ => None,
        }
    }
}

/// A CPU reservation (`-rh` hard, `-rs` soft), provided by `SCHED_DEADLINE`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Reservation {
    /// Budget per period.
    pub amount: Nanos,
    /// Period (and relative deadline).
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
    /// Total CPU work of a finite CPU-bound thread (scenario `work`): it ends when it has it.
    pub work: Option<Nanos>,
    /// Number of requests of a periodic thread, or of bursts of an interactive one (scenario
    /// `count`).
    pub count: Option<u64>,
    /// Scenario `jitter`: every release (a periodic request, an interactive wake-up, a CPU
    /// thread's start) is late by a uniform draw in `[0, jitter]`, as in the simulator.
    pub jitter: Option<Nanos>,
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
            work: None,
            count: None,
            jitter: None,
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
                "{} {} {}",
                if r.soft { "-rs" } else { "-rh" },
                format_time(r.amount),
                format_time(r.period)
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
    /// CPU placement (`--cpu`).
    pub cpu: CpuChoice,
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
