//! `scx_smart`: SMART (Nieh 1999), or any policy of `crates/sched`, scheduling real Linux tasks through
//! sched_ext.
//!
//! The BPF half is scx_rustland_core's: every task that becomes runnable is queued to this process, which
//! asks the policy what runs next and for how long and dispatches it. The policy is the very code the
//! simulator `smartsim` runs; [`driver`] maps the kernel's events onto its calls. Applications tell the
//! scheduler their time constraints through libsmart (shared memory registered over a Unix socket) and get
//! notifications back as a real-time signal.
//!
//! Modes: full (every normal task is scheduled by us) or `--partial` (only tasks that chose SCHED_EXT).
//! SIGINT/SIGTERM unregister the scheduler; the kernel then returns every task to the fair class.
//!
//! Preemption: a user-space scheduler cannot preempt, so our own BPF program (src/bpf_wake/wake.bpf.c)
//! kicks the CPU of a thread with a time constraint when it wakes up, and keeps other tasks off that CPU
//! until the thread dispatched for it starts.
//!
//! What it measures of itself, printed at exit: for wake-ups of time-constrained threads, the time to the
//! scheduler reading them, to the policy dispatching the thread, and from the dispatch to the thread
//! starting on a CPU (the program, at the switch); and the machine's stalls, stretches in which it ran
//! nothing at all (timer expiries handled > 1 ms late; a virtual CPU its host stopped), written with
//! `--stall-log` so that a test can tell a late scheduler from a machine that did not run
//! (`scx_smart::jobs`).
//!
//! Where it is weak: every decision is a round trip through user space (tens of microseconds under
//! emulation), so it suits the study of policies more than a production desktop; the policies model one
//! CPU and are given one decision per free CPU; exits are noticed by polling `/proc` once a second.

mod bpf_skel;
pub use bpf_skel::*;
pub mod bpf_intf;
#[rustfmt::skip]
#[allow(clippy::all)]
mod bpf;
mod wake_skel {
    include!(concat!(env!("OUT_DIR"), "/wake_skel.rs"));
}

use std::collections::HashSet;
use std::mem::MaybeUninit;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use bpf::*;
use clap::Parser;
use hdrhistogram::Histogram;
use libbpf_rs::skel::{OpenSkel, Skel, SkelBuilder};
use libbpf_rs::{MapCore, MapFlags, OpenObject};
use libsmart::server::Registry;
use scx_smart::driver::{still_wanted, Asked, Driver, Queued, Upcoming};
use scx_smart::jobs::Stalls;

#[derive(Parser)]
#[command(
    name = "scx_smart",
    version,
    about = "SMART (or another crates/sched policy) as a sched_ext scheduler",
    long_about = "Schedules real Linux tasks with a policy of crates/sched (SMART by default) through sched_ext,\n\
    the same code the simulator smartsim runs. Needs root and a kernel with CONFIG_SCHED_CLASS_EXT (6.12+).\n\
    Applications pass time constraints with libsmart (socket $SMART_SOCKET, default /run/smart/scx_smart.sock).\n\
    Stop it with Ctrl-C or SIGTERM: every task returns to the fair scheduler."
)]
struct Cli {
    /// Policy (see `smartsim policies`): smart, wfq, wfq-credit, edf, fifo, rr.
    #[arg(long, default_value = "smart")]
    policy: String,
    /// Only schedule tasks that chose SCHED_EXT (sched_setscheduler policy 7); others stay on the fair class.
    #[arg(long)]
    partial: bool,
    /// Print statistics every this many seconds (0 = never).
    #[arg(long, default_value_t = 1.0)]
    stats: f64,
    /// Longest slice given to a task, in milliseconds (a policy's "until it blocks" is capped to this).
    /// The user-space half cannot preempt a running task, so an urgent wake-up can wait up to this long.
    #[arg(long, default_value_t = 5)]
    max_slice_ms: u64,
    /// Time kept, in microseconds, between the end of a slice cut short for a request a thread has
    /// announced (set a constraint, then slept) and that request's latest start: what a wake-up needs to
    /// reach this process and the task it dispatches to start.
    #[arg(long, default_value_t = 1000)]
    wakeup_margin_us: u64,
    /// Unload after this many seconds (0 = run until stopped).
    #[arg(long, default_value_t = 0.0)]
    duration: f64,
    /// Do not preempt on the wake-up of a thread with a time constraint (src/bpf_wake/wake.bpf.c): its
    /// wake-up then waits for the running task's slice to end, as for every other task. The wake-up
    /// latency is still measured, to compare.
    #[arg(long)]
    no_preempt: bool,
    /// Do not cut other tasks' slices to end before the latest start of a request a sleeping thread has
    /// announced (see --wakeup-margin-us). With --no-preempt and a long --max-slice-ms, this shows what
    /// the preemption alone buys.
    #[arg(long)]
    no_slice_cap: bool,
    /// Bytes of the kernel's debug dump (tasks, queues) printed if sched_ext ejects the scheduler.
    #[arg(long, default_value_t = 32768)]
    exit_dump_len: u32,
    /// Do not accept libsmart registrations.
    #[arg(long)]
    no_libsmart: bool,
    /// Write the machine's stalls (stretches in which it ran nothing: timer expiries handled more than
    /// 1 ms late, e.g. a virtual CPU its host stopped) to FILE at exit, one `START END` line (ns,
    /// CLOCK_MONOTONIC) each; `smart-periodic --explain` reads them.
    #[arg(long, value_name = "FILE")]
    stall_log: Option<std::path::PathBuf>,
}

