//! `hourglass bench`: the microbenchmarks of the testbed papers, each printing its figure and the
//! method used, so today's numbers can be set beside the papers'.
//!
//! | bench | paper | method |
//! |---|---|---|
//! | `ctxsw` | Etsion 2003 table 2 | two processes on one CPU exchange a byte through two pipes |
//! | `trap` | Etsion 2003 table 2 | repeated `getpid` system calls |
//! | `memcpy` | Etsion 2003 table 2 | `memcpy` bandwidth for L1-, L2- and DRAM-sized buffers |
//! | `ipc` | Dannenberg 1993 §8 | echo of 1 B..64 KiB between two processes: pipe, Unix socket, shared memory with futex or eventfd; one-way = round trip / 2, fitted to a + N/rate |
//! | `fileread` | Dannenberg 1993 §9 | reading a file with `read`, stdio-style buffered reads, and `mmap`, cold (evicted with `posix_fadvise`) and warm |
//! | `clockirq` | Dannenberg 1993 §6 | loop rate of a cache-flushing background loop under an extra periodic timer at two rates; solve for the per-interrupt cost |
//! | `gaploop` | Regehr 2002 §3.1 | cost per iteration of the gap loop, smallest gap detected |
//! | `punctuality` | Regehr 2002 §5.3 | a periodic thread at RTHIGH alone (4 ms every 5 ms), `--runs` runs of 2 s: periods met (min, median, max), each miss put down to a late wake-up or a stop inside its period, host steal ([`crate::punctuality`]); needs root |
//!
//! Weak: on a shared or virtual machine every figure includes the neighbours and the hypervisor;
//! run on a quiet machine and repeat. The `clockirq` bench cannot change `HZ` as Dannenberg did: it
//! adds a timer interrupt source (`setitimer`) whose cost includes delivering an empty signal.

use crate::clock::{mono_ns, Clock};
use crate::config::{CpuChoice, ReportFormat};
use crate::sys;
use crate::units::parse_size;
use clap::Parser;
use nix::sys::eventfd::{EfdFlags, EventFd};
use serde::Serialize;
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::process::ExitCode;
use std::sync::atomic::AtomicU32;
use std::time::Duration;
use tracing::{debug, info, warn};

/// One number a bench produced.
#[derive(Debug, Clone, Serialize)]
pub struct Figure {
    /// What it is.
    pub label: String,
    /// Its value.
    pub value: f64,
    /// Its unit.
    pub unit: String,
}

/// What one bench printed.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Bench name.
    pub name: String,
    /// The paper and table it corresponds to.
    pub source: String,
    /// How it was measured.
    pub method: String,
    /// The figures.
    pub figures: Vec<Figure>,
}

impl Report {
    fn new(name: &str, source: &str, method: &str) -> Report {
        Report { name: name.into(), source: source.into(), method: method.into(), figures: vec![] }
    }
    fn add(&mut self, label: impl Into<String>, value: f64, unit: &str) {
        self.figures.push(Figure { label: label.into(), value, unit: unit.into() });
    }
    /// Renders as text.
    pub fn text(&self) -> String {
        let mut o = format!("== {} ({})\nmethod: {}\n", self.name, self.source, self.method);
        for f in &self.figures {
            o.push_str(&format!("  {:<60} {:>12.3} {}\n", f.label, f.value, f.unit));
        }
        o
    }
}

/// A microbenchmark of `hourglass bench`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Bench {
    /// Every bench below, in this order (punctuality only with root).
    All,
    /// The gap loop: cost per iteration, smallest gap.
    Gaploop,
    /// Etsion table 2: a system call.
    Trap,
    /// Etsion table 2: a context switch.
    Ctxsw,
    /// Etsion table 2: memcpy bandwidth.
    Memcpy,
    /// Dannenberg §8: data between processes.
    Ipc,
    /// Dannenberg §9: reading a file.
    Fileread,
    /// Dannenberg §6: a clock interrupt.
    Clockirq,
    /// Regehr §5.3: a periodic thread's periods met (root).
    Punctuality,
}

impl Bench {
    /// Every bench, in the order `all` runs them.
    pub const EVERY: [Bench; 8] = [
        Bench::Gaploop,
        Bench::Trap,
        Bench::Ctxsw,
        Bench::Memcpy,
        Bench::Ipc,
        Bench::Fileread,
        Bench::Clockirq,
        Bench::Punctuality,
    ];

    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Bench::All => "all",
            Bench::Gaploop => "gaploop",
            Bench::Trap => "trap",
            Bench::Ctxsw => "ctxsw",
            Bench::Memcpy => "memcpy",
            Bench::Ipc => "ipc",
            Bench::Fileread => "fileread",
            Bench::Clockirq => "clockirq",
            Bench::Punctuality => "punctuality",
        }
    }
}

