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
//! Nothing this process waits for may depend on its own decisions: the loop takes no lock it could
//! wait on but the memory allocator's, and the one other thread, which answers libsmart's
//! registrations, runs in the real-time class in full mode, outside sched_ext ([`outside_sched_ext`]).
//! SIGINT/SIGTERM unregister the scheduler; the kernel then returns every task to the fair class.
//!
//! Preemption: a user-space scheduler cannot preempt. When the core asks a busy CPU to decide again
//! (a wake-up the policy preempts for, its timer, an exit), this process kicks it from a BPF syscall
//! program. A thread with a time constraint that wakes cannot wait for this process to run, so our own
//! BPF program (src/bpf_wake/wake.bpf.c) kicks at its wake-up the CPU the policy would take for it,
//! which this process keeps forecast ([`scx_smart::driver`] says which decisions are taken where), and
//! keeps other tasks off a preempted CPU until the task the policy chose for it starts.
//!
//! What it measures of itself, printed at exit: for wake-ups of time-constrained threads, the time to the
//! scheduler reading them, to the policy dispatching the thread, and from the dispatch to the thread
//! starting on a CPU (the program, at the switch); and the machine's stalls, stretches in which it ran
//! nothing at all (timer expiries handled > 1 ms late; a virtual CPU its host stopped), written with
//! `--stall-log` so that a test can tell a late scheduler from a machine that did not run
//! (`scx_smart::jobs`).
//!
//! Where it is weak: every decision is a round trip through user space (tens of microseconds under
//! emulation), so it suits the study of policies more than a production desktop; a constraint is read
//! from libsmart's shared memory when its thread is queued or blocks, not when it is set; exits are
//! noticed once a second, by asking the kernel about each known task ([`alive`]).

#![deny(unsafe_code)]

// Generated code (libbpf-cargo's skeletons, scx_rustland_core's template) keeps its own unsafe blocks;
// ours are all in `sys`.
#[allow(unsafe_code)]
mod bpf_skel;
pub use bpf_skel::*;
pub mod bpf_intf;
#[rustfmt::skip]
#[allow(clippy::all, unsafe_code)]
mod bpf;
#[allow(unsafe_code)]
mod sys;
#[allow(unsafe_code)]
mod wake_skel {
    include!(concat!(env!("OUT_DIR"), "/wake_skel.rs"));
}

use std::collections::{HashMap, HashSet};
use std::mem::MaybeUninit;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use bpf::*;
use clap::Parser;
use hdrhistogram::Histogram;
use libbpf_rs::skel::{OpenSkel, Skel, SkelBuilder};
use libbpf_rs::{MapCore, MapFlags, MapHandle, OpenObject, ProgramInput, RingBuffer, RingBufferBuilder};
use libsmart::server::Registry;
use sched::CpuId;
use scx_smart::driver::{
    kernel_weight_options, still_wanted, Action, Asked, Driver, Queued, Upcoming, OVERDUE_GRACE,
};
use scx_smart::jobs::Stalls;
use scx_smart::passes::Passes;
use std::cell::RefCell;
use std::rc::Rc;

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
    #[command(flatten)]
    verbose: diag::Verbosity,
    /// Policy (`smartsim policies` says what each is).
    #[arg(long, default_value = "smart", value_parser = clap::builder::PossibleValuesParser::new(sched::names()))]
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
    /// Never preempt a running task: neither at the wake-up of a thread with a time constraint
    /// (src/bpf_wake/wake.bpf.c) nor when the policy asks a busy CPU to decide again. A decision then
    /// waits for the running task's slice to end. The wake-up latency is still measured, to compare.
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

/// The least the libsmart thread rests after a poll that had work (see `start_registry`).
const POLL_REST: Duration = Duration::from_millis(1);
/// How many times the CPU it used the libsmart thread rests (see `start_registry`): at most a quarter
/// of one CPU.
const REST_FACTOR: u32 = 3;

/// The CPU time the calling thread has used.
fn thread_cpu() -> Duration {
    nix::time::clock_gettime(nix::time::ClockId::CLOCK_THREAD_CPUTIME_ID)
        .map_or(Duration::ZERO, Duration::from)
}

fn now_ns() -> u64 {
    libsmart::now()
}

/// A task that blocked, as our program reports it: (pid, CPU, start of its stretch, stop).
type Block = (i32, CpuId, u64, u64);