/// Where dispatches without a time constraint start in the kernel's vtime-ordered queue: above every
/// dispatch with one (2^40 decisions is years of decisions).
const BEST_EFFORT_VTIME: u64 = 1 << 40;

fn now_ns() -> u64 {
    libsmart::now()
}

/// Wake-up preemption for the threads that hold a time constraint: our tracing program
/// (src/bpf_wake/wake.bpf.c) and the map of threads it acts for.
struct Preempt<'o> {
    skel: wake_skel::WakeSkel<'o>,
    listed: HashSet<u32>,
    want: HashSet<u32>,
    /// Late timer expiries (machine stalls) read so far, and those [`Stalls`] had no room for.
    stalls_read: u64,
    stalls_dropped: u64,
}

impl<'o> Preempt<'o> {
    /// Loads and attaches the program. Must run before scx_rustland_core's init, which forbids mmap()
    /// (libbpf maps the program's global data).
    fn load(obj: &'o mut MaybeUninit<OpenObject>, kick: bool) -> Result<Self> {
        let mut open =
            wake_skel::WakeSkelBuilder::default().open(obj).context("opening the wake-up program")?;
        // The sched_ext constants (SCX_KICK_PREEMPT among them) are read from the running kernel's BTF.
        scx_utils::import_enums!(open);
        let rodata = open.maps.rodata_data.as_deref_mut().context("the wake-up program has no .rodata")?;
        rodata.usersched_tid = std::process::id();
        rodata.kick_enabled = kick;
        let mut skel = open.load().context("loading the wake-up program")?;
        skel.attach().context("attaching the wake-up program to sched_wakeup")?;
        Ok(Preempt { skel, listed: HashSet::new(), want: HashSet::new(), stalls_read: 0, stalls_dropped: 0 })
    }

    /// Makes the map list exactly the threads in `self.want`.
    fn sync(&mut self) {
        if self.want == self.listed {
            return;
        }
        let map = &self.skel.maps.urgent;
        for tid in self.listed.difference(&self.want) {
            let _ = map.delete(&tid.to_ne_bytes());
        }
        for tid in self.want.difference(&self.listed) {
            if let Err(e) = map.update(&tid.to_ne_bytes(), &0u32.to_ne_bytes(), MapFlags::ANY) {
                eprintln!("scx_smart: thread {tid} gets no wake-up preemption: {e}");
            }
        }
        self.listed.clone_from(&self.want);
    }

    /// (wake-ups of listed threads, kicks sent).
    fn counts(&self) -> (u64, u64) {
        self.skel.maps.bss_data.as_ref().map_or((0, 0), |b| (b.nr_wakeups, b.nr_kicks))
    }

    /// Moves the late timer expiries the program saw since the last call into `into`; returns how many
    /// were overwritten in its ring before they could be read.
    fn take_stalls(&mut self, into: &mut Stalls) -> u64 {
        let Some(b) = self.skel.maps.bss_data.as_deref() else { return 0 };
        // SAFETY: a naturally aligned u64 in the program's mapped .bss, updated atomically by it.
        let n = unsafe { std::sync::atomic::AtomicU64::from_ptr(&b.nr_stalls as *const u64 as *mut u64) }
            .load(std::sync::atomic::Ordering::Acquire);
        let slots = b.stalls.len() as u64;
        let lost = n.saturating_sub(self.stalls_read + slots);
        for i in self.stalls_read.max(n.saturating_sub(slots))..n {
            let s = b.stalls[(i % slots) as usize];
            if s.end != 0 && !into.add(s.end, s.len) {
                self.stalls_dropped += 1;
            }
        }
        self.stalls_read = n;
        lost
    }

