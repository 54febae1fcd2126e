//! The probe itself: threads that poll the clock and record every gap in their execution (§3.1,
//! figure 2), the thread models of §3.2, and the watchdog that keeps a run from hurting the machine.
//!
//! Design: each thread calibrates its own gap threshold from its own loop (a scanning loop is
//! slower than a bare one), then all threads start together at an absolute time. Records go into
//! one preallocated buffer shared by all threads (a slot is claimed with one atomic add, so the
//! hot loop takes no lock and allocates nothing); memory is locked with `mlockall`; nothing is
//! printed until every thread has finished.

use crate::budget;
use crate::clock::{mono_ns, Clock, ClockKind};
use crate::config::*;
use crate::sys;
use crate::timer::Timer;
use crate::units::Nanos;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::*};
use std::sync::{mpsc, Arc, Barrier};
use std::time::Duration;
use tracing::{debug, info};
use workload::{LateRule, Model, Planned, Stream};

/// Why an execution interval ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
#[repr(u8)]
pub enum EndReason {
    /// A gap: something else ran (another thread, an interrupt, the kernel).
    Gap,
    /// The thread called `sched_yield` (a voluntary switch).
    Yield,
    /// The thread blocked on its timer (a voluntary switch).
    Block,
    /// The thread's run ended.
    Finish,
}

/// One continuous block of CPU time a thread received, in raw clock ticks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record {
    /// Thread index.
    pub thread: u32,
    /// Why it ended.
    pub reason: EndReason,
    /// The CPU it ran on (`getcpu` when it began; a migration always shows as a gap).
    pub cpu: u16,
    /// First clock reading of the block.
    pub start: u64,
    /// Last clock reading of the block.
    pub end: u64,
}

const EMPTY: Record = Record { thread: 0, reason: EndReason::Gap, cpu: 0, start: 0, end: 0 };

/// The preallocated trace buffer, shared by all threads: a slot is claimed with one atomic add, so
/// the hot loop takes no lock and allocates nothing.
type TraceBuf = sys::SlotBuffer<Record>;

/// What one thread measured.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ThreadResult {
    /// Index.
    pub id: usize,
    /// What the thread was asked to do.
    pub spec: ThreadSpec,
    /// Kernel thread id.
    pub tid: i32,
    /// CPU time received, measured by gap detection (sum of the intervals).
    pub cpu_ns: u64,
    /// CPU time the kernel accounted to the thread (`CLOCK_THREAD_CPUTIME_ID`), for comparison.
    pub kernel_cpu_ns: u64,
    /// Times the kernel dispatched the thread during the run (`/proc/thread-self/schedstat`), if
    /// the kernel keeps the count.
    pub dispatches: Option<u64>,
    /// Deadlines met (periodic models).
    pub hits: u64,
    /// Deadlines missed (periodic models).
    pub misses: u64,
    /// When each miss happened, ns from the start of the run.
    pub miss_at_ns: Vec<u64>,
    /// Wake-up lateness of each timer expiry, ns (LAT: every wake-up; PERIODIC: each release
    /// the thread slept for).
    pub latencies_ns: Vec<u64>,
    /// When each wake-up in `latencies_ns` happened, ns from the start of the run.
    pub wake_at_ns: Vec<u64>,
    /// Response time (release to completion) of each met period, ns (PERIODIC).
    pub responses_ns: Vec<u64>,
    /// Scenario mode, periodic tasks: every request, in order (ns from the start of the run).
    #[serde(skip)]
    pub jobs: Vec<JobRecord>,
    /// Units of work: passes over the array (scanning models), frames (CPU_PERIODIC), jobs done
    /// (PERIODIC); loop iterations otherwise.
    pub work: u64,
    /// Number of `sched_yield` calls.
    pub yields: u64,
    /// Gap threshold used, ns.
    pub gap_ns: u64,
    /// Median iteration time of the thread's loop at calibration, ns.
    pub loop_ns: f64,
    /// RTC interrupt rate, when the RTC timer was used.
    pub rtc_hz: Option<u32>,
    /// Scenario mode: when the task left (its work done, its last request or burst, its stop
    /// time), ns from the start of the run, as `smartsim` reports it; `None` for appendix-A threads.
    pub finish_ns: Option<u64>,
}

impl ThreadResult {
    fn new(id: usize, spec: &ThreadSpec) -> ThreadResult {
        ThreadResult {
            id,
            spec: spec.clone(),
            tid: 0,
            cpu_ns: 0,
            kernel_cpu_ns: 0,
            dispatches: None,
            hits: 0,
            misses: 0,
            miss_at_ns: Vec::new(),
            latencies_ns: Vec::new(),
            wake_at_ns: Vec::new(),
            responses_ns: Vec::new(),
            jobs: Vec::new(),
            work: 0,
            yields: 0,
            gap_ns: 0,
            loop_ns: 0.0,
            rtc_hz: None,
            finish_ns: None,
        }
    }
}

/// One request of a scenario's periodic task, in ns from the start of the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JobRecord {
    /// When it was released (its nominal release plus its jitter draw).
    pub release_ns: u64,
    /// Its deadline.
    pub deadline_ns: u64,
    /// When it ended: finished, or dropped at its deadline.
    pub end_ns: u64,
    /// How.
    pub outcome: trace::Outcome,
}

/// An execution interval converted to nanoseconds from the start of the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Interval {
    /// Thread index.
    pub thread: u32,
    /// Start, ns from the run's start.
    pub start_ns: u64,
    /// End, ns from the run's start.
    pub end_ns: u64,
    /// Why it ended.
    pub reason: EndReason,
    /// The CPU it ran on.
    pub cpu: u32,
}