/// Our BPF program (src/bpf_wake/wake.bpf.c): wake-up preemption for the threads that hold a time
/// constraint (and the map of them), preemption of a CPU the policy names, the record of tasks that
/// block, measurements.
struct Preempt<'o> {
    skel: wake_skel::WakeSkel<'o>,
    /// The ring of blocks, and what its callback has read.
    blocks: RingBuffer<'static>,
    blocked: Rc<RefCell<Vec<Block>>>,
    /// Threads with a time constraint, with the CPU to kick at their wake-up (-1: none), as in the
    /// map and as wanted.
    listed: HashMap<u32, i32>,
    want: HashMap<u32, i32>,
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
        // The ring buffer is mapped now, before scx_rustland_core forbids mmap(); its handle lives as
        // long as the process.
        let handle: &'static MapHandle =
            Box::leak(Box::new(MapHandle::try_from(&skel.maps.blocks).context("the blocks ring")?));
        let blocked: Rc<RefCell<Vec<Block>>> = Rc::default();
        let sink = Rc::clone(&blocked);
        let mut rb = RingBufferBuilder::new();
        rb.add(handle, move |data: &[u8]| {
            if data.len() >= 24 {
                let u32_at = |i: usize| u32::from_ne_bytes(data[i..i + 4].try_into().expect("4 bytes"));
                let u64_at = |i: usize| u64::from_ne_bytes(data[i..i + 8].try_into().expect("8 bytes"));
                sink.borrow_mut().push((u32_at(0) as i32, u32_at(4), u64_at(8), u64_at(16)));
            }
            0
        })
        .context("reading the blocks ring")?;
        let blocks = rb.build().context("mapping the blocks ring")?;
        Ok(Preempt {
            skel,
            blocks,
            blocked,
            listed: HashMap::new(),
            want: HashMap::new(),
            stalls_read: 0,
            stalls_dropped: 0,
        })
    }

    /// The tasks that blocked since the last call.
    fn take_blocks(&mut self) -> Vec<Block> {
        let _ = self.blocks.consume();
        std::mem::take(&mut *self.blocked.borrow_mut())
    }

    /// Preempts `cpu`: its task stops, the CPU enters dispatch, and the policy decides there.
    fn kick(&mut self, cpu: CpuId) {
        let mut arg = (cpu as i32).to_ne_bytes();
        let input = ProgramInput { context_in: Some(&mut arg), ..Default::default() };
        if let Err(e) = self.skel.progs.smart_kick.test_run(input) {
            eprintln!("scx_smart: preempting CPU {cpu} failed: {e}");
        }
    }

    /// Makes the map hold exactly the threads and CPUs in `self.want` (one system call per change).
    fn sync(&mut self) {
        if self.want == self.listed {
            return;
        }
        let map = &self.skel.maps.urgent;
        for tid in self.listed.keys().filter(|t| !self.want.contains_key(t)) {
            let _ = map.delete(&tid.to_ne_bytes());
        }
        for (tid, cpu) in self.want.iter().filter(|(t, c)| self.listed.get(t) != Some(c)) {
            if let Err(e) = map.update(&tid.to_ne_bytes(), &cpu.to_ne_bytes(), MapFlags::ANY) {
                eprintln!("scx_smart: thread {tid} gets no wake-up preemption: {e}");
            }
        }
        self.listed.clone_from(&self.want);
    }

    /// The preemptions (kicks) counted on each of the first `n` CPUs so far.
    fn kicks(&self, n: usize) -> Vec<u64> {
        let Some(b) = self.skel.maps.bss_data.as_deref() else { return vec![0; n] };
        b.kicks_cpu[..n.min(b.kicks_cpu.len())].iter().map(sys::load_shared).collect()
    }

    /// (wake-ups of listed threads, kicks sent).
    fn counts(&self) -> (u64, u64) {
        self.skel.maps.bss_data.as_ref().map_or((0, 0), |b| (b.nr_wakeups, b.nr_kicks))
    }

    /// Moves the late timer expiries the program saw since the last call into `into`; returns how many
    /// were overwritten in its ring before they could be read.
    fn take_stalls(&mut self, into: &mut Stalls) -> u64 {
        let Some(b) = self.skel.maps.bss_data.as_deref() else { return 0 };
        let n = sys::load_shared(&b.nr_stalls);
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

    /// Names the task just dispatched to carry out a preemption: until it runs, other tasks starting
    /// on its CPU are kicked off (see the program).
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
        Some(sys::take_shared(&mut b.urgent_since)).filter(|&t| t != 0)
    }
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    diag::init("scx_smart", cli.verbose.tracing_level_filter());
    let (ncpus, offline) = online_cpus();
    // Shares here are the kernel's weights (`driver::share_of`: 100 at nice 0); the registry says
    // which options tell a policy so.
    let entry = sched::entry(&cli.policy).context("the policy's registry entry")?;
    let policy = sched::build(&cli.policy, &kernel_weight_options(entry), ncpus)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let registry = start_registry(&cli)?;
    let mut wake_object = MaybeUninit::uninit();
    // Our program is not optional: without its records of blocked tasks the driver would believe their
    // CPUs busy until they wake.
    let preempt = Preempt::load(&mut wake_object, !cli.no_preempt && registry.is_some())
        .context("loading scx_smart's own BPF program (src/bpf_wake/wake.bpf.c)")?;
    let mut open_object = MaybeUninit::uninit();
    let bpf = BpfScheduler::init(
        &mut open_object,
        None,
        cli.exit_dump_len,
        cli.partial,
        false,
        false,
        false,
        cli.max_slice_ms.max(1) * 1_000_000,
        "smart",
    )
    .context("loading the sched_ext scheduler (root and a kernel with CONFIG_SCHED_CLASS_EXT are needed)")?;
    eprintln!(
        "scx_smart: loaded, policy {} on {ncpus} CPUs ({} mode)",
        cli.policy,
        if cli.partial { "partial" } else { "full" }
    );
    let mut drv = Driver::new(policy);
    drv.set_wakeup_margin(cli.wakeup_margin_us * 1000);
    for c in offline {
        drv.set_offline(c);
    }
    let mut s = Scheduler::new(cli, drv, bpf, preempt, registry, ncpus);
    s.run();
    s.finish()
}

