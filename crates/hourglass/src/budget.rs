//! What a run will hold in memory, estimated from its configuration before any thread starts, so
//! that a run that would exhaust memory is refused up front, naming the option or scenario key to
//! change and the sizes, instead of aborting on a failed allocation (or taking the machine's memory
//! while it measures). The style is `smartsim run`'s estimate (crates/sim/src/budget.rs): an upper
//! bound, a limit, `--force` to go past it.
//!
//! The estimate is an upper bound of what the run allocates, all of it touched (the run locks its
//! memory with `mlockall`, or touches it, so that no page fault lands inside a measurement):
//!
//! - **the trace buffer**: [`crate::run::trace_records`] slots of [`SLOT_BYTES`], preallocated; after
//!   the run each record filled becomes an interval in ns and the copies the summary and the
//!   `--trace`/`--perfetto` writers make ([`RECORD_BYTES`], [`RECORD_FILE_BYTES`] more with a file);
//! - **the scanned arrays**: each `CPU_SCAN`/`CPU_SCAN_YIELD` array, each `cpu` task's working set
//!   (capped at [`SCAN_CAP`], see [`crate::scenario`]);
//! - **the samples**: each wake-up or request a thread may record ([`samples`]: at most one a
//!   period, or one per half the mean interaction of an interactive task), in the vectors its model
//!   keeps ([`Kept`]) and the copies the outputs make ([`SAMPLE_COPY_BYTES`], [`SAMPLE_FILE_BYTES`]);
//! - **the stacks**: [`STACK_BYTES`] a thread.
//!
//! The limit is [`MAX_MEMORY`], the hostile-input suite's limit per case; `--force` raises it to three
//! quarters of the memory the machine has available (`MemAvailable` in `/proc/meminfo`), never
//! beyond: a run that cannot be held is refused even when forced.

use crate::config::{RunConfig, ThreadSpec, Workload};
use crate::units::Nanos;
use workload::Model;

/// Memory a run may hold without `--force`, bytes (1 GiB).
pub const MAX_MEMORY: u64 = 1 << 30;
/// Bytes of a trace buffer slot (a [`crate::run::Record`]).
pub const SLOT_BYTES: u64 = std::mem::size_of::<crate::run::Record>() as u64;
/// Bytes a filled slot costs after the run: its record taken from the buffer, its interval in ns and
/// the copies the summary sorts (measured: 94 bytes a record with the slot, for a run whose buffer
/// of 2,000,000 records filled).
pub const RECORD_BYTES: u64 = 96;
/// Bytes a filled slot costs more when `--trace` or `--perfetto` is written (the trace's records,
/// sorted, and the cut stretches they are made from; Perfetto's events; measured: 53 and 116).
pub const RECORD_FILE_BYTES: u64 = 128;
/// Bytes a wake-up or request costs besides the thread's own vectors ([`Kept::bytes`]): the copies
/// the summaries sort and the JSON's values.
pub const SAMPLE_COPY_BYTES: u64 = 48;
/// Bytes a wake-up or request costs more when `--trace` or `--perfetto` is written: up to three
/// trace records (its wake-up, release and end), each kept twice while they are sorted.
pub const SAMPLE_FILE_BYTES: u64 = 3 * 96;
/// The stack each thread is created with.
pub const STACK_BYTES: u64 = 256 << 10;
/// The largest array a scenario's `cpu` task scans for its `working_set`: larger than any cache, so
/// that, as in the simulator's `min(working_set, cache)` refill, every line the task touches is
/// refilled after a switch.
pub const SCAN_CAP: u64 = 256 << 20;

/// The wake-ups and requests thread `t` may record in a run of `duration`: at most one a period
/// (`LAT` sleeps a period from each wake-up; a periodic task releases a request a period,
/// `CPU_PERIODIC` misses at most one a period), and for an interactive task one an interaction,
/// counted at half the mean of its think and burst (an interaction takes their sum; interactions
/// averaging less than half that over a run are vanishingly rare, and the thread's vectors grow if
/// they happen); 16 more
/// for the edges of its window. A bound of what the thread keeps, reserved before the run.
pub fn samples(t: &ThreadSpec, duration: Nanos) -> u64 {
    let live = t.finish.unwrap_or(duration).min(duration).saturating_sub(t.start);
    let per = |p: Nanos| (live / p.max(1)).saturating_add(16);
    match &t.workload {
        Workload::Lat { period } | Workload::CpuPeriodic { period, .. } => per(*period),
        Workload::Task(task) => match &task.model {
            Model::Cpu { .. } => 0,
            Model::Periodic(p) => {
                let k = per(p.period);
                p.count.map_or(k, |c| c.saturating_add(16).min(k))
            }
            Model::Interactive { think, burst, count } => {
                let k = per(think.mean().saturating_add(burst.mean()) / 2);
                count.map_or(k, |c| c.saturating_add(16).min(k))
            }
            // Refused before a run (simulated only, `scenario::simulated_only_models`).
            Model::Server | Model::Player(_) | Model::ForkWait { .. } => 0,
        },
        _ => 0,
    }
}