/// Everything a run measured.
#[derive(Debug, Clone)]
pub struct RunResult {
    /// The configuration that ran.
    pub config: RunConfig,
    /// The clock that was polled.
    pub clock: ClockKind,
    /// Its rate in Hz.
    pub clock_hz: f64,
    /// Clock value at the start of the run (for `-c` raw output).
    pub t0_ticks: u64,
    /// `CLOCK_MONOTONIC` at the start of the run, ns: every time in the outputs is relative to
    /// it, so a trace can be aligned with kernel events (BPF's `bpf_ktime_get_ns`, klogger).
    pub t0_monotonic_ns: u64,
    /// Run length actually covered, ns.
    pub duration_ns: u64,
    /// The execution trace in raw ticks, sorted by start.
    pub records: Vec<Record>,
    /// The same trace in ns from the start of the run.
    pub intervals: Vec<Interval>,
    /// Records that did not fit in the buffer (`-e`).
    pub dropped: u64,
    /// Per-thread results.
    pub threads: Vec<ThreadResult>,
    /// Things the user should know (fallbacks, unpinned reservations...).
    pub warnings: Vec<String>,
    /// Set when the watchdog ended the run early, with the reason.
    pub watchdog: Option<String>,
}

/// A run that could not be done, with the reasons.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct RunError(pub String);

/// Safety checks done before anything runs, on this machine. Returns warnings; errors are
/// refusals.
pub fn check_safety(cfg: &RunConfig) -> Result<Vec<String>, RunError> {
    budget::check_run(cfg).map_err(|(_, m)| RunError(m))?;
    check_safety_on(cfg, &Machine::this())
}

/// What the safety checks need to know about a machine.
#[derive(Debug, Clone)]
pub struct Machine {
    /// May this process use real-time policies?
    pub can_rt: bool,
    /// `sched_rt_runtime_us` (-1 = throttling disabled), if readable.
    pub rt_runtime_us: Option<i64>,
    /// CPUs this process may use.
    pub cpus: usize,
}

impl Machine {
    /// The machine this process runs on.
    pub fn this() -> Machine {
        Machine {
            can_rt: sys::can_use_rt(),
            rt_runtime_us: sys::rt_throttling().map(|t| t.0),
            cpus: sys::allowed_cpus().len(),
        }
    }
}

/// [`check_safety`] against a described machine (so the refusals can be tested without
/// changing the real machine's settings).
pub fn check_safety_on(cfg: &RunConfig, m: &Machine) -> Result<Vec<String>, RunError> {
    let mut warnings = Vec::new();
    if cfg.threads.len() > MAX_THREADS {
        return Err(RunError(format!("{} threads: hourglass runs at most {MAX_THREADS}", cfg.threads.len())));
    }
    if cfg.duration > MAX_DURATION && !cfg.force {
        return Err(RunError(format!(
            "a run of {} exceeds the {} cap; add --force",
            crate::units::format_time(cfg.duration),
            crate::units::format_time(MAX_DURATION)
        )));
    }
    let any_rt = cfg.threads.iter().any(|t| t.is_rt());
    if any_rt {
        if !m.can_rt {
            return Err(RunError(
                "real-time priorities and reservations need root or CAP_SYS_NICE (or an \
                 RLIMIT_RTPRIO); run with sudo, or use the timesharing priorities"
                    .into(),
            ));
        }
        match m.rt_runtime_us {
            Some(r) if r < 0 && !cfg.force => {
                return Err(RunError(
                    "RT throttling is disabled (/proc/sys/kernel/sched_rt_runtime_us = -1): a \
                     real-time thread could hang this machine. Restore it with `sysctl \
                     kernel.sched_rt_runtime_us=950000`, or add --force if you know what you are doing"
                        .into(),
                ))
            }
            Some(r) if r < 0 => warnings.push("RT throttling is disabled (forced)".into()),
            _ => {}
        }
        let hogs = cfg
            .threads
            .iter()
            .any(|t| t.priority.is_rt() && t.reservation.is_none() && t.workload.never_blocks());
        let covers_all = match cfg.cpu {
            CpuChoice::All => true,
            CpuChoice::One(_) => m.cpus <= 1,
        };
        if hogs && covers_all && !cfg.force {
            return Err(RunError(
                "never-blocking SCHED_FIFO threads (CPU, CPU_SCAN, CPU_PERIODIC at RTLOW..RTHIGH) \
                 would occupy every CPU this process may use and starve the system; pin them to \
                 one CPU of several with --cpu N, use a blocking model, or add --force"
                    .into(),
            ));
        }
    }
    Ok(warnings)
}

/// Trace buffer size: `-e` if given; otherwise 300000 records (appendix A), or 50000 per second
/// of run per tracing CPU if that is more (a modern machine under a VM shows thousands of short
/// gaps a second), at most what half the memory limit holds ([`budget::MAX_MEMORY`] /
/// [`budget::record_bytes`]: about 4.5 million records, 2.2 million with `--trace` or `--perfetto`);
/// latency-only runs need almost none.
pub fn trace_records(cfg: &RunConfig) -> usize {
    if let Some(e) = cfg.records {
        return e;
    }
    let tracing = cfg.threads.iter().filter(|t| !matches!(t.workload, Workload::Lat { .. })).count();
    if tracing == 0 {
        return 1024;
    }
    let cpus = match cfg.cpu {
        CpuChoice::One(_) => 1,
        CpuChoice::All => sys::allowed_cpus().len().min(tracing),
    } as u64;
    let per_run = (50_000 * cpus).saturating_mul(cfg.duration.div_ceil(1_000_000_000));
    let most = budget::MAX_MEMORY / 2 / budget::record_bytes(cfg);
    per_run.clamp(DEFAULT_RECORDS as u64, most) as usize
}

/// A loop body: what the thread does between two clock readings.
trait Body {
    fn step(&mut self);
    fn passes(&self) -> u64;
}