/// The CPUs the policy schedules: `0..n` for the highest online CPU `n − 1`, and those among them that
/// are offline (`/sys/devices/system/cpu/online`).
fn online_cpus() -> (usize, Vec<CpuId>) {
    let text = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap_or_else(|_| "0".into());
    let mut online = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        let mut it = part.split('-').map(|x| x.parse::<CpuId>().unwrap_or(0));
        let a = it.next().unwrap_or(0);
        let b = it.next().unwrap_or(a);
        online.extend(a..=b);
    }
    let n = online.iter().max().map_or(1, |m| *m as usize + 1).min(sched::MAX_CPUS);
    let offline = (0..n as CpuId).filter(|c| !online.contains(c)).collect();
    (n, offline)
}

/// The CPUs `pid` may run on, when that is not all of them (`sched_getaffinity`).
fn affinity_of(pid: i32, ncpus: usize) -> Option<Vec<CpuId>> {
    let set = nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(pid)).ok()?;
    let cpus: Vec<CpuId> = (0..ncpus.min(nix::sched::CpuSet::count()))
        .filter(|&c| set.is_set(c).unwrap_or(false))
        .map(|c| c as CpuId)
        .collect();
    (cpus.len() < ncpus && !cpus.is_empty()).then_some(cpus)
}

/// Whether the task `pid` (a thread id) still exists, asked of the kernel by its id alone
/// (`sched_getaffinity`, which fails with `ESRCH` once the task is gone, a zombie still counting).
/// Not by `/proc/PID`: a path lookup can wait for another task's lookup of the same name to finish
/// (the kernel makes concurrent lookups of one name wait for the first), and that task may be
/// waiting for this process to dispatch it. Any other error counts as alive: a task reaped by
/// mistake would lose its place, one kept a second too long costs nothing. Such an error may last
/// (a security module refusing, a kernel of more than 1024 CPUs), and then no task is ever
/// forgotten, so the first is said once.
fn alive(pid: i32) -> bool {
    static SAID: std::sync::Once = std::sync::Once::new();
    if pid <= 0 {
        return false;
    }
    match nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(pid)) {
        Ok(_) => true,
        Err(nix::errno::Errno::ESRCH) => false,
        Err(e) => {
            SAID.call_once(|| {
                eprintln!(
                    "scx_smart: cannot tell whether task {pid} exists (sched_getaffinity: {e}); tasks \
                     it cannot ask about are kept as if alive"
                )
            });
            true
        }
    }
}

/// libsmart's registry, polled by a thread of its own. The registry maps each registering process's
/// region, and scx_rustland_core forbids mmap() to the thread that loads the scheduler and to threads it
/// starts afterwards, so the thread is started now, before loading; the scheduler's loop only reads it
/// (a lock and a seqlock read).
fn start_registry(cli: &Cli) -> Result<Option<Arc<Mutex<Registry>>>> {
    if cli.no_libsmart {
        return Ok(None);
    }
    match Registry::bind_default() {
        Ok(r) => {
            eprintln!("scx_smart: libsmart socket {}", r.path().display());
            let r = Arc::new(Mutex::new(r));
            let poller = Arc::clone(&r);
            // It sleeps until a registration or an exit (a socket becomes readable), at most 250 ms
            // (unanswered connections time out); threads' slot claims, which wake no descriptor, are
            // indexed by the scheduler's loop (poll_claims).
            // After a poll that had work it rests REST_FACTOR times the CPU it used since it last
            // rested (waiting included: poll(2) on hundreds of descriptors is work too), and at
            // least POLL_REST, so that clients flooding the socket hold it at most 1/(1 +
            // REST_FACTOR) of one CPU.
            let thread = std::thread::Builder::new()
                .name("libsmart".into())
                .spawn(move || {
                    let mut since_rest = thread_cpu();
                    loop {
                        let fds = poller.lock().expect("registry lock").event_fds();
                        let _ = libsmart::server::wait_readable(&fds, Duration::from_millis(250));
                        let handled = poller.lock().expect("registry lock").poll();
                        let used = thread_cpu().saturating_sub(since_rest);
                        if handled > 0 || used > POLL_REST {
                            std::thread::sleep((used * REST_FACTOR).max(POLL_REST));
                            since_rest = thread_cpu();
                        }
                    }
                })
                .context("starting the libsmart thread")?;
            if !cli.partial {
                outside_sched_ext(&thread)?;
            }
            Ok(Some(r))
        }
        Err(e) => {
            eprintln!("scx_smart: libsmart unavailable ({e}); running without time constraints");
            Ok(None)
        }
    }
}