    /// From a dispatch for a time constraint to the thread starting on a CPU, as the program measured
    /// it: (threads started, mean ns, largest ns, started later than 1 ms).
    fn start_delays(&self) -> (u64, u64, u64, u64) {
        self.skel.maps.bss_data.as_ref().map_or((0, 0, 0, 0), |b| {
            (b.nr_started, b.start_delay_sum / b.nr_started.max(1), b.start_delay_max, b.nr_started_late)
        })
    }

    /// Names the thread just dispatched for a time constraint: until it runs, other tasks starting on
    /// its CPU are kicked off (see the program).
    fn dispatched_urgent(&mut self, tid: i32, now: u64) {
        if let Some(b) = self.skel.maps.bss_data.as_deref_mut() {
            b.dispatched_at = now;
            b.dispatched_tid = tid as u32;
        }
    }

    /// Acknowledges the wake-ups of listed threads so far (before reading the queue): the time of the
    /// first one not acknowledged before, if any.
    fn acknowledge(&mut self) -> Option<u64> {
        let b = self.skel.maps.bss_data.as_deref_mut()?;
        // SAFETY: the field is a naturally aligned u64 in the BPF program's mapped .bss, shared with
        // the program, which updates it atomically; it lives as long as the skeleton.
        let since = unsafe { std::sync::atomic::AtomicU64::from_ptr(&mut b.urgent_since) };
        Some(since.swap(0, std::sync::atomic::Ordering::AcqRel)).filter(|&t| t != 0)
    }
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    let policy = sched::by_name(&cli.policy, &Default::default()).map_err(|e| anyhow::anyhow!("{e}"))?;
    let max_slice = cli.max_slice_ms.max(1) * 1_000_000;
    let wakeup_flag = scx_utils::compat::read_enum("scx_enq_flags", "SCX_ENQ_WAKEUP").unwrap_or(1);
    // libsmart's registry maps each registering process's region. scx_rustland_core forbids mmap() to the
    // thread that loads the scheduler and to threads it starts afterwards, so the registry is polled by a
    // thread started now, before loading; the scheduler's loop only reads it (a lock and a seqlock read).
    let registry: Option<Arc<Mutex<Registry>>> = if cli.no_libsmart {
        None
    } else {
        match Registry::bind_default() {
            Ok(r) => {
                eprintln!("scx_smart: libsmart socket {}", r.path().display());
                let r = Arc::new(Mutex::new(r));
                let poller = Arc::clone(&r);
                // It sleeps until a registration or an exit (a socket becomes readable), at most
                // 250 ms (unanswered connections time out); threads' slot claims, which wake no
                // descriptor, are indexed by the scheduler's loop (poll_claims).
                std::thread::Builder::new()
                    .name("libsmart".into())
                    .spawn(move || loop {
                        let fds = poller.lock().expect("registry lock").event_fds();
                        let _ = libsmart::server::wait_readable(&fds, Duration::from_millis(250));
                        poller.lock().expect("registry lock").poll();
                    })
                    .context("starting the libsmart thread")?;
                Some(r)
            }
            Err(e) => {
                eprintln!("scx_smart: libsmart unavailable ({e}); running without time constraints");
                None
            }
        }
    };

    let mut wake_object = MaybeUninit::uninit();
    let mut preempt = if registry.is_none() {
        None
    } else {
        match Preempt::load(&mut wake_object, !cli.no_preempt) {
            Ok(p) => Some(p),
            Err(e) => {
                eprintln!("scx_smart: wake-up preemption unavailable ({e:#}); time-constrained threads wait for slices to end");
                None
            }
        }
    };
    let mut open_object = MaybeUninit::uninit();
    let mut bpf = BpfScheduler::init(
        &mut open_object,
        None,
        cli.exit_dump_len,
        cli.partial,
        false,
        false,
        false,
        max_slice,
        "smart",
    )
    .context("loading the sched_ext scheduler (root and a kernel with CONFIG_SCHED_CLASS_EXT are needed)")?;
    eprintln!(
        "scx_smart: loaded, policy {} ({} mode)",
        cli.policy,
        if cli.partial { "partial" } else { "full" }
    );