struct Bare(u64);
impl Body for Bare {
    #[inline(always)]
    fn step(&mut self) {
        self.0 += 1;
    }
    fn passes(&self) -> u64 {
        self.0
    }
}

/// Scans an array one cache line per step (§3.2 "CPU bound, scanning"; §5.2's working set).
struct Scan {
    buf: Vec<u64>,
    i: usize,
    acc: u64,
    passes: u64,
}
impl Scan {
    /// The array of `bytes`, every line written; an error rather than an abort when the memory is
    /// not there (the run's estimate bounds it first, [`budget`]).
    fn new(bytes: usize) -> Result<Scan, String> {
        let n = (bytes / 8).max(8);
        let mut buf = Vec::new();
        reserve(&mut buf, n)
            .map_err(|_| format!("cannot allocate the {} array it scans", budget::size(bytes as u64)))?;
        buf.extend(0..n as u64);
        Ok(Scan { buf, i: 0, acc: 0, passes: 0 })
    }
}
impl Body for Scan {
    #[inline(always)]
    fn step(&mut self) {
        // i < buf.len() is kept by the wrap below (so the bounds check never fails).
        let v = self.buf[self.i];
        self.acc = self.acc.wrapping_add(v);
        self.i += 8;
        if self.i >= self.buf.len() {
            self.i = 0;
            self.passes += 1;
            std::hint::black_box(self.acc);
        }
    }
    fn passes(&self) -> u64 {
        self.passes
    }
}

#[derive(Debug, PartialEq, Eq)]
enum Why {
    Budget,
    Stop,
    Abort,
}

/// Gap detection state of one thread (figure 2).
struct Gapper<'a> {
    clock: Clock,
    gap: u64,
    trace: &'a TraceBuf,
    abort: &'a AtomicBool,
    id: u32,
    exec_start: u64,
    last: u64,
    open: bool,
    cpu_ticks: u64,
    cpu: u16,
}

impl Gapper<'_> {
    fn begin(&mut self) {
        self.cpu = sys::current_cpu() as u16;
        let now = self.clock.now();
        self.exec_start = now;
        self.last = now;
        self.open = true;
    }

    fn close(&mut self, reason: EndReason) {
        if self.open {
            self.trace.push(Record {
                thread: self.id,
                reason,
                cpu: self.cpu,
                start: self.exec_start,
                end: self.last,
            });
            self.open = false;
        }
    }

    /// Runs `body` and polls the clock until `budget` ticks of CPU time have been received,
    /// the clock reaches `stop`, or the run is aborted. Records a trace entry at each gap.
    #[inline(never)]
    fn spin<B: Body>(&mut self, body: &mut B, stop: u64, budget: u64) -> (u64, Why) {
        let mut got = 0u64;
        let gap = self.gap;
        let mut exec_start = self.exec_start;
        let mut last = self.last;
        let why = loop {
            body.step();
            let now = self.clock.now();
            let d = now.wrapping_sub(last);
            if d > gap {
                self.trace.push(Record {
                    thread: self.id,
                    reason: EndReason::Gap,
                    cpu: self.cpu,
                    start: exec_start,
                    end: last,
                });
                self.cpu = sys::current_cpu() as u16;
                // Re-read the clock: the record's store (often a cache miss) and the getcpu ran on
                // the CPU in the new interval, and must not be reported as the next gap. Their time
                // is received CPU like any step's, so that the intervals hold exactly the time
                // counted as received. A gap inside them (a preemption the loop cannot otherwise
                // see; once 9 ms in CI) starts the interval after it instead.
                last = self.clock.now();
                let own = last.wrapping_sub(now);
                if own > gap {
                    exec_start = last;
                    self.cpu = sys::current_cpu() as u16;
                } else {
                    exec_start = now;
                    got += own;
                }
            } else {
                got += d;
                last = now;
            }
            if got >= budget {
                break Why::Budget;
            }
            if now >= stop {
                break Why::Stop;
            }
            if self.abort.load(Relaxed) {
                break Why::Abort;
            }
        };
        self.exec_start = exec_start;
        self.last = last;
        self.cpu_ticks += got;
        (got, why)
    }
}

/// Calibrates the gap threshold of a loop: runs `body` + clock reads for ~2 ms and returns
/// (threshold ticks, median iteration ticks). The threshold is twice the 99th percentile of the
/// iteration time (the paper used twice the typical time; a modern out-of-order CPU has a longer
/// tail of slow iterations that are not gaps), and never below 2 × median.
fn calibrate<B: Body>(clock: &Clock, body: &mut B) -> (u64, f64) {
    const N: usize = 20_000;
    let mut d = Vec::with_capacity(N);
    let end = clock.now() + clock.to_ticks(2_000_000);
    let mut last = clock.now();
    while d.len() < N {
        body.step();
        let now = clock.now();
        d.push(now.wrapping_sub(last));
        last = now;
        if now > end && d.len() >= 1000 {
            break;
        }
    }
    d.sort_unstable();
    let med = d[d.len() / 2].max(1);
    let p99 = d[d.len() * 99 / 100].max(1);
    ((2 * p99).max(2 * med), med as f64)
}

struct Shared {
    abort: AtomicBool,
    t0: AtomicU64,
    done: AtomicUsize,
    trace: TraceBuf,
    barrier: Barrier,
    clock: Clock,
}