/// Puts the libsmart thread in the real-time class (`SCHED_FIFO`, the lowest priority), which sched_ext
/// leaves to the kernel even when it schedules every other task (full mode). The thread must never
/// wait for this process's own decisions: it shares the process's memory allocator, whose lock
/// (scx_rustland_core's global allocator, a mutex over a locked arena) the scheduler's loop also
/// takes. Scheduled by us, it could be preempted holding that lock; the loop then blocked on it, no
/// decision was made, and sched_ext's watchdog ejected the scheduler after 7 s of "runnable task
/// stall" (CI, guest test 22, while a thread registered; guest test 25 repeats registrations to catch
/// it). In the real-time class it runs as soon as it is runnable and releases the lock at once. What
/// it runs is bounded, since a real-time thread runs ahead of every task sched_ext schedules and the
/// kernel's real-time throttling is not counted on: it sleeps in poll(2) until a socket has work; a
/// poll accepts at most `MAX_PENDING` connections, reads at most as many registrations and indexes
/// at most `SCAN_BUDGET` slots; and after a poll that had work it rests three times the CPU it used
/// (`REST_FACTOR`, `POLL_REST`), so that a flood of clients holds it at most a quarter of one CPU
/// (guest test 27).
fn outside_sched_ext(thread: &std::thread::JoinHandle<()>) -> Result<()> {
    sys::set_fifo(thread).map_err(|e| {
        anyhow::anyhow!(
            "putting the libsmart thread in SCHED_FIFO ({e}): without it, full mode can deadlock \
             (run as root, or with --no-libsmart or --partial)"
        )
    })
}

/// Says that this process has work, for the pass of its loop that is starting. scx_rustland_core's BPF
/// side gives a CPU back to this process, when it was taken away halfway through a pass (its slice ran
/// out at a tick, or a real-time task woke), only while it reports work: queued records not yet read,
/// or `nr_scheduled` above 0. A pass that had read every record and not yet reported (`notify_complete`
/// at its end) showed neither and waited for the BPF side's once-a-second heartbeat: single decisions of
/// 1 s, and in a row sched_ext's watchdog ejecting the scheduler for a 5 s "runnable task stall" (with
/// the libsmart thread in the real-time class, 7 and 8 of 12 loads in a guest loop; 0 of 12 with this).
fn notify_busy(bpf: &mut BpfScheduler) {
    if let Some(bss) = bpf.skel.maps.bss_data.as_deref_mut() {
        bss.nr_scheduled = bss.nr_scheduled.max(1);
    }
}

/// What the scheduler measures of itself.
struct Measures {
    /// Decision cost (ns).
    cost: Histogram<u64>,
    /// From an urgent wake-up (a thread with a time constraint) to this loop reading it, and to the
    /// dispatch of a thread with a time constraint after it (µs).
    wake_lat: Histogram<u64>,
    wake_to_dispatch: Histogram<u64>,
    woken_since: Option<u64>,
    stalls: Stalls,
    stalls_lost: u64,
    superseded: u64,
    /// The loop's passes and the pauses between them.
    passes: Passes,
}

/// The scheduler's loop and its state.
struct Scheduler<'a> {
    cli: Cli,
    drv: Driver,
    bpf: BpfScheduler<'a>,
    preempt: Preempt<'a>,
    registry: Option<Arc<Mutex<Registry>>>,
    ncpus: usize,
    wakeup_flag: u64,
    max_slice: u64,
    upcoming: Vec<Upcoming>,
    /// The last record the kernel queued for each pid: its flags and enqueue count go back with the
    /// dispatch (the BPF side drops a dispatch made stale by a newer enqueue).
    latest: HashMap<i32, QueuedTask>,
    asked_cache: HashMap<i32, Option<Asked>>,
    pending_notes: Vec<(i32, u64, bool)>,
    m: Measures,
    seq: u64,
    debug_level: u32,
}