/// Which of its vectors a thread fills, one value per wake-up or request ([`samples`]): each is
/// reserved whole before the run, so that the loop never reallocates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Kept {
    /// The lateness and time of each wake-up (`LAT`, periodic and interactive tasks).
    pub wakes: bool,
    /// The response time of each request or burst (periodic and interactive tasks).
    pub responses: bool,
    /// The time of each miss (periodic tasks, `CPU_PERIODIC`).
    pub misses: bool,
    /// The record of each request (periodic tasks).
    pub jobs: bool,
}

impl Kept {
    /// What `w` keeps.
    pub fn of(w: &Workload) -> Kept {
        match w {
            Workload::Lat { .. } => Kept { wakes: true, ..Kept::default() },
            Workload::CpuPeriodic { .. } => Kept { misses: true, ..Kept::default() },
            Workload::Task(t) => match t.model {
                Model::Cpu { .. } => Kept::default(),
                Model::Periodic(_) => Kept { wakes: true, responses: true, misses: true, jobs: true },
                Model::Interactive { .. } => Kept { wakes: true, responses: true, ..Kept::default() },
                Model::Server | Model::Player(_) | Model::ForkWait { .. } => Kept::default(),
            },
            _ => Kept::default(),
        }
    }

    /// Bytes a wake-up or request takes in the vectors kept.
    pub fn bytes(self) -> u64 {
        let job = std::mem::size_of::<crate::run::JobRecord>() as u64;
        16 * u64::from(self.wakes)
            + 8 * u64::from(self.responses)
            + 8 * u64::from(self.misses)
            + job * u64::from(self.jobs)
    }
}

/// What one part of a run holds, and what sets it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    /// Bytes.
    pub bytes: u64,
    /// What it is, with the option or key that sets it (`CPU_SCAN array of thread 0 (-w)`).
    pub what: String,
    /// The thread it belongs to, if one.
    pub thread: Option<usize>,
    /// The option (command line) that sets it.
    pub option: &'static str,
}

/// What a run will hold: its parts, largest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Estimate {
    /// The parts, largest first.
    pub parts: Vec<Part>,
}

impl Estimate {
    /// Bytes in all.
    pub fn total(&self) -> u64 {
        self.parts.iter().map(|p| p.bytes).fold(0, u64::saturating_add)
    }
}

/// Bytes a trace record of `cfg`'s run may cost in all: its slot, and what it becomes after the run
/// (more when a trace file is written).
pub fn record_bytes(cfg: &RunConfig) -> u64 {
    let files = cfg.trace_file.is_some() || cfg.perfetto.is_some();
    SLOT_BYTES + RECORD_BYTES + if files { RECORD_FILE_BYTES } else { 0 }
}

/// The estimate for `cfg`.
pub fn estimate(cfg: &RunConfig) -> Estimate {
    let mut parts = Vec::new();
    let records = crate::run::trace_records(cfg) as u64;
    let files = cfg.trace_file.is_some() || cfg.perfetto.is_some();
    parts.push(Part {
        bytes: records.saturating_mul(record_bytes(cfg)),
        what: format!(
            "the trace buffer, {records} records{}",
            if cfg.records.is_some() { " (-e)" } else { " (sized from -d)" }
        ),
        thread: None,
        option: if cfg.records.is_some() { "-e" } else { "-d" },
    });
    for (i, t) in cfg.threads.iter().enumerate() {
        if let Some(b) = t.workload.scan_bytes() {
            parts.push(Part {
                bytes: b as u64,
                what: match t.workload.task() {
                    Some(_) => format!("the array task \"{}\" scans (its working_set)", t.name),
                    None => format!("the array {} scans (-w {})", t.name, t.workload.describe()),
                },
                thread: Some(i),
                option: "-w",
            });
        }
        let n = samples(t, cfg.duration);
        if n > 0 {
            let each =
                Kept::of(&t.workload).bytes() + SAMPLE_COPY_BYTES + if files { SAMPLE_FILE_BYTES } else { 0 };
            parts.push(Part {
                bytes: n.saturating_mul(each),
                what: match t.workload.task() {
                    Some(task) => format!(
                        "{n} wake-ups or requests task \"{}\" may keep (its {}, over the run's duration)",
                        t.name,
                        if matches!(task.model, Model::Interactive { .. }) { "think" } else { "period" }
                    ),
                    None => format!(
                        "{n} wake-ups or requests {} may keep (-w {}, over -d)",
                        t.name,
                        t.workload.describe()
                    ),
                },
                thread: Some(i),
                option: "-w",
            });
        }
    }
    let n = cfg.threads.len() as u64;
    parts.push(Part {
        bytes: n * STACK_BYTES,
        what: format!("{n} thread stacks (a thread a task, or -n)"),
        thread: None,
        option: "-n",
    });
    parts.sort_by_key(|p| std::cmp::Reverse(p.bytes));
    Estimate { parts }
}

/// The memory the machine has available (`MemAvailable`), bytes, if known.
pub fn available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kb.checked_mul(1024)
}