/// `hourglass bench`.
#[derive(Debug, Parser)]
#[command(
    name = "hourglass bench",
    about = "Microbenchmarks of Etsion 2003 (table 2), Dannenberg 1993 (§6, 8, 9) and the gap loop"
)]
pub struct BenchArgs {
    /// Benches to run (punctuality needs root).
    #[arg(value_enum, default_value = "all")]
    which: Vec<Bench>,
    /// CPU to pin to (default: the last allowed one); `all` lets the processes spread.
    #[arg(long)]
    cpu: Option<CpuChoice>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: ReportFormat,
    /// punctuality: number of 2 s runs.
    #[arg(long, default_value_t = 5)]
    runs: usize,
    /// fileread: file size.
    #[arg(long, default_value = "64MiB")]
    file_size: String,
    /// fileread: directory for the test file (default: the temp directory).
    #[arg(long)]
    dir: Option<String>,
    #[command(flatten)]
    verbose: diag::Verbosity,
}

/// Entry point of `hourglass bench`.
pub fn main(argv: &[String]) -> ExitCode {
    let args = match BenchArgs::try_parse_from(
        std::iter::once("hourglass bench".to_string()).chain(argv.iter().cloned()),
    ) {
        Ok(a) => a,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    diag::init("hourglass bench", args.verbose.tracing_level_filter());
    let cpu = match args.cpu {
        None => Some(crate::config::default_cpu()),
        Some(CpuChoice::All) => None,
        Some(CpuChoice::One(c)) => Some(c),
    };
    let asked_for_all = args.which.contains(&Bench::All);
    let which: Vec<Bench> = if asked_for_all { Bench::EVERY.to_vec() } else { args.which.clone() };
    if args.runs == 0 || args.runs > 1000 {
        eprintln!("hourglass bench: --runs: {} is not between 1 and 1000", args.runs);
        return ExitCode::from(2);
    }
    let file_size = match parse_size(&args.file_size) {
        Ok(b) if b >= 1 << 20 => b,
        _ => {
            eprintln!("hourglass bench: --file-size: '{}' must be a size of at least 1MiB", args.file_size);
            return ExitCode::from(2);
        }
    };
    let dir = args.dir.clone().map(std::path::PathBuf::from).unwrap_or_else(std::env::temp_dir);
    let (clock, _) = Clock::best(Duration::from_millis(100));
    debug!("clock: {:?} at {:.0} Hz; CPU {cpu:?}", clock.kind(), clock.hz());
    let mut reports = Vec::new();
    for w in which {
        if w == Bench::Punctuality && asked_for_all && !crate::sys::can_use_rt() {
            warn!("punctuality skipped: it needs root or RLIMIT_RTPRIO");
            continue;
        }
        info!("{}...", w.name());
        match run_one(w, &clock, cpu, &args, &dir, file_size) {
            Ok(r) => {
                if args.format == ReportFormat::Text {
                    diag::out!("{}", r.text());
                }
                reports.push(r);
            }
            Err(e) => {
                eprintln!("hourglass bench: {}: {e}", w.name());
                return ExitCode::from(1);
            }
        }
    }
    if args.format == ReportFormat::Json {
        diag::outln!("{}", serde_json::to_string_pretty(&reports).expect("json"));
    }
    ExitCode::SUCCESS
}

/// Runs bench `w` (never `all`, which `main` expands).
fn run_one(
    w: Bench,
    clock: &Clock,
    cpu: Option<usize>,
    args: &BenchArgs,
    dir: &std::path::Path,
    file_size: usize,
) -> Result<Report, String> {
    match w {
        Bench::Gaploop => Ok(gaploop(clock, cpu)),
        Bench::Trap => Ok(trap(clock, cpu)),
        Bench::Ctxsw => ctxsw(clock, cpu),
        Bench::Memcpy => Ok(memcpy(cpu)),
        Bench::Ipc => ipc(cpu),
        Bench::Fileread => fileread(dir, file_size),
        Bench::Clockirq => clockirq(cpu),
        Bench::Punctuality => punctuality(args.runs),
        Bench::All => unreachable!("`all` is expanded by main"),
    }
}

fn pin(cpu: Option<usize>) {
    if let Some(c) = cpu {
        let _ = crate::sys::pin_to(c);
    }
}

/// The gap loop: cost per iteration with the TSC and with `clock_gettime`, smallest gap seen.
pub fn gaploop(clock: &Clock, cpu: Option<usize>) -> Report {
    pin(cpu);
    let mut r = Report::new(
        "gaploop",
        "Regehr 2002 §3.1 (225 ns/iteration on an 850 MHz PIII)",
        "the figure-2 loop polled for 1 s on one CPU; threshold = 2 x p99 of the loop's own iteration time",
    );
    let p = crate::run::gap_probe(clock, 1_000_000_000);
    let per = p.per_iter_ns;
    r.add(format!("{:?} loop: time per iteration", clock.kind()), per, "ns");
    r.add("goal: <= 50 ns per iteration (1 = met)", (per <= 50.0) as u8 as f64, "");
    r.add("gap threshold", p.threshold_ns as f64, "ns");
    let mut g = p.gaps_ns.clone();
    g.sort_unstable();
    r.add("smallest gap detected", g.first().copied().unwrap_or(0) as f64, "ns");
    r.add("median gap", crate::output::percentile(&g, 50.0) as f64, "ns");
    r.add("gaps detected in 1 s", g.len() as f64, "");
    r.add("  of which longer than 1 us", g.iter().filter(|&&x| x > 1000).count() as f64, "");
    let mono = Clock::monotonic();
    let pm = crate::run::gap_probe(&mono, 300_000_000).per_iter_ns;
    r.add("clock_gettime loop: time per iteration", pm, "ns");
    r.add("clock_gettime / TSC iteration time (side by side)", pm / per, "x");
    r
}

/// Regehr 2002 §5.3's periodic thread as a punctuality figure over `runs` runs of 2 s (see
/// [`crate::punctuality`]).
pub fn punctuality(runs: usize) -> Result<Report, String> {
    use crate::punctuality::{latency_summary, min_med_max, steal_ns, MissCause, ProbeRun};
    if !crate::sys::can_use_rt() {
        return Err("needs root or RLIMIT_RTPRIO (the probe runs at RTHIGH)".into());
    }
    const PROBE: &str = "-n 1 -d 2s -t 0 -p RTHIGH -w PERIODIC 4ms 5ms -i HR";
    let argv: Vec<String> = PROBE.split_whitespace().map(String::from).collect();
    let cfg = match crate::cli::parse(&argv) {
        Ok(crate::cli::Command::Run(c)) => *c,
        other => return Err(format!("the probe's command line `{PROBE}` did not parse: {other:?}")),
    };
    let cpu = match cfg.cpu {
        crate::config::CpuChoice::One(c) => Some(c),
        crate::config::CpuChoice::All => None,
    };
    let mut r = Report::new(
        "punctuality",
        "Regehr 2002 §5.3 (a periodic thread at RTHIGH alone; the paper's Linux met every period)",
        &format!(
            "`hourglass {PROBE}` run {runs} times; a miss is put down to a late wake-up (> 0.5 ms after \
             the release) or to gaps after waking (> 1 ms, the slack); steal from /proc/stat"
        ),
    );
    let mut done = Vec::new();
    for k in 0..runs {
        let s0 = cpu.and_then(steal_ns);
        let res = crate::run::run(&cfg).map_err(|e| e.to_string())?;
        let steal = s0.zip(cpu.and_then(steal_ns)).map(|(a, b)| b.saturating_sub(a));
        let p = ProbeRun::of(&res, 5_000_000, 1_000_000, steal);
        info!("punctuality run {}/{runs}: met {} of {}", k + 1, p.hits, p.periods);
        r.add(format!("run {}: met {} of {} periods", k + 1, p.hits, p.periods), p.hit_pct(), "%");
        done.push(p);
    }
    let pct: Vec<f64> = done.iter().map(ProbeRun::hit_pct).collect();
    let (lo, med, hi) = min_med_max(&pct);
    r.add(format!("periods met over {runs} runs: minimum"), lo, "%");
    r.add("  median", med, "%");
    r.add("  maximum", hi, "%");
    let misses: usize = done.iter().map(|p| p.misses.len()).sum();
    r.add("missed periods in all runs", misses as f64, "");
    for (c, what) in [
        (MissCause::LateWakeup, "late wake-up"),
        (MissCause::Stopped, "stopped while runnable"),
        (MissCause::Both, "both"),
        (MissCause::Other, "neither alone"),
    ] {
        r.add(format!("  put down to: {what}"), done.iter().map(|p| p.count(c)).sum::<usize>() as f64, "");
    }
    let lost: Vec<f64> = done
        .iter()
        .flat_map(|p| p.misses.iter().map(|m| (m.late_wakeup_ns + m.stopped_ns) as f64 / 1e3))
        .collect();
    if !lost.is_empty() {
        let (lo, med, hi) = min_med_max(&lost);
        r.add("time lost in a missed period (late wake-up + stops): minimum", lo, "us");
        r.add("  median", med, "us");
        r.add("  maximum", hi, "us");
    }
    let (p50, p99, max) = latency_summary(&done);
    r.add("wake-up lateness: median", p50 as f64 / 1e3, "us");
    r.add("  p99", p99 as f64 / 1e3, "us");
    r.add("  maximum", max as f64 / 1e3, "us");
    if done.iter().all(|p| p.steal_ns.is_some()) {
        let steal: u64 = done.iter().filter_map(|p| p.steal_ns).sum();
        r.add("host steal on the probe's CPU during the runs (10 ms resolution)", steal as f64 / 1e6, "ms");
    }
    Ok(r)
}

/// Etsion table 2 "trap": repeated `getpid`.
pub fn trap(clock: &Clock, cpu: Option<usize>) -> Report {
    pin(cpu);
    let mut r = Report::new(
        "trap",
        "Etsion 2003 table 2 (0.19-1.91 us)",
        "1,000,000 getpid system calls (raw syscall, no libc caching)",
    );
    let n = 1_000_000u64;
    let t0 = mono_ns();
    for _ in 0..n {
        sys::getpid_syscall();
    }
    let per = (mono_ns() - t0) as f64 / n as f64;
    r.add("time per trap", per / 1e3, "us");
    r.add("cycles per trap", per * clock.hz() / 1e9, "cycles");
    // Etsion reports average +- standard deviation of single calls, timed in cycles.
    let mut v = Vec::with_capacity(100_000);
    for _ in 0..100_000 {
        let a = clock.now();
        sys::getpid_syscall();
        v.push(clock.now() - a);
    }
    let (med, m, sd) = trimmed(&v);
    r.add("single trap timed alone: median", med, "cycles");
    r.add("  mean +- sd of the fastest 99% (the rest hold interrupts)", m, "cycles");
    r.add("  standard deviation of the fastest 99%", sd, "cycles");
    r
}

/// Median, and mean and standard deviation of the fastest 99 % (the slowest 1 % of single timed
/// operations contain interrupts and preemptions, which dominate a plain standard deviation).
pub fn trimmed(v: &[u64]) -> (f64, f64, f64) {
    let mut s = v.to_vec();
    s.sort_unstable();
    let med = s.get(s.len() / 2).copied().unwrap_or(0) as f64;
    s.truncate((s.len() * 99).div_ceil(100));
    let (m, sd) = mean_sd(&s);
    (med, m, sd)
}

/// Mean and standard deviation.
pub fn mean_sd(v: &[u64]) -> (f64, f64) {
    let n = v.len().max(1) as f64;
    let m = v.iter().map(|&x| x as f64).sum::<f64>() / n;
    let var = v.iter().map(|&x| (x as f64 - m).powi(2)).sum::<f64>() / n;
    (m, var.sqrt())
}

/// Writes all of `buf`; an error or a closed peer ends the exchange, which the bench then times
/// short (as before the peer's death, the time is still the parent's).
fn write_all(mut f: &File, buf: &[u8]) {
    let _ = f.write_all(buf);
}

/// Fills `buf`; an error or end of file ends the exchange (see [`write_all`]).
fn read_exact(mut f: &File, buf: &mut [u8]) {
    let _ = f.read_exact(buf);
}

/// Forks; the child runs `child` on `shared` and exits; the parent runs `parent` on `shared` and
/// reaps the child ([`sys::fork_pair`]).
#[allow(unsafe_code)]
fn fork_pair<S, R>(
    shared: &mut S,
    child: impl FnOnce(&mut S),
    parent: impl FnOnce(&mut S) -> R,
) -> Result<R, String> {
    // SAFETY: every child in this module only reads and writes descriptors, futexes and buffers
    // made before the fork, and copies between them: nothing that allocates, locks or prints. The
    // shared-memory echo orders its two sides with atomics (Release/Acquire) and a futex or an
    // eventfd, so that neither side reads a buffer the other is writing.
    unsafe { sys::fork_pair(shared, child, parent) }
}

/// A pipe: (read end, write end).
fn pipe() -> Result<(File, File), String> {
    let (r, w) = nix::unistd::pipe().map_err(|e| format!("pipe: {}", std::io::Error::from(e)))?;
    Ok((File::from(r), File::from(w)))
}

/// Etsion table 2 "context switch": two processes exchange a byte through two pipes.
pub fn ctxsw(clock: &Clock, cpu: Option<usize>) -> Result<Report, String> {
    pin(cpu);
    let mut r = Report::new(
        "ctxsw",
        "Etsion 2003 table 2 (0.98-20.75 us, 1317-3792 cycles)",
        "two processes pinned to one CPU exchange a byte via two pipes, 20000 round trips; a round \
         trip is two switches; the pipe calls alone are measured in one process and subtracted",
    );
    let n = 20_000u64;
    let (a_r, a_w) = pipe()?;
    let (b_r, b_w) = pipe()?;
    let per = fork_pair(
        &mut (),
        |_| {
            let mut c = [0u8; 1];
            for _ in 0..n {
                read_exact(&a_r, &mut c);
                write_all(&b_w, &c);
            }
        },
        |_| {
            let mut c = [7u8; 1];
            let mut rt = Vec::with_capacity(n as usize);
            let t0 = mono_ns();
            for _ in 0..n {
                let s = clock.now();
                write_all(&a_w, &c);
                read_exact(&b_r, &mut c);
                rt.push((clock.now() - s) / 2);
            }
            ((mono_ns() - t0) as f64 / (2 * n) as f64, rt)
        },
    )?;
    let (per, rt) = per;
    let (med, m, sd) = trimmed(&rt);
    drop((a_r, a_w, b_r, b_w));
    // The pipe write + read alone, without a switch.
    let (p_r, p_w) = pipe()?;
    let mut c = [1u8; 1];
    let t0 = mono_ns();
    for _ in 0..n {
        write_all(&p_w, &c);
        read_exact(&p_r, &mut c);
    }
    let ops = (mono_ns() - t0) as f64 / n as f64;
    drop((p_r, p_w));
    let hz = clock.hz() / 1e9;
    r.add("switch incl. one pipe write + read (Etsion's figure)", per / 1e3, "us");
    r.add("  same in cycles", per * hz, "cycles");
    r.add("  single round trip / 2: median", med, "cycles");
    r.add("  mean +- sd of the fastest 99% (Etsion's average +- sd)", m, "cycles");
    r.add("  standard deviation of the fastest 99%", sd, "cycles");
    r.add("pipe write + read without a switch", ops / 1e3, "us");
    r.add("switch alone (difference)", (per - ops).max(0.0) / 1e3, "us");
    Ok(r)
}

/// Etsion table 2 "cache bandwidth": memcpy.
pub fn memcpy(cpu: Option<usize>) -> Report {
    pin(cpu);
    let mut r = Report::new(
        "memcpy",
        "Etsion 2003 table 2 (28-4286 MB/s)",
        "memcpy between two buffers repeated for 200 ms per size; MB = 10^6 bytes",
    );
    for (label, size) in [("16 KiB (L1)", 16 << 10), ("256 KiB (L2)", 256 << 10), ("64 MiB (DRAM)", 64 << 20)]
    {
        let src = vec![1u8; size];
        let mut dst = vec![0u8; size];
        let mut bytes = 0u64;
        let t0 = mono_ns();
        while mono_ns() - t0 < 200_000_000 {
            dst.copy_from_slice(std::hint::black_box(&src));
            std::hint::black_box(&mut dst);
            bytes += size as u64;
        }
        let mbs = bytes as f64 / ((mono_ns() - t0) as f64 / 1e9) / 1e6;
        r.add(format!("memcpy {label}"), mbs, "MB/s");
    }
    r
}

const SIZES: [usize; 7] = [1, 16, 256, 1024, 4096, 16384, 65536];
const MAXB: usize = 65536;

#[derive(Clone, Copy)]
enum Ipc {
    Pipe,
    Unix,
    ShmFutex,
    ShmEventfd,
}

/// Shared region for the shared-memory methods.
#[repr(C)]
struct Shm {
    req: AtomicU32,
    resp: AtomicU32,
    req_buf: [u8; MAXB],
    resp_buf: [u8; MAXB],
}

impl Default for Shm {
    fn default() -> Shm {
        Shm { req: AtomicU32::new(0), resp: AtomicU32::new(0), req_buf: [0; MAXB], resp_buf: [0; MAXB] }
    }
}

/// The four ends of an echo channel: (client writes, client reads, server reads, server writes).
fn channel(m: Ipc) -> Result<[File; 4], String> {
    if let Ipc::Pipe = m {
        let (a_r, a_w) = pipe()?;
        let (b_r, b_w) = pipe()?;
        return Ok([a_w, b_r, a_r, b_w]);
    }
    // A Unix stream socket pair: each side reads and writes its own end.
    let (c, s) = UnixStream::pair().map_err(|e| format!("socketpair: {e}"))?;
    let dup = |u: &UnixStream| u.try_clone().map(|d| File::from(OwnedFd::from(d)));
    let (c2, s2) = (dup(&c), dup(&s));
    let (c2, s2) = (c2.map_err(|e| format!("dup: {e}"))?, s2.map_err(|e| format!("dup: {e}"))?);
    Ok([c2, File::from(OwnedFd::from(c)), s2, File::from(OwnedFd::from(s))])
}

/// One-way time in ns for `size` bytes echoed `iters` times with `m`.
fn ipc_once(m: Ipc, size: usize, iters: u64) -> Result<f64, String> {
    match m {
        Ipc::Pipe | Ipc::Unix => ipc_stream(m, size, iters),
        Ipc::ShmFutex | Ipc::ShmEventfd => ipc_shm(matches!(m, Ipc::ShmEventfd), size, iters),
    }
}

/// [`ipc_once`] through a pipe pair or a Unix socket pair.
fn ipc_stream(m: Ipc, size: usize, iters: u64) -> Result<f64, String> {
    let src = vec![5u8; size];
    let mut buf = vec![0u8; size];
    let [client_tx, client_rx, server_rx, server_tx] = channel(m)?;
    let mut sbuf = vec![0u8; size];
    let t = fork_pair(
        &mut (),
        |_| {
            for _ in 0..iters {
                read_exact(&server_rx, &mut sbuf);
                write_all(&server_tx, &sbuf);
            }
        },
        |_| {
            let t0 = mono_ns();
            for _ in 0..iters {
                write_all(&client_tx, &src);
                read_exact(&client_rx, &mut buf);
            }
            mono_ns() - t0
        },
    )?;
    Ok(t as f64 / (2 * iters) as f64)
}

/// [`ipc_once`] through shared memory, woken by a futex or (`use_efd`) an eventfd.
fn ipc_shm(use_efd: bool, size: usize, iters: u64) -> Result<f64, String> {
    use std::sync::atomic::Ordering::*;
    let src = vec![5u8; size];
    let mut buf = vec![0u8; size];
    let mut shm = sys::SharedMem::<Shm>::new()?;
    let efd = || {
        EventFd::from_value_and_flags(0, EfdFlags::empty())
            .map_err(|e| format!("eventfd: {}", std::io::Error::from(e)))
    };
    let (e1, e2) = (efd()?, efd()?);
    let notify = |fd: &EventFd, a: &AtomicU32| {
        a.fetch_add(1, Release);
        if use_efd {
            let _ = fd.write(1);
        } else {
            sys::futex_wake(a);
        }
    };
    let wait = |fd: &EventFd, a: &AtomicU32, seen: u32| {
        if use_efd {
            let _ = fd.read();
        } else {
            while a.load(Acquire) == seen {
                sys::futex_wait(a, seen);
            }
        }
    };
    let t = fork_pair(
        &mut shm,
        |s| {
            let s: &mut Shm = s;
            for i in 0..iters as u32 {
                wait(&e1, &s.req, i);
                s.resp_buf[..size].copy_from_slice(&s.req_buf[..size]);
                notify(&e2, &s.resp);
            }
        },
        |shm| {
            let shm: &mut Shm = shm;
            let t0 = mono_ns();
            for i in 0..iters as u32 {
                shm.req_buf[..size].copy_from_slice(&src);
                notify(&e1, &shm.req);
                wait(&e2, &shm.resp, i);
                buf.copy_from_slice(&shm.resp_buf[..size]);
            }
            mono_ns() - t0
        },
    )?;
    Ok(t as f64 / (2 * iters) as f64)
}

/// Least-squares fit t = a + b·N; returns (a, b).
pub fn fit(points: &[(f64, f64)]) -> (f64, f64) {
    let n = points.len() as f64;
    let sx: f64 = points.iter().map(|p| p.0).sum();
    let sy: f64 = points.iter().map(|p| p.1).sum();
    let sxx: f64 = points.iter().map(|p| p.0 * p.0).sum();
    let sxy: f64 = points.iter().map(|p| p.0 * p.1).sum();
    let b = (n * sxy - sx * sy) / (n * sxx - sx * sx);
    ((sy - b * sx) / n, b)
}

/// Dannenberg §8: data transfer between two processes.
pub fn ipc(cpu: Option<usize>) -> Result<Report, String> {
    pin(cpu);
    let mut r = Report::new(
        "ipc",
        "Dannenberg 1993 §8 (Mach in-line IPC 0.160 ms + N/4 MB/s; socket 2.9 ms one-way for 1 B)",
        "client sends N bytes, server copies them back; one-way = round trip / 2; both processes on \
         one CPU unless --cpu all; median of 3 runs of ~50 ms per point; fit one-way = a + N/rate",
    );
    for (name, m) in [
        ("pipe", Ipc::Pipe),
        ("unix socket", Ipc::Unix),
        ("shm + futex", Ipc::ShmFutex),
        ("shm + eventfd", Ipc::ShmEventfd),
    ] {
        let mut pts = Vec::new();
        for &size in &SIZES {
            let probe = ipc_once(m, size, 20)?;
            let iters = ((50e6 / probe.max(1.0)) as u64).clamp(20, 200_000);
            let mut ts = [ipc_once(m, size, iters)?, ipc_once(m, size, iters)?, ipc_once(m, size, iters)?];
            ts.sort_by(|a, b| a.partial_cmp(b).unwrap());
            let t = ts[1];
            r.add(format!("{name} one-way {size} B"), t / 1e3, "us");
            pts.push((size as f64, t));
        }
        let (a, b) = fit(&pts);
        r.add(format!("{name} fit: per-message overhead a"), a / 1e3, "us");
        r.add(
            format!("{name} fit: transfer rate 1/b"),
            if b > 0.0 { 1e3 / b } else { f64::INFINITY },
            "MB/s",
        );
    }
    Ok(r)
}

fn rusage_cpu_ns() -> u64 {
    use nix::sys::resource::{getrusage, UsageWho};
    let Ok(u) = getrusage(UsageWho::RUSAGE_SELF) else { return 0 };
    let tv = |t: nix::sys::time::TimeVal| t.tv_sec() as u64 * 1_000_000_000 + t.tv_usec() as u64 * 1000;
    tv(u.user_time()) + tv(u.system_time())
}

/// Dannenberg §9: reading a file by `read`, buffered (stdio-style) reads and `mmap`.
pub fn fileread(dir: &std::path::Path, size: usize) -> Result<Report, String> {
    use nix::fcntl::{posix_fadvise, PosixFadviseAdvice};
    let mut r = Report::new(
        "fileread",
        "Dannenberg 1993 §9 table 2 (stdio 450-840 KB/s, block 440-940, mmap 420-660 on a 33 MHz 486)",
        "a file of --file-size is read whole; cold = evicted from the page cache with \
         posix_fadvise(DONTNEED) first (what a 30 MB file on a 16 MB machine gave the paper), warm = \
         cached; CPU% = process user+system time / wall time; mmap touches one byte per page; \
         KiB = 1024 bytes (the paper's KB)",
    );
    let path = dir.join(format!("hourglass-fileread-{}.dat", std::process::id()));
    {
        let mut f = std::fs::File::create(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let chunk: Vec<u8> = (0..1 << 20).map(|i: u32| (i.wrapping_mul(2654435761) >> 13) as u8).collect();
        let mut left = size;
        while left > 0 {
            let n = left.min(chunk.len());
            f.write_all(&chunk[..n]).map_err(|e| format!("{}: {e}", path.display()))?;
            left -= n;
        }
        f.sync_all().map_err(|e| e.to_string())?;
    }
    let evict = || {
        if let Ok(f) = std::fs::File::open(&path) {
            let _ = posix_fadvise(&f, 0, 0, PosixFadviseAdvice::POSIX_FADV_DONTNEED);
        }
    };
    let measure = |f: &dyn Fn() -> u64| -> (f64, f64) {
        let c0 = rusage_cpu_ns();
        let t0 = mono_ns();
        let got = f();
        let wall = (mono_ns() - t0) as f64;
        let cpu = (rusage_cpu_ns() - c0) as f64;
        std::hint::black_box(got);
        (size as f64 / 1024.0 / (wall / 1e9), 100.0 * cpu / wall)
    };
    let block = |bs: usize| -> u64 {
        let mut f = std::fs::File::open(&path).expect("open");
        let mut b = vec![0u8; bs];
        let mut n = 0u64;
        loop {
            match f.read(&mut b) {
                Ok(0) | Err(_) => break,
                Ok(k) => n += k as u64,
            }
        }
        n
    };
    let stdio = |bs: usize| -> u64 {
        let mut f = std::io::BufReader::with_capacity(8192, std::fs::File::open(&path).expect("open"));
        let mut b = vec![0u8; bs];
        let mut n = 0u64;
        loop {
            match f.read(&mut b) {
                Ok(0) | Err(_) => break,
                Ok(k) => n += k as u64,
            }
        }
        n
    };
    let mapped = || -> u64 {
        let f = std::fs::File::open(&path).expect("open");
        sys::read_mapped_pages(&f, size).unwrap_or(0)
    };
    for warm in [false, true] {
        let tag = if warm { "warm" } else { "cold" };
        let mut runs: Vec<(String, (f64, f64))> = Vec::new();
        for bs in [1024usize, 8192, 65536, 1 << 20] {
            if !warm {
                evict();
            }
            runs.push((format!("block read() {} KiB", bs / 1024), measure(&|| block(bs))));
        }
        for bs in [1024usize, 65536] {
            if !warm {
                evict();
            }
            runs.push((
                format!("stdio-style 8 KiB buffer, {} KiB requests", bs / 1024),
                measure(&|| stdio(bs)),
            ));
        }
        if !warm {
            evict();
        }
        runs.push(("memory-mapped (whole file)".into(), measure(&mapped)));
        for (label, (kbs, cpu)) in runs {
            r.add(format!("{tag} {label}"), kbs, "KiB/s");
            r.add(format!("{tag} {label} CPU"), cpu, "%");
        }
    }
    let _ = std::fs::remove_file(&path);
    Ok(r)
}

/// Dannenberg §6: clock-interrupt cost from loop rates at two interrupt frequencies.
pub fn clockirq(cpu: Option<usize>) -> Result<Report, String> {
    pin(cpu);
    let mut r = Report::new(
        "clockirq",
        "Dannenberg 1993 §6 (67 us per clock interrupt on Mach 3.0: 1530 loops/s at 100 Hz, 1333.6 at 2000 Hz)",
        "a background loop that scans 1 MiB (to disturb the caches, as the paper's did) counts passes \
         in 100 ms windows, alternating an extra periodic timer (setitimer, empty SIGALRM handler) at \
         f1 = 100 Hz and f2 = 10 kHz, 10 pairs, SCHED_FIFO when allowed; per pair c = (r1 - r2) / \
         (r1 f2 - r2 f1); the median is reported. Cross-check: the gap loop under the same timers \
         sees the direct time each interrupt takes (without the cache refill the scan suffers)",
    );
    let _ = sys::catch_with_empty_handler(nix::sys::signal::Signal::SIGALRM);
    let set_timer = |hz: f64| sys::set_real_timer((1e6 / hz) as i64);
    let rt = cpu.is_some() && crate::sys::allowed_cpus().len() > 1 && crate::sys::can_use_rt();
    if rt {
        let _ = sys::set_fifo(10);
    }
    let buf: Vec<u64> = (0..(1 << 17)).collect();
    let window = |hz: f64| -> f64 {
        set_timer(hz);
        std::thread::sleep(Duration::from_millis(2));
        let t0 = mono_ns();
        let mut passes = 0u64;
        let mut acc = 0u64;
        while mono_ns() - t0 < 100_000_000 {
            for i in (0..buf.len()).step_by(8) {
                acc = acc.wrapping_add(buf[i]);
            }
            passes += 1;
        }
        std::hint::black_box(acc);
        passes as f64 / ((mono_ns() - t0) as f64 / 1e9)
    };
    let med = |v: &mut Vec<f64>| {
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        v[v.len() / 2]
    };
    let (f1, f2) = (100.0, 10_000.0);
    let mut cs = Vec::new();
    let (mut r1s, mut r2s) = (Vec::new(), Vec::new());
    for _ in 0..10 {
        let r1 = window(f1);
        let r2 = window(f2);
        r1s.push(r1);
        r2s.push(r2);
        cs.push((r1 - r2) / (r1 * f2 - r2 * f1));
    }
    // Cross-check by gap detection: the CPU time the extra interrupts take, seen directly.
    let (clock, _) = Clock::best(Duration::from_millis(50));
    // Gaps over 200 us are other tasks or the hypervisor, not an interrupt handler: clipped.
    let stolen = |hz: f64| -> f64 {
        set_timer(hz);
        std::thread::sleep(Duration::from_millis(2));
        let p = crate::run::gap_probe(&clock, 200_000_000);
        p.gaps_ns.iter().map(|&g| g.min(200_000)).sum::<u64>() as f64
    };
    let mut direct: Vec<f64> = (0..5)
        .map(|_| {
            let (s1, s2) = (stolen(f1), stolen(f2));
            (s2 - s1) / ((f2 - f1) * 0.2)
        })
        .collect();
    let direct = med(&mut direct);
    sys::set_real_timer(0);
    if rt {
        let _ = sys::set_other();
    }
    let c = med(&mut cs);
    r.add("loop rate at f1 = 100 Hz (median)", med(&mut r1s), "passes/s");
    r.add("loop rate at f2 = 10 kHz (median)", med(&mut r2s), "passes/s");
    r.add("cost per timer interrupt + empty signal", c * 1e6, "us");
    r.add("spread of the 10 pair estimates (max - min)", (cs[cs.len() - 1] - cs[0]) * 1e6, "us");
    r.add("implied overhead of a 1 kHz clock", c * 1000.0 * 100.0, "%");
    r.add("direct (gap detection, median of 5 x 200 ms pairs): time per extra interrupt", direct / 1e3, "us");
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bench_names_formats_and_cpus_are_parsed_at_the_edge() {
        use clap::ValueEnum;
        for b in Bench::EVERY {
            assert_eq!(Bench::from_str(b.name(), false), Ok(b));
        }
        let parse = |args: &[&str]| {
            BenchArgs::try_parse_from(std::iter::once("hourglass bench").chain(args.iter().copied()))
        };
        let a = parse(&["trap", "ctxsw", "--format", "json", "--cpu", "all"]).unwrap();
        assert_eq!(a.which, vec![Bench::Trap, Bench::Ctxsw]);
        assert_eq!(a.format, ReportFormat::Json);
        assert_eq!(a.cpu, Some(CpuChoice::All));
        let a = parse(&["--cpu", "1"]).unwrap();
        assert_eq!(
            (a.which, a.format, a.cpu),
            (vec![Bench::All], ReportFormat::Text, Some(CpuChoice::One(1)))
        );
        assert!(parse(&["frobnicate"]).is_err());
        assert!(parse(&["trap", "--format", "xml"]).is_err());
        assert!(parse(&["--cpu", "last"]).is_err());
    }

    #[test]
    fn trimmed_statistics_drop_the_slowest_percent() {
        let mut v = vec![100u64; 99];
        v.push(1_000_000);
        let (med, m, sd) = trimmed(&v);
        assert_eq!((med, m, sd), (100.0, 100.0, 0.0));
    }

    #[test]
    fn fit_recovers_a_line() {
        let pts: Vec<(f64, f64)> = [1.0, 10.0, 100.0, 1000.0].iter().map(|&n| (n, 160.0 + n / 4.0)).collect();
        let (a, b) = fit(&pts);
        assert!((a - 160.0).abs() < 1e-9 && (b - 0.25).abs() < 1e-12);
    }

    #[test]
    fn ipc_methods_move_the_data_and_return() {
        // Every method completes an echo of the largest size (no deadlock, no short transfer).
        for m in [Ipc::Pipe, Ipc::Unix, Ipc::ShmFutex, Ipc::ShmEventfd] {
            let t = ipc_once(m, MAXB, 3).unwrap();
            assert!(t > 0.0);
        }
    }
}