impl<'a> Scheduler<'a> {
    fn new(
        cli: Cli,
        drv: Driver,
        bpf: BpfScheduler<'a>,
        preempt: Preempt<'a>,
        registry: Option<Arc<Mutex<Registry>>>,
        ncpus: usize,
    ) -> Self {
        let hist = || Histogram::<u64>::new(3).expect("valid histogram");
        Scheduler {
            max_slice: cli.max_slice_ms.max(1) * 1_000_000,
            cli,
            drv,
            bpf,
            preempt,
            registry,
            ncpus,
            wakeup_flag: scx_utils::compat::read_enum("scx_enq_flags", "SCX_ENQ_WAKEUP").unwrap_or(1),
            upcoming: Vec::new(),
            latest: HashMap::new(),
            asked_cache: HashMap::new(),
            pending_notes: Vec::new(),
            m: Measures {
                cost: hist(),
                wake_lat: hist(),
                wake_to_dispatch: hist(),
                woken_since: None,
                stalls: Stalls::default(),
                stalls_lost: 0,
                superseded: 0,
                passes: Passes::default(),
            },
            seq: 0,
            // -v: decisions and the events of time-constrained threads; -vv: every event.
            debug_level: if tracing::enabled!(tracing::Level::TRACE) {
                2
            } else {
                u32::from(tracing::enabled!(tracing::Level::DEBUG))
            },
        }
    }

    fn run(&mut self) {
        let start = Instant::now();
        let (mut last_stats, mut last_reap, mut last_avail) =
            (Instant::now(), Instant::now(), Instant::now());
        let (mut decisions_then, mut stats_then) = (0u64, Instant::now());
        let stats_every = Duration::from_secs_f64(self.cli.stats.max(0.0));
        let until = (self.cli.duration > 0.0).then(|| Duration::from_secs_f64(self.cli.duration));
        let mut idle_mark = u64::MAX;
        while !self.bpf.exited() {
            // Until notify_complete below, this pass is work the BPF side must let finish.
            notify_busy(&mut self.bpf);
            let now = now_ns();
            self.m.passes.begin(now);
            // Never block on the registry: its poller can be preempted while it holds the lock (by a
            // higher class in full mode, where it runs in SCHED_FIFO; in --partial mode by the fair class,
            // which schedules it), and every decision would wait with it. When it is busy, the last
            // answers seen are used and notifications wait.
            let registry = self.registry.clone();
            let mut reg = registry.as_ref().and_then(|r| r.try_lock().ok());
            if let Some(r) = reg.as_mut() {
                r.poll_claims();
            }
            self.m.passes.phase("the registry", now_ns());
            self.read_events(reg.as_deref(), now);
            self.m.passes.phase("reading events", now_ns());
            self.drv.timers(now);
            // A task dispatched long ago that never came back was lost on the way: take it back, and
            // kick its CPU in case it does run there.
            for cpu in self.drv.overdue(now, OVERDUE_GRACE) {
                self.preempt.kick(cpu);
            }
            self.announced(reg.as_deref(), now);
            self.m.passes.phase("timers", now_ns());
            self.decide(now);
            self.m.passes.phase("deciding", now_ns());
            self.forecasts(reg.as_deref());
            self.notify(reg.as_deref_mut(), now);
            if let Some(r) = reg.as_deref() {
                if last_avail.elapsed() >= Duration::from_millis(100) {
                    last_avail = Instant::now();
                    let tids: Vec<u32> = r.registered_tids().collect();
                    for tid in tids {
                        if let Some(a) = self.drv.availability(tid as i32, now) {
                            r.set_availability(tid, &a);
                        }
                    }
                }
            }
            self.m.passes.phase("notifying", now_ns());
            if last_reap.elapsed() >= Duration::from_secs(1) {
                last_reap = Instant::now();
                // Every task the driver knows was queued here first: one question per task.
                let gone: HashSet<i32> = self.latest.keys().copied().filter(|&pid| !alive(pid)).collect();
                self.drv.reap(now, |pid| !gone.contains(&pid));
                self.latest.retain(|pid, _| !gone.contains(pid));
                let latest = &self.latest;
                self.asked_cache.retain(|pid, _| latest.contains_key(pid));
            }
            if !stats_every.is_zero() && last_stats.elapsed() >= stats_every {
                let secs = stats_then.elapsed().as_secs_f64();
                self.print_stats(
                    reg.as_deref(),
                    (self.drv.counters.dispatched - decisions_then) as f64 / secs,
                );
                decisions_then = self.drv.counters.dispatched;
                stats_then = Instant::now();
                last_stats = Instant::now();
            }
            let end = now_ns();
            self.m.passes.phase("reaping and statistics", end);
            self.m.passes.end(end);
            drop(reg);
            // scx_rustland_core runs this process first on any CPU that looks for work while we say
            // tasks are pending, before the queues our dispatches went to: when this pass read nothing and
            // decided nothing, step aside briefly so that a CPU takes what was dispatched to it.
            let busy = self.drv.counters.queued + self.drv.counters.blocked + self.drv.counters.dispatched;
            self.bpf.notify_complete(self.drv.runnable() as u64);
            if busy == idle_mark {
                std::thread::sleep(Duration::from_micros(100));
            }
            idle_mark = busy;
            if until.is_some_and(|u| start.elapsed() >= u) {
                break;
            }
        }
    }