/// Runs the configured threads and returns what they measured.
pub fn run(cfg: &RunConfig) -> Result<RunResult, RunError> {
    let mut warnings = check_safety(cfg)?;
    warnings.extend(cfg.scenario_warnings.iter().cloned());
    let (clock, w) = match cfg.clock {
        ClockChoice::Auto => Clock::best(Duration::from_millis(100)),
        ClockChoice::Monotonic => (Clock::monotonic(), None),
    };
    warnings.extend(w);
    debug!("clock: {:?} at {:.0} Hz", clock.kind(), clock.hz());
    match sys::lock_memory() {
        Ok(()) => debug!("memory locked (mlockall)"),
        Err(e) => warnings.push(e),
    }
    // Held open for the whole run: the PM QoS request lasts as long as the file is open.
    let _pm_qos = match cfg.pm_qos {
        Some(us) => Some(sys::PmQos::hold(us).map_err(RunError)?),
        None => None,
    };
    let n = cfg.threads.len();
    debug!("{n} thread(s); trace buffer of {} records", trace_records(cfg));
    let shared = Arc::new(Shared {
        abort: AtomicBool::new(false),
        t0: AtomicU64::new(0),
        done: AtomicUsize::new(0),
        trace: TraceBuf::new(trace_records(cfg), EMPTY),
        barrier: Barrier::new(n + 1),
        clock,
    });
    if cfg.threads.iter().any(|t| t.reservation.is_some()) && matches!(cfg.cpu, CpuChoice::One(_)) {
        warnings.push(
            "reserved (-rh/-rs) threads are not pinned: Linux refuses SCHED_DEADLINE for a task \
             pinned to part of its root domain"
                .into(),
        );
    }
    let (tx, rx) = mpsc::channel::<Result<i32, String>>();
    let mut handles = Vec::new();
    // One copy of the configuration for all threads (a copy each is quadratic in threads).
    let shared_cfg = Arc::new(cfg.clone());
    for (id, spec) in cfg.threads.iter().enumerate() {
        let spec = spec.clone();
        let shared = shared.clone();
        let tx = tx.clone();
        let cfg2 = shared_cfg.clone();
        let h = std::thread::Builder::new()
            .name(format!("hg-{id}"))
            .stack_size(budget::STACK_BYTES as usize)
            .spawn(move || thread_main(id, &spec, &cfg2, &shared, tx))
            .map_err(|e| RunError(format!("cannot create thread {id}: {e}")))?;
        handles.push(h);
    }
    drop(tx);
    let mut errors = Vec::new();
    let mut tids = Vec::new();
    for _ in 0..n {
        match rx.recv_timeout(Duration::from_secs(20)) {
            Ok(Ok(tid)) => tids.push(tid),
            Ok(Err(e)) => errors.push(e),
            Err(_) => errors.push("a thread did not get ready within 20 s".into()),
        }
    }
    if !errors.is_empty() {
        shared.abort.store(true, SeqCst);
    }
    let t0 = mono_ns() + 20_000_000;
    shared.t0.store(t0, SeqCst);
    let t0_ticks = clock.ticks_at(t0);
    let end = t0 + cfg.duration;
    // The watchdog: above every workload priority when real-time threads run.
    let wd_reason = Arc::new(std::sync::Mutex::new(None::<String>));
    let wd = if errors.is_empty() {
        Some(spawn_watchdog(cfg, shared.clone(), tids.clone(), end, wd_reason.clone(), &mut warnings))
    } else {
        None
    };
    shared.barrier.wait();
    let mut threads = Vec::new();
    for h in handles {
        match h.join() {
            Ok(r) => threads.push(r),
            Err(_) => errors.push("a thread panicked".into()),
        }
    }
    shared.done.store(usize::MAX, SeqCst);
    if let Some(w) = wd {
        let _ = w.join();
    }
    sys::unlock_memory();
    if !errors.is_empty() {
        errors.dedup();
        return Err(RunError(errors.join("\n")));
    }
    let shared = Arc::try_unwrap(shared).map_err(|_| RunError("internal: trace still shared".into()))?;
    let (mut records, dropped) = shared.trace.into_vec();
    records.sort_by_key(|r| (r.start, r.thread));
    if dropped > 0 {
        warnings.push(format!(
            "the trace buffer was full: {dropped} records dropped (raise -e above {})",
            trace_records(cfg)
        ));
    }
    let intervals = records
        .iter()
        .map(|r| Interval {
            thread: r.thread,
            start_ns: clock.to_ns(r.start.saturating_sub(t0_ticks)),
            end_ns: clock.to_ns(r.end.saturating_sub(t0_ticks)),
            reason: r.reason,
            cpu: r.cpu as u32,
        })
        .collect();
    for t in &threads {
        debug!(
            "{}: tid {}, gap threshold {} ns, loop {:.1} ns per iteration{}",
            t.spec.name,
            t.tid,
            t.gap_ns,
            t.loop_ns,
            t.rtc_hz.map(|hz| format!(", RTC at {hz} Hz")).unwrap_or_default()
        );
    }
    debug!("{} intervals recorded, {dropped} dropped", records.len());
    let watchdog = wd_reason.lock().map(|g| g.clone()).unwrap_or(None);
    Ok(RunResult {
        config: cfg.clone(),
        clock: clock.kind(),
        clock_hz: clock.hz(),
        t0_ticks,
        t0_monotonic_ns: t0,
        // As in the simulator, a scenario run in which every task left (its work, its requests, its
        // stop time) ends when the last one did (appendix-A threads have no finish time).
        duration_ns: threads
            .iter()
            .map(|t| t.finish_ns)
            .collect::<Option<Vec<_>>>()
            .and_then(|f| f.into_iter().max())
            .map_or(cfg.duration, |f| f.min(cfg.duration)),
        records,
        intervals,
        dropped,
        threads,
        warnings,
        watchdog,
    })
}