    let mut drv = Driver::new(policy);
    drv.set_wakeup_margin(cli.wakeup_margin_us * 1000);
    let mut upcoming: Vec<Upcoming> = Vec::new();
    let mut superseded = 0u64;
    // The last record the kernel queued for each pid: its flags and enqueue count go back with the dispatch
    // (the BPF side drops a dispatch made stale by a newer enqueue).
    let mut latest: std::collections::HashMap<i32, QueuedTask> = std::collections::HashMap::new();
    let mut cost = Histogram::<u64>::new(3).expect("valid histogram");
    // From an urgent wake-up (a thread with a time constraint) to this loop reading it, and to the
    // dispatch of a thread with a time constraint after it, in µs.
    let mut wake_lat = Histogram::<u64>::new(3).expect("valid histogram");
    let mut wake_to_dispatch = Histogram::<u64>::new(3).expect("valid histogram");
    let mut woken_since: Option<u64> = None;
    let mut stalls = Stalls::default();
    let mut stalls_lost = 0u64;
    let start = Instant::now();
    let mut last_stats = Instant::now();
    let mut last_reap = Instant::now();
    let mut last_avail = Instant::now();
    let (mut decisions_then, mut stats_then) = (0u64, Instant::now());
    let mut seq = 0u64;
    let mut in_queue: Option<u64> = None;
    // SCX_SMART_DEBUG=1: trace decisions and the events of time-constrained threads; =2: every event.
    let debug_level = std::env::var("SCX_SMART_DEBUG").map_or(0, |v| v.parse::<u32>().unwrap_or(1));
    let debug = debug_level > 0;
    let mut asked_cache: std::collections::HashMap<i32, Option<Asked>> = std::collections::HashMap::new();
    let mut pending_notes: Vec<(i32, u64, bool)> = Vec::new();
    let stats_every = Duration::from_secs_f64(cli.stats.max(0.0));
    let until = (cli.duration > 0.0).then(|| Duration::from_secs_f64(cli.duration));