    /// Blocks (our ring), then the kernel's queue; urgent wake-ups are acknowledged before the queue
    /// is read, since it holds them (they were queued before the tracepoint fired); one arriving later
    /// is kicked again.
    fn read_events(&mut self, reg: Option<&Registry>, now: u64) {
        self.m.stalls_lost += self.preempt.take_stalls(&mut self.m.stalls);
        // Read before the records: a stop read in this pass was preempted if its CPU was kicked since
        // its dispatch, which these counts tell.
        let kicks = self.preempt.kicks(self.ncpus);
        self.drv.set_kicks(&kicks);
        if let Some(since) = self.preempt.acknowledge() {
            let _ = self.m.wake_lat.record(now.saturating_sub(since) / 1000);
            self.m.woken_since = Some(self.m.woken_since.map_or(since, |w| w.min(since)));
        }
        for (pid, cpu, start, stop) in self.preempt.take_blocks() {
            // What the thread asks for now: a constraint it set before sleeping holds from the block.
            let asked = reg.and_then(|r| r.lookup(pid as u32)).map(Asked::from);
            if asked.is_some() {
                self.asked_cache.insert(pid, asked.clone());
            }
            self.drv.blocked(pid, cpu, start, stop, asked, now);
        }
        while let Ok(Some(task)) = self.bpf.dequeue_task() {
            let q = Queued {
                pid: task.pid,
                wakeup: task.flags & self.wakeup_flag != 0,
                start_ts: task.start_ts,
                stop_ts: task.stop_ts,
                exec_runtime: task.exec_runtime,
                weight: task.weight,
            };
            let asked = match reg {
                Some(r) => {
                    let a = r.lookup(task.pid as u32).map(Asked::from);
                    self.asked_cache.insert(task.pid, a.clone());
                    a
                }
                None => self.asked_cache.get(&task.pid).cloned().flatten(),
            };
            self.trace_queued(&task, &q, asked.as_ref(), now);
            // A task that may not use every CPU says so at its first record.
            let cpus = if !self.latest.contains_key(&task.pid) && (task.nr_cpus_allowed as usize) < self.ncpus
            {
                affinity_of(task.pid, self.ncpus)
            } else {
                None
            };
            self.drv.queued(&q, asked, cpus, now);
            self.latest.insert(task.pid, task);
        }
    }

    fn trace_queued(&self, task: &QueuedTask, q: &Queued, asked: Option<&Asked>, now: u64) {
        let debug = self.debug_level > 0;
        if self.debug_level > 1 || (debug && asked.is_some_and(|a| a.constraint.is_some())) {
            let c = asked.and_then(|a| a.constraint);
            tracing::debug!(
                "{now} queued {} ({}) cpu {} wakeup {} ran {} from {} to {} deadline in {:?} est {:?}",
                q.pid,
                task.comm_str(),
                task.cpu,
                q.wakeup,
                q.stop_ts.saturating_sub(q.start_ts),
                q.start_ts,
                q.stop_ts,
                c.map(|c| c.deadline as i64 - now as i64),
                c.and_then(|c| c.cpu_estimate)
            );
        }
    }

    /// Requests announced by sleeping threads: no slice may run past their latest start (with the
    /// registry busy, the last list is kept).
    fn announced(&mut self, reg: Option<&Registry>, now: u64) {
        let Some(r) = reg else { return };
        self.upcoming.clear();
        if self.cli.no_slice_cap {
            return;
        }
        for tid in r.registered_tids() {
            if let Some(asked) = r.lookup(tid).map(Asked::from) {
                self.upcoming.extend(self.drv.upcoming(tid as i32, &asked, now));
            }
        }
    }

    /// The threads holding a constraint get wake-up preemption: the BPF program kicks, at the
    /// wake-up of each, the CPU the policy would take for it as things stand after this pass's
    /// decisions (the core's forecast; with the registry busy, the last answers are kept).
    fn forecasts(&mut self, reg: Option<&Registry>) {
        let Some(r) = reg else { return };
        self.preempt.want.clear();
        for tid in r.registered_tids() {
            if r.lookup(tid).is_some_and(|a| a.constraint.is_some()) {
                let cpu = self.drv.forecast(tid as i32).map_or(-1, |c| c as i32);
                self.preempt.want.insert(tid, cpu);
            }
        }
        self.preempt.sync();
    }