/// The most a run may hold: [`MAX_MEMORY`], or with `force` three quarters of `available` (the
/// machine's, when known); never more than three quarters of what is available.
pub fn limit(force: bool, available: Option<u64>) -> u64 {
    let most = available.map_or(u64::MAX, |a| a / 4 * 3);
    if force {
        most
    } else {
        MAX_MEMORY.min(most)
    }
}

/// A size for people: `1.5 GiB`, `256.0 MiB`, `12.0 KiB`.
pub fn size(b: u64) -> String {
    size_to(b, 1)
}

/// [`size`] with `decimals` decimals.
fn size_to(b: u64, decimals: usize) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b} B")
    } else {
        format!("{v:.decimals$} {}", UNITS[u])
    }
}

/// Refuses an estimate over `limit`: the total, the limit and the parts that make it up (at most
/// five, largest first), and what to do. `forced` says whether the limit was already raised.
pub fn check(e: &Estimate, limit: u64, forced: bool) -> Result<(), String> {
    let total = e.total();
    if total <= limit {
        return Ok(());
    }
    let shown: Vec<String> = e
        .parts
        .iter()
        .take(5)
        .filter(|p| p.bytes > 0)
        .map(|p| format!("{} {}", size(p.bytes), p.what))
        .collect();
    let rest = e.parts.len().saturating_sub(5);
    Err(format!(
        "this run would hold about {} of memory, over the limit of {}{}: {}{}; {}",
        size_to(total, 2),
        size(limit),
        if forced { " (three quarters of the memory available)" } else { "" },
        shown.join(", "),
        if rest > 0 { format!(" and {rest} smaller") } else { String::new() },
        if forced {
            "make it smaller or shorter"
        } else {
            "make it smaller or shorter, or pass --force (up to three quarters of the memory available)"
        }
    ))
}

/// [`check`] of `cfg` on this machine; a refusal comes with the largest part, whose option or key
/// the caller names.
pub fn check_run(cfg: &RunConfig) -> Result<(), (Part, String)> {
    let e = estimate(cfg);
    check(&e, limit(cfg.force, available()), cfg.force).map_err(|m| (e.parts[0].clone(), m))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::RunConfig;

    #[test]
    fn a_lat_thread_keeps_at_most_one_sample_a_period() {
        let mut c = RunConfig::new(1);
        c.duration = 50_000_000;
        c.threads[0].workload = Workload::Lat { period: 1 };
        assert_eq!(samples(&c.threads[0], c.duration), 50_000_016);
        c.threads[0].workload = Workload::Lat { period: 1_000_000 };
        assert_eq!(samples(&c.threads[0], c.duration), 66);
        // Its window, not the run's.
        c.threads[0].start = 30_000_000;
        assert_eq!(samples(&c.threads[0], c.duration), 36);
    }

    #[test]
    fn the_limit_is_a_gib_and_force_raises_it_to_what_is_available() {
        assert_eq!(limit(false, Some(64 << 30)), 1 << 30);
        assert_eq!(limit(true, Some(64 << 30)), 48 << 30);
        assert_eq!(limit(false, Some(1 << 30)), 768 << 20, "never beyond what is available");
        assert_eq!(limit(true, None), u64::MAX);
    }

    #[test]
    fn a_run_over_the_limit_is_refused_with_its_parts() {
        let mut c = RunConfig::new(2);
        c.duration = 200_000_000;
        c.threads[1].workload = Workload::CpuScan { bytes: 1 << 30 };
        let e = estimate(&c);
        assert_eq!(e.parts[0].thread, Some(1));
        assert_eq!(e.parts[0].option, "-w");
        let msg = check(&e, limit(false, None), false).unwrap_err();
        assert!(msg.contains("over the limit of 1.0 GiB"), "{msg}");
        assert!(msg.contains("1.0 GiB the array thread 1 scans (-w CPU_SCAN 1048576)"), "{msg}");
        assert!(msg.contains("--force"), "{msg}");
        c.threads[1].workload = Workload::CpuScan { bytes: 1 << 20 };
        assert!(check(&estimate(&c), limit(false, None), false).is_ok());
    }

    #[test]
    fn the_default_trace_buffer_of_the_longest_run_fits_the_limit() {
        let mut c = RunConfig::new(4);
        c.duration = crate::config::MAX_DURATION;
        assert_eq!(crate::run::trace_records(&c), 4_473_924);
        assert!(check(&estimate(&c), MAX_MEMORY, false).is_ok());
        c.trace_file = Some("t.trace".into());
        assert_eq!(crate::run::trace_records(&c), 2_164_802);
        assert!(check(&estimate(&c), MAX_MEMORY, false).is_ok());
        // Below the cap, appendix A's 300000, or 50000 a second.
        c.duration = 10_000_000_000;
        assert_eq!(crate::run::trace_records(&c), 500_000);
    }

    #[test]
    fn sizes_read_as_people_read_them() {
        assert_eq!(size(512), "512 B");
        assert_eq!(size(1536), "1.5 KiB");
        assert_eq!(size(1 << 40), "1.0 TiB");
        assert_eq!(size_to((1 << 30) + (34 << 20), 2), "1.03 GiB");
    }
}