    while !bpf.exited() {
        let now = now_ns();
        // Never block on the registry: its poller is a task we schedule ourselves, so waiting for it could
        // wait forever. When it is busy, the last answers seen are used and notifications wait.
        let mut reg = registry.as_ref().and_then(|r| r.try_lock().ok());
        if let Some(r) = reg.as_mut() {
            r.poll_claims();
        }
        // Acknowledge urgent wake-ups before reading the queue, which holds them (they were queued
        // before the tracepoint fired); one arriving later is kicked again.
        if let Some(p) = preempt.as_mut() {
            stalls_lost += p.take_stalls(&mut stalls);
        }
        if let Some(since) = preempt.as_mut().and_then(|p| p.acknowledge()) {
            let _ = wake_lat.record(now.saturating_sub(since) / 1000);
            woken_since = Some(woken_since.map_or(since, |w| w.min(since)));
        }
        let mut dequeued = 0;
        while let Ok(Some(task)) = bpf.dequeue_task() {
            dequeued += 1;
            let q = Queued {
                pid: task.pid,
                wakeup: task.flags & wakeup_flag != 0,
                start_ts: task.start_ts,
                stop_ts: task.stop_ts,
                exec_runtime: task.exec_runtime,
                weight: task.weight,
            };
            let asked = match reg.as_ref() {
                Some(r) => {
                    let a = r.lookup(task.pid as u32).map(Asked::from);
                    asked_cache.insert(task.pid, a.clone());
                    a
                }
                None => asked_cache.get(&task.pid).cloned().flatten(),
            };
            if debug_level > 1 || (debug && asked.as_ref().is_some_and(|a| a.constraint.is_some())) {
                let c = asked.as_ref().and_then(|a| a.constraint);
                eprintln!(
                    "scx_smart: {now} queued {} ({}) wakeup {} ran {} from {} to {} deadline in {:?} est {:?}",
                    q.pid,
                    task.comm_str(),
                    q.wakeup,
                    q.stop_ts.saturating_sub(q.start_ts),
                    q.start_ts,
                    q.stop_ts,
                    c.map(|c| c.deadline as i64 - now as i64),
                    c.and_then(|c| c.cpu_estimate)
                );
            }
            drv.queued(&q, asked, now);
            latest.insert(task.pid, task);
        }
        drv.timers(now);
        // Requests announced by sleeping threads: no slice may run past their latest start (with the registry
        // busy, the last list is kept).
        if let Some(r) = reg.as_ref() {
            upcoming.clear();
            if let Some(p) = preempt.as_mut() {
                p.want.clear();
            }
            for tid in r.registered_tids() {
                if let Some(asked) = r.lookup(tid).map(Asked::from) {
                    if let (Some(p), Some(_)) = (preempt.as_mut(), asked.constraint) {
                        p.want.insert(tid);
                    }
                    if !cli.no_slice_cap {
                        upcoming.extend(drv.upcoming(tid as i32, &asked, now));
                    }
                }
            }
        }
        // One decision per free CPU (nr_running does not count this scheduler). A task dispatched in the
        // last round waits in a BPF queue until this scheduler leaves the CPU; if none of them has
        // started and nothing happened since, decide nothing now and sleep briefly, or the queue would
        // fill with decisions made ahead of time and the policy's order would be lost.
        if let Some(p) = preempt.as_mut() {
            p.sync();
        }
        let cpus = *bpf.nr_online_cpus_mut();
        let running = *bpf.nr_running_mut();
        if let Some(r0) = in_queue.take() {
            if dequeued == 0 && running <= r0 {
                drop(reg);
                bpf.notify_complete(drv.runnable() as u64);
                std::thread::sleep(Duration::from_micros(100));
                continue;
            }
        }
        let mut budget = cpus.saturating_sub(running).max(1);
        let mut dispatched_now = 0;
        while budget > 0 && drv.runnable() > 0 {
            let t0 = Instant::now();
            let Some((pid, slice)) = drv.pick(now, max_slice, &upcoming) else { break };
            if debug {
                let comm = latest.get(&pid).map(|t| t.comm_str()).unwrap_or_default();
                eprintln!("scx_smart: {now} dispatch {pid} ({comm}) slice {slice}");
            }
            let _ = cost.record(t0.elapsed().as_nanos() as u64);
            let Some(q) = latest.get(&pid) else { continue };
            let mut d = DispatchedTask::new(q);
            d.cpu = RL_CPU_ANY;
            d.slice_ns = slice;
            // The BPF side orders its queue by vtime: keep the policy's order of decisions, except that
            // work on a time constraint goes ahead of every dispatch still waiting without one (a
            // decision made earlier, for a CPU that has not taken it yet).
            seq += 1;
            let urgent = drv.urgent(pid, now);
            d.vtime = if urgent { seq } else { BEST_EFFORT_VTIME + seq };
            if let Err(e) = bpf.dispatch_task(&d) {
                eprintln!("scx_smart: dispatch of {pid} failed: {e}");
            } else if urgent {
                if let Some(p) = preempt.as_mut() {
                    p.dispatched_urgent(pid, now);
                }
                if let Some(since) = woken_since.take() {
                    let _ = wake_to_dispatch.record(now_ns().saturating_sub(since) / 1000);
                }
            }
            budget -= 1;
            dispatched_now += 1;
        }
        if dispatched_now > 0 {
            in_queue = Some(running);
        }
        let notes = drv.notifications();
        if debug {
            for (pid, deadline, passed) in &notes {
                eprintln!(
                    "scx_smart: {now} notify {pid} deadline in {} passed {passed}",
                    *deadline as i64 - now as i64
                );
            }
        }
        pending_notes.extend(notes);
        if let Some(r) = reg.as_mut() {
            for (pid, deadline, passed) in pending_notes.drain(..) {
                if still_wanted(deadline, r.constraint(pid as u32)) {
                    let _ = r.notify(pid as u32, deadline, passed);
                } else {
                    superseded += 1;
                }
            }
        }
        if let Some(r) = reg.as_ref() {
            if last_avail.elapsed() >= Duration::from_millis(100) {
                last_avail = Instant::now();
                let tids: Vec<u32> = r.registered_tids().collect();
                for tid in tids {
                    if let Some(a) = drv.availability(tid as i32, now) {
                        r.set_availability(tid, &a);
                    }
                }
            }
        }
        if last_reap.elapsed() >= Duration::from_secs(1) {
            last_reap = Instant::now();
            drv.reap(now, |pid| std::path::Path::new(&format!("/proc/{pid}")).exists());
            latest.retain(|pid, _| std::path::Path::new(&format!("/proc/{pid}")).exists());
            asked_cache.retain(|pid, _| latest.contains_key(pid));
        }
        if !stats_every.is_zero() && last_stats.elapsed() >= stats_every {
            let secs = stats_then.elapsed().as_secs_f64();
            let c = &drv.counters;
            eprintln!(
                "scx_smart: runnable {} known {} decisions/s {:.0} cost p50 {} ns p99 {} ns max {} ns notifications {} (dropped as superseded {}) libsmart processes {} urgent wake-ups {} (to scheduler p50 {} us p99 {} us max {} us)",
                drv.runnable(),
                drv.known(),
                (c.dispatched - decisions_then) as f64 / secs,
                cost.value_at_quantile(0.5),
                cost.value_at_quantile(0.99),
                cost.max(),
                c.notifications,
                superseded,
                reg.as_ref().map_or(0, |r| r.processes().len()),
                preempt.as_ref().map_or(0, |p| p.counts().0),
                wake_lat.value_at_quantile(0.5),
                wake_lat.value_at_quantile(0.99),
                wake_lat.max(),
            );
            decisions_then = c.dispatched;
            stats_then = Instant::now();
            last_stats = Instant::now();
        }
        drop(reg);
        bpf.notify_complete(drv.runnable() as u64);
        if until.is_some_and(|u| start.elapsed() >= u) {
            break;
        }
    }
    // Detach the wake-up program first: nothing is kicked while the scheduler unloads.
    let (wakeups, kicks) = preempt.as_ref().map_or((0, 0), |p| p.counts());
    let (started, start_mean, start_max, started_late) =
        preempt.as_ref().map_or((0, 0, 0, 0), |p| p.start_delays());
    if let Some(p) = preempt.as_mut() {
        stalls_lost += p.take_stalls(&mut stalls);
        stalls_lost += p.stalls_dropped;
    }
    drop(preempt);
    let uei = bpf.shutdown_and_report()?;
    let c = &drv.counters;
    eprintln!(
        "scx_smart: unloaded ({:?}); {} tasks admitted, {} decisions, decision cost p50 {} ns p99 {} ns, \
         {} notifications ({} dropped as superseded), {} unbilled stretches ({} ms), {} records of split stretches, {} bills clamped, {} wake-ups of time-constrained threads, {} preempting kicks, \
         wake-up to scheduler p50 {} us p99 {} us max {} us, \
         wake-up to dispatch p50 {} us p99 {} us max {} us, \
         dispatch to start {} (mean {} us, max {} us, {} later than 1 ms)",
        uei,
        c.admitted,
        c.dispatched,
        cost.value_at_quantile(0.5),
        cost.value_at_quantile(0.99),
        c.notifications,
        superseded,
        c.unbilled,
        c.unbilled_ns / 1_000_000,
        c.split,
        c.clamped,
        wakeups,
        kicks,
        wake_lat.value_at_quantile(0.5),
        wake_lat.value_at_quantile(0.99),
        wake_lat.max(),
        wake_to_dispatch.value_at_quantile(0.5),
        wake_to_dispatch.value_at_quantile(0.99),
        wake_to_dispatch.max(),
        started,
        start_mean / 1000,
        start_max / 1000,
        started_late,
    );
    let top: Vec<String> = drv
        .top_billed(8)
        .iter()
        .map(|(pid, ns, n)| format!("{pid} {:.0} ms in {n}", *ns as f64 / 1e6))
        .collect();
    eprintln!("scx_smart: CPU billed to the policy, most first (pid, CPU, stretches): {}", top.join(", "));
    let longest = stalls.spans().iter().map(|s| s.1 - s.0).max().unwrap_or(0);
    eprintln!(
        "scx_smart: machine stalls (timer expiries handled > 1 ms late): {}, {:.1} ms in all, longest {:.1} ms{}",
        stalls.spans().len(),
        stalls.total() as f64 / 1e6,
        longest as f64 / 1e6,
        if stalls_lost > 0 { format!(" ({stalls_lost} not recorded)") } else { String::new() }
    );
    if let Some(path) = &cli.stall_log {
        let text: String = stalls.spans().iter().map(|(a, b)| format!("{a} {b}\n")).collect();
        std::fs::write(path, text).with_context(|| format!("writing the stall log {}", path.display()))?;
    }
    Ok(())
}