    /// The decisions the core asks for now: kicks of busy CPUs, and dispatches, each to its CPU in
    /// the order the policy made them.
    fn decide(&mut self, now: u64) {
        let t0 = Instant::now();
        let actions = self.drv.decide(now, self.max_slice, &self.upcoming);
        let made = actions.iter().filter(|a| matches!(a, Action::Dispatch { .. })).count().max(1);
        let cost = t0.elapsed().as_nanos() as u64 / made as u64;
        for a in actions {
            match a {
                Action::Kick(cpu) => {
                    if self.debug_level > 0 {
                        tracing::debug!("{now} preempt CPU {cpu}");
                    }
                    if !self.cli.no_preempt {
                        self.preempt.kick(cpu);
                    }
                }
                Action::Dispatch { pid, cpu, slice, preemption } => {
                    let _ = self.m.cost.record(cost);
                    self.dispatch(pid, cpu, slice, preemption, now);
                }
            }
        }
    }

    fn dispatch(&mut self, pid: i32, cpu: CpuId, slice: u64, preemption: bool, now: u64) {
        if self.debug_level > 0 {
            let comm = self.latest.get(&pid).map(|t| t.comm_str()).unwrap_or_default();
            tracing::debug!("{now} dispatch {pid} ({comm}) on CPU {cpu} slice {slice}");
        }
        let Some(q) = self.latest.get(&pid) else { return };
        let mut d = DispatchedTask::new(q);
        d.cpu = cpu as i32;
        d.slice_ns = slice;
        // The BPF side orders each CPU's queue by vtime: the policy's order of decisions.
        self.seq += 1;
        d.vtime = self.seq;
        if let Err(e) = self.bpf.dispatch_task(&d) {
            eprintln!("scx_smart: dispatch of {pid} failed: {e}");
            return;
        }
        if preemption {
            self.preempt.dispatched_urgent(pid, now);
        }
        if self.preempt.listed.contains_key(&(pid as u32)) {
            if let Some(since) = self.m.woken_since.take() {
                let _ = self.m.wake_to_dispatch.record(now_ns().saturating_sub(since) / 1000);
            }
        }
    }

    /// Notifications go to the threads that still hold the constraint they concern.
    fn notify(&mut self, reg: Option<&mut Registry>, now: u64) {
        let notes = self.drv.notifications();
        if self.debug_level > 0 {
            for (pid, deadline, passed) in &notes {
                tracing::debug!(
                    "{now} notify {pid} deadline in {} passed {passed}",
                    *deadline as i64 - now as i64
                );
            }
        }
        self.pending_notes.extend(notes);
        if let Some(r) = reg {
            for (pid, deadline, passed) in self.pending_notes.drain(..) {
                if still_wanted(deadline, r.constraint(pid as u32)) {
                    let _ = r.notify(pid as u32, deadline, passed);
                } else {
                    self.m.superseded += 1;
                }
            }
        }
    }

    fn print_stats(&self, reg: Option<&Registry>, decisions_per_s: f64) {
        let c = &self.drv.counters;
        let m = &self.m;
        eprintln!(
            "scx_smart: runnable {} known {} decisions/s {:.0} cost p50 {} ns p99 {} ns max {} ns notifications {} (dropped as superseded {}) libsmart processes {} urgent wake-ups {} (to scheduler p50 {} us p99 {} us max {} us) blocks {} preemptions {}",
            self.drv.runnable(),
            self.drv.known(),
            decisions_per_s,
            m.cost.value_at_quantile(0.5),
            m.cost.value_at_quantile(0.99),
            m.cost.max(),
            c.notifications,
            m.superseded,
            reg.map_or(0, |r| r.processes().len()),
            self.preempt.counts().0,
            m.wake_lat.value_at_quantile(0.5),
            m.wake_lat.value_at_quantile(0.99),
            m.wake_lat.max(),
            c.blocked,
            c.preemptions,
        );
    }