fn spawn_watchdog(
    cfg: &RunConfig,
    shared: Arc<Shared>,
    tids: Vec<i32>,
    end: u64,
    reason: Arc<std::sync::Mutex<Option<String>>>,
    warnings: &mut Vec<String>,
) -> std::thread::JoinHandle<()> {
    let any_rt = cfg.threads.iter().any(|t| t.is_rt());
    let n = cfg.threads.len();
    let starve_limit = cfg.starve_limit;
    let duration = cfg.duration;
    // A canary: a normal thread on the workload CPU whose heartbeat shows that normal tasks run.
    let heartbeat = Arc::new(AtomicU64::new(mono_ns()));
    let canary_stop = Arc::new(AtomicBool::new(false));
    let canary_cpu = match cfg.cpu {
        CpuChoice::One(c) if any_rt => Some(c),
        _ => None,
    };
    if let Some(c) = canary_cpu {
        let hb = heartbeat.clone();
        let stop = canary_stop.clone();
        let _ = std::thread::Builder::new().name("hg-canary".into()).spawn(move || {
            let _ = sys::pin_to(c);
            while !stop.load(Relaxed) {
                hb.store(mono_ns(), Relaxed);
                std::thread::sleep(Duration::from_millis(20));
            }
        });
    }
    let other_cpu = match cfg.cpu {
        CpuChoice::One(c) => sys::allowed_cpus().into_iter().find(|&x| x != c),
        CpuChoice::All => None,
    };
    let rt_ok = any_rt && sys::can_use_rt();
    if any_rt && !rt_ok {
        warnings.push("the watchdog could not get SCHED_FIFO 99".into());
    }
    std::thread::Builder::new()
        .name("hg-watchdog".into())
        .spawn(move || {
            if let Some(c) = other_cpu {
                let _ = sys::pin_to(c);
            }
            if rt_ok {
                let _ = sys::set_fifo(sys::WATCHDOG_FIFO);
            }
            let grace = 1_000_000_000u64;
            let hard = 5_000_000_000u64;
            let mut fired = false;
            // Progress for long runs, from this thread (on another CPU than the workload when
            // there is one), to stderr only.
            let t0 = end - duration;
            let mut next_progress = if duration >= 30_000_000_000 { t0 + 10_000_000_000 } else { u64::MAX };
            loop {
                if mono_ns() >= next_progress && next_progress < end {
                    info!(
                        "{} of {} done",
                        crate::units::format_time((next_progress - t0) / 1_000_000_000 * 1_000_000_000),
                        crate::units::format_time(duration)
                    );
                    next_progress += 10_000_000_000;
                }
                std::thread::sleep(Duration::from_millis(50));
                let done = shared.done.load(Relaxed);
                if done == usize::MAX || done >= n {
                    canary_stop.store(true, Relaxed);
                    return;
                }
                let now = mono_ns();
                let mut why = None;
                if now > end + grace {
                    why = Some(format!(
                        "watchdog: threads still running {} ms after the end of the run",
                        (now - end) / 1_000_000
                    ));
                }
                if canary_cpu.is_some() {
                    let hb = heartbeat.load(Relaxed);
                    if now > hb + starve_limit {
                        why = Some(format!(
                            "watchdog: normal tasks on the workload CPU did not run for {} ms \
                             (limit --starve-limit {})",
                            (now - hb) / 1_000_000,
                            crate::units::format_time(starve_limit)
                        ));
                    }
                }
                if let Some(w) = why {
                    if !fired {
                        fired = true;
                        shared.abort.store(true, SeqCst);
                        for &t in &tids {
                            sys::demote(t);
                        }
                        if let Ok(mut g) = reason.lock() {
                            *g = Some(w);
                        }
                    }
                }
                if now > end + hard {
                    eprintln!("hourglass: watchdog: run did not end 5 s after its deadline; exiting");
                    std::process::exit(3);
                }
            }
        })
        .expect("spawn watchdog")
}

fn thread_main(
    id: usize,
    spec: &ThreadSpec,
    cfg: &RunConfig,
    sh: &Shared,
    tx: mpsc::Sender<Result<i32, String>>,
) -> ThreadResult {
    let mut res = ThreadResult::new(id, spec);
    res.tid = sys::gettid();
    let fail = |e: String, res: ThreadResult| {
        let _ = tx.send(Err(format!("{}: {e}", spec.name)));
        sh.barrier.wait();
        res
    };
    if let (CpuChoice::One(c), None) = (cfg.cpu, spec.reservation) {
        if let Err(e) = sys::pin_to(c) {
            return fail(e, res);
        }
    }
    let set = match spec.reservation {
        Some(r) => sys::set_deadline(r.amount, r.deadline, r.period, r.soft),
        None => spec.priority.apply(),
    };
    if let Err(e) = set {
        return fail(e, res);
    }
    let mut timer = match spec.workload.timer_period() {
        Some(p) => match Timer::open(spec.timer, p) {
            Ok(t) => Some(t),
            Err(e) => return fail(e, res),
        },
        None => None,
    };
    res.rtc_hz = timer.as_ref().and_then(|t| t.rtc_hz());
    let clock = sh.clock;
    let mut g = Gapper {
        clock,
        gap: 0,
        trace: &sh.trace,
        abort: &sh.abort,
        id: id as u32,
        exec_start: 0,
        last: 0,
        open: false,
        cpu_ticks: 0,
        cpu: 0,
    };
    // Room for every sample the thread may keep, bounded before the run ([`budget::samples`],
    // within the run's memory limit), so that the loop never reallocates.
    let cap = usize::try_from(budget::samples(spec, cfg.duration)).unwrap_or(usize::MAX);
    let kept = budget::Kept::of(&spec.workload);
    let n = |keep: bool| if keep { cap } else { 0 };
    let reserved = reserve(&mut res.latencies_ns, n(kept.wakes))
        .and_then(|()| reserve(&mut res.wake_at_ns, n(kept.wakes)))
        .and_then(|()| reserve(&mut res.responses_ns, n(kept.responses)))
        .and_then(|()| reserve(&mut res.miss_at_ns, n(kept.misses)))
        .and_then(|()| reserve(&mut res.jobs, n(kept.jobs)));
    if let Err(e) = reserved {
        return fail(e, res);
    }
    let mut scan = match spec.workload.scan_bytes().map(Scan::new).transpose() {
        Ok(s) => s,
        Err(e) => return fail(e, res),
    };
    let mut bare = Bare(0);
    let (gap, med) = match &mut scan {
        Some(s) => calibrate(&clock, s),
        None => calibrate(&clock, &mut bare),
    };
    g.gap = cfg.gap.map(|ns| clock.to_ticks(ns)).unwrap_or(gap);
    res.gap_ns = clock.to_ns(g.gap);
    res.loop_ns = clock.to_ns(med as u64) as f64;
    if let Some(s) = &mut scan {
        s.passes = 0;
    }
    bare.0 = 0;
    let _ = tx.send(Ok(res.tid));
    drop(tx);
    sh.barrier.wait();
    if sh.abort.load(SeqCst) {
        return res;
    }
    let t0 = sh.t0.load(SeqCst);
    let w = Window {
        t0,
        start: t0 + spec.start,
        finish: t0 + spec.finish.unwrap_or(cfg.duration).min(cfg.duration),
    };
    let cpu0 = sys::thread_cpu_ns();
    let dispatches0 = sys::thread_dispatches();
    Timer::Hr.sleep_until(w.start);
    let seed = cfg.seed.unwrap_or(1);
    let mut th = Thread { g: &mut g, window: w, timer: timer.as_mut(), res: &mut res, seed };
    match &mut scan {
        Some(s) => th.model(s, &spec.workload),
        None => th.model(&mut bare, &spec.workload),
    }
    res.kernel_cpu_ns = sys::thread_cpu_ns() - cpu0;
    res.dispatches = dispatches0.zip(sys::thread_dispatches()).map(|(a, b)| b.saturating_sub(a));
    res.cpu_ns = clock.to_ns(g.cpu_ticks);
    if cfg.scenario_name.is_some() {
        // A task that reaches its stop time leaves then, as in the simulator.
        if res.finish_ns.is_none() && !sh.abort.load(SeqCst) {
            res.finish_ns = spec.finish.filter(|&f| f < cfg.duration);
        }
    } else {
        // Appendix-A threads belong to the whole run (`-f` ends one early): no finish time.
        res.finish_ns = None;
    }
    // Units of work: passes over the array, frames or requests done, bursts (counted by the
    // model); loop iterations otherwise.
    res.work = match (&scan, &spec.workload) {
        (Some(s), _) => s.passes(),
        (None, w) if w.has_deadlines() => res.hits,
        (None, Workload::Task(t)) if matches!(t.model, Model::Interactive { .. }) => res.work,
        _ => bare.passes(),
    };
    sh.done.fetch_add(1, SeqCst);
    res
}

/// Makes room for `n` more values in `v`, or says that the memory is not there (rather than abort).
fn reserve<T>(v: &mut Vec<T>, n: usize) -> Result<(), String> {
    v.try_reserve_exact(n).map_err(|_| {
        let bytes = (n as u64).saturating_mul(std::mem::size_of::<T>() as u64);
        format!("not enough memory for {n} samples ({})", budget::size(bytes))
    })
}

/// A thread's place in time, in `CLOCK_MONOTONIC` ns: when the run starts, when the thread starts
/// (`-s`, a task's `start`) and when it must stop (`-f`, a task's `stop`, the run's end).
#[derive(Clone, Copy)]
struct Window {
    t0: u64,
    start: u64,
    finish: u64,
}

/// One thread at work: its gap detection, its window, its timer (models that sleep), what it
/// measures, and the run's seed (a task draws from the simulator's per-task generator, so the same
/// seed and name give the same draws in both tools).
struct Thread<'t, 'g> {
    g: &'t mut Gapper<'g>,
    window: Window,
    timer: Option<&'t mut Timer>,
    res: &'t mut ThreadResult,
    seed: u64,
}

impl Thread<'_, '_> {
    /// Sleeps on the thread's timer until `until`, measuring how late it wakes.
    fn sleep_until(&mut self, until: u64) {
        let timer = self.timer.as_mut().expect("a model that sleeps has a timer");
        self.g.close(EndReason::Block);
        timer.sleep_until(until);
        let woke = mono_ns();
        self.res.latencies_ns.push(woke.saturating_sub(until));
        self.res.wake_at_ns.push(woke.saturating_sub(self.window.t0));
        self.g.begin();
    }

    /// The task ends now, ns from the start of the run.
    fn leave(&mut self) {
        self.res.finish_ns = Some(mono_ns().saturating_sub(self.window.t0));
    }

    /// A task of the scenario format (or appendix A's `PERIODIC`), as its stream says.
    fn task<B: Body>(&mut self, body: &mut B, s: &mut Stream) {
        match &s.spec().model {
            Model::Cpu { .. } => self.cpu_task(body, s),
            Model::Periodic(p) => self.periodic_task(body, s, late_rule(p)),
            Model::Interactive { .. } => self.interactive_task(body, s),
            // Refused before a run (simulated only).
            Model::Server | Model::Player(_) | Model::ForkWait { .. } => {}
        }
    }

    /// A `cpu` task: it starts when its stream says (late by its jitter draw; not at all if that
    /// is past its window) and runs until it has its `work`, or to the end of its window.
    fn cpu_task<B: Body>(&mut self, body: &mut B, s: &mut Stream) {
        let (w, clock) = (self.window, self.g.clock);
        let at = w.t0.saturating_add(s.start());
        if at >= w.finish {
            return;
        }
        if at > w.start {
            Timer::Hr.sleep_until(at);
        }
        self.g.begin();
        let budget = s.work().map_or(u64::MAX, |x| clock.to_ticks(x));
        let (_, why) = self.g.spin(body, clock.ticks_at(w.finish), budget);
        self.g.close(EndReason::Finish);
        if why == Why::Budget {
            self.leave();
        }
    }