    /// Unloads and prints what was measured.
    fn finish(mut self) -> Result<()> {
        let (wakeups, kicks) = self.preempt.counts();
        let (started, start_mean, start_max, started_late) = self.preempt.start_delays();
        self.m.stalls_lost += self.preempt.take_stalls(&mut self.m.stalls);
        self.m.stalls_lost += self.preempt.stalls_dropped;
        let blocks_lost = self.preempt.skel.maps.bss_data.as_ref().map_or(0, |b| b.nr_blocks_lost);
        let b = &mut self.bpf;
        let counts = [
            *b.nr_user_dispatches_mut(),
            *b.nr_kernel_dispatches_mut(),
            *b.nr_sched_congested_mut(),
            *b.nr_cancel_dispatches_mut(),
            *b.nr_bounce_dispatches_mut(),
            *b.nr_failed_dispatches_mut(),
        ];
        let kernel_side = format!(
            "dispatches from us {}, by the kernel itself {} (scheduler congested {}), cancelled as stale {}, \
             bounced to another CPU {}, failed {}; block records lost {blocks_lost}",
            counts[0], counts[1], counts[2], counts[3], counts[4], counts[5]
        );
        // An ejection (the kernel's watchdog, a BPF error) is an error, reported after what was measured
        // and what the driver believed, which tell why.
        let exit = self.bpf.shutdown_and_report();
        // Our program is detached after the scheduler: detaching waits for grace periods, which need
        // kernel threads to run, and while the scheduler is loaded only this process (now no longer
        // deciding) runs them: exits took 4-16 s in a guest, now 0.2-1 s. A kick from the program while
        // sched_ext unloads is dropped by the kernel (bypass mode), and after it is a spurious reschedule.
        drop(self.preempt);
        let uei = match &exit {
            Ok(u) => format!("{u:?}"),
            Err(e) => format!("ejected: {e}"),
        };
        let c = &self.drv.counters;
        let m = &self.m;
        eprintln!(
            "scx_smart: unloaded ({}); {} tasks admitted, {} decisions, decision cost p50 {} ns p99 {} ns, \
             {} notifications ({} dropped as superseded), {} unbilled stretches ({} ms), {} records of split stretches, {} bills clamped, \
             {} stale block records, {} dispatches taken back (lost), \
             {} blocks, {} preemptions asked, {} wake-ups of time-constrained threads, {} preempting kicks, \
             wake-up to scheduler p50 {} us p99 {} us max {} us, \
             wake-up to dispatch p50 {} us p99 {} us max {} us, \
             dispatch to start {} (mean {} us, max {} us, {} later than 1 ms)",
            uei,
            c.admitted,
            c.dispatched,
            m.cost.value_at_quantile(0.5),
            m.cost.value_at_quantile(0.99),
            c.notifications,
            m.superseded,
            c.unbilled,
            c.unbilled_ns / 1_000_000,
            c.split,
            c.clamped,
            c.stale_blocks,
            c.taken_back,
            c.blocked,
            c.preemptions,
            wakeups,
            kicks,
            m.wake_lat.value_at_quantile(0.5),
            m.wake_lat.value_at_quantile(0.99),
            m.wake_lat.max(),
            m.wake_to_dispatch.value_at_quantile(0.5),
            m.wake_to_dispatch.value_at_quantile(0.99),
            m.wake_to_dispatch.max(),
            started,
            start_mean / 1000,
            start_max / 1000,
            started_late,
        );
        eprintln!("scx_smart: the BPF side: {kernel_side}");
        let top: Vec<String> = self
            .drv
            .top_billed(8)
            .iter()
            .map(|(pid, ns, n)| format!("{pid} {:.0} ms in {n}", *ns as f64 / 1e6))
            .collect();
        eprintln!(
            "scx_smart: CPU billed to the policy, most first (pid, CPU, stretches): {}",
            top.join(", ")
        );
        let longest = m.stalls.spans().iter().map(|s| s.1 - s.0).max().unwrap_or(0);
        eprintln!(
            "scx_smart: machine stalls (timer expiries handled > 1 ms late): {}, {:.1} ms in all, longest {:.1} ms{}",
            m.stalls.spans().len(),
            m.stalls.total() as f64 / 1e6,
            longest as f64 / 1e6,
            if m.stalls_lost > 0 { format!(" ({} not recorded)", m.stalls_lost) } else { String::new() }
        );
        eprintln!("scx_smart: the loop: {}", m.passes.summary(now_ns()));
        if let Some(path) = &self.cli.stall_log {
            let text: String = m.stalls.spans().iter().map(|(a, b)| format!("{a} {b}\n")).collect();
            std::fs::write(path, text)
                .with_context(|| format!("writing the stall log {}", path.display()))?;
        }
        if exit.is_err() {
            let latest = &self.latest;
            // A command name is whatever the task set (prctl): shown as a terminal may show it.
            let name = |pid: i32| {
                latest.get(&pid).map(|t| diag::visible(&t.comm_str()).into_owned()).unwrap_or_default()
            };
            eprintln!(
                "scx_smart: what the driver believed at the ejection:\n{}",
                self.drv.describe(now_ns(), name)
            );
        }
        exit.map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::alive;

    #[test]
    fn alive_tells_a_live_thread_from_a_gone_one() {
        assert!(alive(std::process::id() as i32), "this process");
        assert!(!alive(0) && !alive(-1), "not task ids");
        assert!(!alive(i32::MAX), "above any pid_max");
        let (tx, rx) = std::sync::mpsc::channel();
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let t = std::thread::spawn(move || {
            tx.send(nix::unistd::gettid().as_raw()).unwrap();
            done_rx.recv().unwrap();
        });
        let tid = rx.recv().unwrap();
        assert!(alive(tid), "a thread of this process, while it runs");
        done_tx.send(()).unwrap();
        t.join().unwrap();
        // The join returns when the thread has cleared its id, a moment before the kernel frees it.
        let gone = (0..1000).any(|_| {
            std::thread::sleep(std::time::Duration::from_millis(1));
            !alive(tid)
        });
        assert!(gone, "thread {tid} still seen 1 s after it ended");
    }
}