    /// A `periodic` task: each request as its stream plans it (released late by its jitter draw,
    /// its execution time drawn at the release, due at its deadline); requests queue behind a late
    /// one, which is finished or dropped at its deadline as `late` says. A request released after
    /// the window is not.
    fn periodic_task<B: Body>(&mut self, body: &mut B, s: &mut Stream, late: LateRule) {
        let w = self.window;
        let abs = |x: Nanos| w.t0.saturating_add(x);
        self.g.begin();
        while !self.g.abort.load(Relaxed) {
            let Ok(r) = s.next_request(w.finish - w.t0) else {
                // No more requests: the task leaves after its last one.
                self.leave();
                break;
            };
            if abs(r.at) >= w.finish {
                break;
            }
            if mono_ns() < abs(r.at) {
                self.sleep_until(abs(r.at));
            }
            let want = self.g.clock.to_ticks(s.exec());
            if !self.request(body, &r, want, late) {
                break;
            }
        }
        self.g.close(EndReason::Finish);
    }

    /// Request `r`, released, gets its `want` ticks of CPU by its deadline (met), or misses it and
    /// is finished late or dropped there, as `late` says; each is recorded. False when the window
    /// or the run ended first.
    fn request<B: Body>(&mut self, body: &mut B, r: &Planned, want: u64, late: LateRule) -> bool {
        let (w, clock) = (self.window, self.g.clock);
        let (nominal, dl) = (w.t0.saturating_add(r.nominal), w.t0.saturating_add(r.deadline));
        let stop = clock.ticks_at(dl.min(w.finish));
        let (got, why) = self.g.spin(body, stop, want);
        let job = |end: u64, outcome| JobRecord {
            release_ns: r.at,
            deadline_ns: r.deadline,
            end_ns: end.saturating_sub(w.t0),
            outcome,
        };
        let res = &mut *self.res;
        match why {
            Why::Budget => {
                res.hits += 1;
                // From the clock reading that completed the work, not a reading taken after the
                // loop (a gap there would be counted as response time).
                let nominal_ticks = stop.saturating_sub(clock.to_ticks(dl.min(w.finish) - nominal));
                let response = clock.to_ns(self.g.last.saturating_sub(nominal_ticks));
                res.responses_ns.push(response);
                res.jobs.push(job(nominal + response, trace::Outcome::Met));
            }
            Why::Stop if dl <= w.finish => {
                res.misses += 1;
                res.miss_at_ns.push(r.deadline);
                if late != LateRule::Finish {
                    // No notification on Linux: dropped at its deadline.
                    res.jobs.push(job(dl, trace::Outcome::Aborted));
                    return true;
                }
                let (_, why) = self.g.spin(body, clock.ticks_at(w.finish), want - got.min(want));
                if why != Why::Budget {
                    // Its deadline passed and it never finished: late, as the simulator says.
                    res.jobs.push(job(mono_ns(), trace::Outcome::Late));
                    return false;
                }
                res.responses_ns.push(mono_ns().saturating_sub(nominal));
                res.jobs.push(job(mono_ns(), trace::Outcome::Late));
            }
            _ => return false,
        }
        true
    }

    /// An `interactive` task: it thinks (sleeps), then runs a burst of CPU, as its stream draws
    /// them; the next think starts when the burst ends. A wake-up's lateness is a latency sample,
    /// the time from it to the burst's end a response.
    fn interactive_task<B: Body>(&mut self, body: &mut B, s: &mut Stream) {
        let (w, clock) = (self.window, self.g.clock);
        let mut from = w.start;
        let mut bursts = 0u64;
        self.g.begin();
        while !self.g.abort.load(Relaxed) {
            let Some(i) = s.next_interaction() else {
                self.leave();
                break;
            };
            let wake = from.saturating_add(i.wait);
            if wake >= w.finish {
                break;
            }
            if mono_ns() < wake {
                self.sleep_until(wake);
            }
            let (_, why) = self.g.spin(body, clock.ticks_at(w.finish), clock.to_ticks(i.burst));
            if why != Why::Budget {
                break;
            }
            bursts += 1;
            from = mono_ns();
            self.res.responses_ns.push(from.saturating_sub(wake));
        }
        self.res.work = bursts;
        self.g.close(EndReason::Finish);
    }

    /// Runs the thread's model: a task by its stream, or one of appendix A's own models (those with
    /// no scenario counterpart).
    fn model<B: Body>(&mut self, body: &mut B, workload: &Workload) {
        let (w, clock) = (self.window, self.g.clock);
        match *workload {
            Workload::Task(ref t) => self.task(body, &mut Stream::new(t, self.seed)),
            Workload::Cpu | Workload::CpuScan { .. } => {
                self.g.begin();
                self.g.spin(body, clock.ticks_at(w.finish), u64::MAX);
                self.g.close(EndReason::Finish);
            }
            Workload::CpuYield { amount } | Workload::CpuScanYield { amount, .. } => {
                self.yielding(body, amount)
            }
            Workload::CpuPeriodic { amount, period } => self.cpu_periodic(body, amount, period),
            Workload::Lat { period } => self.latency(period),
        }
    }

    /// CPU_YIELD, CPU_SCAN_YIELD: yields after each `amount` of CPU time received.
    fn yielding<B: Body>(&mut self, body: &mut B, amount: Nanos) {
        let clock = self.g.clock;
        let stop = clock.ticks_at(self.window.finish);
        let budget = clock.to_ticks(amount);
        self.g.begin();
        loop {
            let (_, why) = self.g.spin(body, stop, budget);
            if why != Why::Budget {
                break;
            }
            self.g.close(EndReason::Yield);
            sys::sched_yield();
            self.res.yields += 1;
            self.g.begin();
        }
        self.g.close(EndReason::Finish);
    }

    /// CPU_PERIODIC: a new period each time it has `amount`; a period with no frame is a miss.
    fn cpu_periodic<B: Body>(&mut self, body: &mut B, amount: Nanos, period: Nanos) {
        let (w, clock) = (self.window, self.g.clock);
        let mut pstart = w.start;
        let budget = clock.to_ticks(amount);
        self.g.begin();
        while pstart < w.finish {
            let pend = pstart + period;
            let (_, why) = self.g.spin(body, clock.ticks_at(pend.min(w.finish)), budget);
            match why {
                Why::Budget => {
                    self.res.hits += 1;
                    pstart = mono_ns();
                }
                Why::Stop if pend <= w.finish => {
                    self.res.misses += 1;
                    self.res.miss_at_ns.push(pend - w.t0);
                    pstart = pend;
                }
                _ => break,
            }
        }
        self.g.close(EndReason::Finish);
    }

    /// LAT: sleeps `period` from each actual wake-up, recording each wake-up's lateness.
    fn latency(&mut self, period: Nanos) {
        let w = self.window;
        let timer = self.timer.as_mut().expect("latency threads have a timer");
        let mut next = w.start + period;
        while next <= w.finish && !self.g.abort.load(Relaxed) {
            timer.sleep_until(next);
            let woke = mono_ns();
            self.res.latencies_ns.push(woke.saturating_sub(next));
            self.res.wake_at_ns.push(woke.saturating_sub(w.t0));
            next = woke + period;
        }
    }
}

/// What polling the bare gap loop for a while saw (`hourglass bench gaploop`, `clockirq`).
#[derive(Debug, Clone)]
pub struct GapProbe {
    /// Mean time per loop iteration, ns.
    pub per_iter_ns: f64,
    /// Gap threshold used (calibrated), ns.
    pub threshold_ns: u64,
    /// Every gap detected, ns, in time order.
    pub gaps_ns: Vec<u64>,
}

/// Polls the bare gap loop (figure 2) on the calling thread for `ns` nanoseconds.
pub fn gap_probe(clock: &Clock, ns: u64) -> GapProbe {
    let mut bare = Bare(0);
    let (gap, _) = calibrate(clock, &mut bare);
    bare.0 = 0;
    let trace = TraceBuf::new(2_000_000, EMPTY);
    let abort = AtomicBool::new(false);
    let mut g = Gapper {
        clock: *clock,
        gap,
        trace: &trace,
        abort: &abort,
        id: 0,
        exec_start: 0,
        last: 0,
        open: false,
        cpu_ticks: 0,
        cpu: 0,
    };
    let t0 = clock.now();
    g.begin();
    g.spin(&mut bare, t0 + clock.to_ticks(ns), u64::MAX);
    let elapsed = clock.now() - t0;
    let (recs, _) = trace.into_vec();
    let gaps_ns = recs.windows(2).map(|w| clock.to_ns(w[1].start.saturating_sub(w[0].end))).collect();
    GapProbe {
        per_iter_ns: clock.to_ns(elapsed) as f64 / bare.0.max(1) as f64,
        threshold_ns: clock.to_ns(gap),
        gaps_ns,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(args: &str) -> RunConfig {
        let v: Vec<String> = args.split_whitespace().map(String::from).collect();
        match crate::cli::parse(&v).unwrap() {
            crate::cli::Command::Run(c) => *c,
            _ => unreachable!(),
        }
    }

    const OK: Machine = Machine { can_rt: true, rt_runtime_us: Some(950_000), cpus: 2 };

    #[test]
    fn realtime_runs_are_refused_when_rt_throttling_is_off_unless_forced() {
        let off = Machine { rt_runtime_us: Some(-1), ..OK };
        let c = cfg("-n 1 -t 0 -p RTHIGH -w LAT 1ms");
        let e = check_safety_on(&c, &off).unwrap_err();
        assert!(e.0.contains("sched_rt_runtime_us = -1"), "{e}");
        assert!(check_safety_on(&cfg("-n 1 -t 0 -p RTHIGH -w LAT 1ms --force"), &off).is_ok());
        // Timesharing runs need no throttling.
        assert!(check_safety_on(&cfg("-n 1 -t 0 -p HIGH"), &off).is_ok());
        assert!(check_safety_on(&c, &OK).is_ok());
    }

    #[test]
    fn never_blocking_fifo_threads_on_every_cpu_are_refused() {
        let one = Machine { cpus: 1, ..OK };
        let c = cfg("-n 1 -t 0 -p RTLOW -w CPU");
        assert!(check_safety_on(&c, &one).is_err());
        assert!(check_safety_on(&c, &OK).is_ok(), "pinned to one CPU of two");
        assert!(check_safety_on(&cfg("-n 1 -t 0 -p RTLOW -w CPU --cpu all"), &OK).is_err());
        // A blocking model, or a reservation, cannot monopolise a CPU.
        assert!(check_safety_on(&cfg("-n 1 -t 0 -p RTHIGH -w PERIODIC 4ms 5ms"), &one).is_ok());
        assert!(check_safety_on(&cfg("-n 1 -t 0 -w CPU -rh 2ms 10ms"), &one).is_ok());
        let no_rt = Machine { can_rt: false, ..OK };
        assert!(check_safety_on(&c, &no_rt).unwrap_err().0.contains("root or CAP_SYS_NICE"));
    }
}
